"""The ARC DSL (typed primitives over grids, programs as data) and its offline proposer.

>>> import numpy as np
>>> from atlas_actors.arc import Program
>>> p = Program.from_json(["flip_h", "x"])
>>> p(np.array([[1, 2]])).tolist()
[[2, 1]]
"""

from atlas_actors.arc.dsl import OPS, OpSpec, Program, compile_program
from atlas_actors.arc.proposer import DSLProposer
from atlas_actors.arc.solver import TaskSolver

__all__ = ["OPS", "DSLProposer", "OpSpec", "Program", "TaskSolver", "compile_program"]
