"""More DSL ops (shape): primitives, their signatures and parameter generators.

Registered into :data:`atlas_actors.arc.dsl.OPS` (via ``OP_TABLE``) and
:data:`atlas_actors.arc.infer.GENERATORS` (via ``GENERATORS``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    from atlas_actors.arc.infer import Ctx

Grid = np.ndarray[Any, Any]
Args = tuple[Any, ...]

OP_TABLE: list[tuple[str, Callable[..., Any], tuple[Any, ...]]] = []
"""(name, primitive, argument kinds) as in :func:`atlas_actors.arc.dsl._ops`."""

GENERATORS: dict[str, Callable[[Ctx], Iterator[Args]]] = {}
"""op name -> parameter generator (see :mod:`atlas_actors.arc.infer`)."""
