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
from atlas_actors.arc.environment import TrainInvariants, load_arc_task
from atlas_actors.arc.solver import Node, TaskSolver, _first_step, _similar, complexity
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


# A training task (hollow boxes become their filled interiors) where the simplest fit
# (lines drawn between the box cells) and a variant finishing with another step both
# answer the test input wrongly; only a fit that starts differently (filling each
# object's enclosed cells) is right.
BOXES = "d5d6de2d"
LINES = ("connect", "x", 2, 3, 0)
FILLED = ("map_objects", "x", ("fill_enclosed", "x", 3, 0), 8, 0, 0)


def test_second_solution_prefers_a_different_first_step() -> None:
    data = load_arc_task(_task(BOXES))
    assert data.test_outputs is not None
    s = TaskSolver(list(data.train), list(data.test_inputs))
    s.exact.clear()
    first = _node(s, ("keep_color", LINES, 12, 0))
    same_start = _node(s, ("recolor", LINES, ((2, 0),)))  # ends otherwise, starts alike
    other_start = _node(s, ("recolor", FILLED, ((2, 0),)))
    s.exact += [other_start, same_start, first]
    assert _first_step(first.expr) == _first_step(same_start.expr) == "connect"
    assert _first_step(other_start.expr) == "map_objects"
    # both are other readings of the first; the simpler one would come second by rank
    assert complexity(same_start.expr) < complexity(other_start.expr)
    assert _answer(same_start, s) != _answer(first, s) != _answer(other_start, s)
    ranked = s.solutions()
    assert [ranked[0], ranked[1]] == [first, other_start], [n.expr for n in ranked]
    truth = [np.asarray(t) for t in data.test_outputs]
    outs = [n.outs[len(s.targets) :] for n in ranked]
    right = [all(np.array_equal(o, t) for o, t in zip(os, truth, strict=True)) for os in outs]
    assert right[:2] == [False, True]
    assert not right[2]  # the variant of the first would have lost the task
    # with no other start among the fits, the first other reading still comes second
    s.exact.remove(other_start)
    assert s.solutions()[1] is same_start


def test_first_step_follows_the_first_grid_argument() -> None:
    assert _first_step("x") == "x"
    assert _first_step(("flip_v", "x")) == "flip_v"
    assert _first_step(("recolor", ("rot90", ("flip_h", "x")), ((1, 2),))) == "flip_h"
    assert _first_step(("hcat", ("rot90", "x"), ("flip_v", "x"))) == "rot90"


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
    from atlas_actors.environments.local import LocalEvaluator
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
    # attempt 2 is the test answer of the next exact program the proposer emits, the
    # environment's doubts aside: the second reading's answer here is a flat grid no
    # train output is like, so an undoubted exact answer after it goes first
    data = load_arc_task(task)
    inv = TrainInvariants.of(data.train)

    def doubted(answer: list[Any]) -> bool:
        return any(
            inv.doubts(x, np.asarray(g)) for x, g in zip(data.test_inputs, answer, strict=True)
        )

    others = [a for a in with_second[1:] if a != with_second[0]]
    assert doubted(others[0]) and not doubted(with_second[0])
    expected = next((a for a in others if not doubted(a)), others[0])
    assert [a["attempt_2"] for a in on.attempts] == expected != with_second[0]
    # without the second reading the same undoubted exact answer is reached by the
    # mutation search (on this task doubts, not the second reading, decide attempt 2;
    # the proposer-level test above checks the emission order itself)
    assert [a["attempt_2"] for a in off.attempts] == expected
