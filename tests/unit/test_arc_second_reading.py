"""The second attempt from a second reading of the train pairs.

When the programs that fit every train pair are one reading of them, the solver
searches on for an exact program that reads them differently (a different test answer,
not the first program with steps added or ending in the same step). The first solution
stays first; the alternative is ranked second, so it becomes attempt 2."""

from __future__ import annotations

import random
from typing import Any

import numpy as np
import pytest

from atlas_actors.arc import DSLProposer, compile_program
from atlas_actors.arc.solver import Node, TaskSolver, _similar
from atlas_actors.environments.arc import load_arc_task
from atlas_actors.types import Task

# A train pair symmetric about its vertical axis: flipping it left-right changes
# nothing, so "flip up-down" and "rotate 180" both fit it, but they answer the
# asymmetric test input differently.
X = np.array([[1, 2, 1], [0, 3, 0]])
Y = np.array([[0, 3, 0], [1, 2, 1]])
T = np.array([[1, 2, 3], [4, 5, 6]])


def _node(solver: TaskSolver, expr: Any) -> Node:
    node = solver.node_for(expr)
    assert node is not None and node.score == 1.0, expr
    node.exact = True
    return node


def _answer(node: Node, solver: TaskSolver) -> bytes:
    return b"".join(o.tobytes() for o in node.outs[len(solver.targets) :])


def test_second_solution_is_a_different_reading_with_a_different_answer() -> None:
    s = TaskSolver([(X, Y)], [T])
    s.exact.clear()
    first = _node(s, ("flip_v", "x"))  # one op: ranked first
    extended = _node(s, ("flip_h", ("flip_h", ("flip_v", "x"))))  # first, steps added
    # a different program, but the same answer on every grid: no use as attempt 2
    same_answer = _node(s, ("flip_h", ("rot180", "x")))
    other = _node(s, ("rot180", ("flip_h", ("flip_h", "x"))))  # a different reading
    s.exact += [other, same_answer, extended, first]
    ranked = s.solutions()
    assert ranked[0] is first
    assert ranked[1] is other, [n.expr for n in ranked]
    assert _answer(same_answer, s) == _answer(first, s)
    assert _answer(other, s) != _answer(first, s)
    assert s.has_alternative()


def test_no_alternative_when_every_fit_is_the_same_reading() -> None:
    s = TaskSolver([(X, Y)], [T])
    s.exact.clear()
    s.exact += [_node(s, ("flip_v", "x")), _node(s, ("flip_h", ("flip_h", ("flip_v", "x"))))]
    assert not s.has_alternative()
    before = s.applications
    assert not s.search_alternative(0, 1.0)  # no budget: gives up at once
    assert s.applications == before
    assert s.solutions()[0].expr == ("flip_v", "x")  # pinned first


def test_search_alternative_spends_no_budget_without_a_solution() -> None:
    s = TaskSolver([(X, np.array([[7]]))], [T])
    s.exact.clear()
    before = s.applications
    assert not s.search_alternative(5000, 5.0)
    assert s.applications == before


def _task(tid: str) -> Task:
    return Task(id=tid, domain="arc", context={"arc_task_id": tid, "split": "train"})


# A training task whose first solution is one reading (splitting at a separator)
# while another (a crop inside a split half) is found only by searching on.
REAL = "2dc579da"


@pytest.mark.slow
def test_search_alternative_keeps_the_first_and_finds_a_second_reading() -> None:
    data = load_arc_task(_task(REAL))
    s = TaskSolver(list(data.train), list(data.test_inputs))
    s.search(10000, max_seconds=30.0)
    assert s.exact, "precondition: the enumeration solves the task"
    assert not s.has_alternative(), "precondition: one reading after the first search"
    first = s.solutions()[0]
    spent = s.applications
    assert s.search_alternative(20000, 60.0)
    ranked = s.solutions()
    assert ranked[0] is first
    assert _answer(ranked[1], s) != _answer(first, s)
    assert not _similar(ranked[1].expr, first.expr)
    assert s.applications > spent
    # a second call finds it already there and spends nothing
    spent = s.applications
    assert s.search_alternative(20000, 60.0)
    assert s.applications == spent


def _exact_answers(prop: DSLProposer, task: Task) -> list[list[Any]]:
    """The test answers of the emitted programs that fit every train pair, in order."""
    data = load_arc_task(task)
    sols = prop.initial_sync(task, 20, random.Random(0))
    answers = []
    for sol in sols:
        fn = compile_program(sol)
        if all(np.array_equal(fn(x), y) for x, y in data.train):
            answers.append([np.asarray(fn(t)).tolist() for t in data.test_inputs])
    return answers


@pytest.fixture(scope="module")
def with_second() -> list[list[Any]]:
    return _exact_answers(DSLProposer(second_budget=20000, second_seconds=60.0), _task(REAL))


@pytest.mark.slow
def test_proposer_emits_the_second_reading_second(with_second: list[list[Any]]) -> None:
    without = _exact_answers(DSLProposer(second_budget=0), _task(REAL))
    assert without and with_second
    assert with_second[0] == without[0]  # attempt 1 unchanged
    assert len(with_second) > 1 and with_second[1] != with_second[0]


@pytest.mark.slow
async def test_solve_task_takes_attempt_two_from_the_second_reading(
    with_second: list[list[Any]],
) -> None:
    from atlas_actors.config import MindEvolutionConfig
    from atlas_actors.environments.base import LocalEvaluator
    from atlas_actors.search.solve import solve_task

    task = _task(REAL)
    cfg = MindEvolutionConfig(generations=2, population_size=8, islands=2, max_evaluations=200)
    ev = LocalEvaluator()
    off = await solve_task(task, ev, config=cfg, seed=1, proposer=DSLProposer(second_budget=0))
    on = await solve_task(
        task, ev, config=cfg, seed=1, proposer=DSLProposer(second_budget=20000, second_seconds=60.0)
    )
    await ev.aclose()
    assert off.train_fitness == on.train_fitness == 1.0
    assert on.solution == off.solution  # the same first program
    assert on.attempts and off.attempts
    assert [a["attempt_1"] for a in on.attempts] == [a["attempt_1"] for a in off.attempts]
    # attempt 2 is the test answer of the second exact program the proposer emits
    assert [a["attempt_2"] for a in on.attempts] == with_second[1] != with_second[0]
    assert [a["attempt_2"] for a in off.attempts] != with_second[1]
