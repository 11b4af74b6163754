"""DSLProposer (atlas_actors.arc.proposer): valid and deterministic proposals, mutation,
program keys, real tasks."""

from __future__ import annotations

import random
from typing import Any

import numpy as np
import pytest

from atlas_actors.arc import DSLProposer, Program, compile_program, proposer
from atlas_actors.search.base import Proposer
from atlas_actors.types import Candidate, Check, Outcome, Task

REAL = ["007bbfb7", "0520fde7", "1cf80156", "3c9b0459", "25ff71a9", "08ed6ac7"]


def grids_task(tid: str, pairs: list[tuple[Any, Any]], tests: list[Any]) -> Task:
    return Task(
        id=tid,
        domain="arc",
        context={
            "grids": {
                "train": [{"input": i, "output": o} for i, o in pairs],
                "test": [{"input": t} for t in tests],
            }
        },
    )


def arc_task(tid: str) -> Task:
    return Task(id=tid, domain="arc", context={"arc_task_id": tid, "split": "train"})


def train_pairs(task: Task) -> list[tuple[np.ndarray[Any, Any], np.ndarray[Any, Any]]]:
    from atlas_actors.arc.environment import load_arc_task

    return load_arc_task(task).train


def fitness(sol: Any, pairs: list[tuple[Any, Any]]) -> tuple[float, Outcome]:
    fn = compile_program(sol)
    rows = []
    for i, (x, y) in enumerate(pairs):
        try:
            got = fn(x)
            ok = got.shape == y.shape
            sim = float((got == y).mean()) if ok else 0.0
            rows.append(
                {"index": i, "exact": sim == 1.0, "similarity": sim, "shape_ok": ok, "error": None}
            )
        except Exception as exc:
            rows.append(
                {
                    "index": i,
                    "exact": False,
                    "similarity": 0.0,
                    "shape_ok": False,
                    "error": str(exc),
                }
            )
    n = len(pairs)
    fit = (sum(r["exact"] for r in rows) + sum(r["similarity"] for r in rows) / n) / (n + 1)
    checks = [
        Check(
            name=f"train {r['index']}",
            passed=r["exact"],
            similarity=r["similarity"],
            well_formed=r["shape_ok"],
            error=r["error"],
        )
        for r in rows
    ]
    return fit, Outcome(success=all(r["exact"] for r in rows), partial_score=fit, checks=checks)


def cand(sol: Any, pairs: list[tuple[Any, Any]]) -> Candidate:
    fit, out = fitness(sol, pairs)
    return Candidate(solution=sol, outcome=out, fitness=fit)


def test_implements_the_proposer_protocol() -> None:
    p = DSLProposer()
    assert isinstance(p, Proposer)
    assert 16 <= p.proposals_per_call <= 64


@pytest.mark.parametrize("tid", ["1f85a75f", "05f2a901", "0a938d79"])
async def test_every_proposal_is_valid_and_runs(tid: str) -> None:
    """Property: over several seeds, every emitted program compiles, runs on all train
    inputs and test inputs without raising, and returns a valid grid; nothing repeats."""
    from atlas_actors.arc.environment import load_arc_task

    task = arc_task(tid)
    data = load_arc_task(task)
    inputs = [x for x, _ in data.train] + list(data.test_inputs)
    for seed in range(2):
        prop = DSLProposer(initial_budget=400, mutate_budget=60)
        rng = random.Random(seed)
        seen: set[str] = set()
        sols = await prop.initial(task, 40, rng)
        pool = [cand(s, data.train) for s in sols]
        for _ in range(3):
            pool.sort(key=lambda c: -c.fitness)
            sols += (
                m := await prop.mutate(task, pool[rng.randrange(min(5, len(pool)))], 16, rng, 0.5)
            )
            pool += [cand(s, data.train) for s in m]
            sols += (x := await prop.crossover(task, pool[0], pool[-1], 16, rng))
            pool += [cand(s, data.train) for s in x]
        assert sols
        for s in sols:
            assert not isinstance(s, str)  # a str solution would be read as Python source
            key = Program.from_json(s).canonical()
            assert key not in seen
            seen.add(key)
            fn = compile_program(s)
            for g in inputs:
                out = fn(g)
                assert out.ndim == 2 and 1 <= out.shape[0] <= 30 and 1 <= out.shape[1] <= 30
                assert out.min() >= 0 and out.max() <= 9


async def test_deterministic_for_a_seed() -> None:
    task = arc_task("1f85a75f")
    pairs = train_pairs(task)

    async def run() -> list[Any]:
        # generous wall-clock caps: only the op budgets may bound the work here
        prop = DSLProposer(
            initial_budget=400, mutate_budget=60, initial_seconds=120, step_seconds=120
        )
        rng = random.Random(7)
        init = await prop.initial(task, 30, rng)
        par = cand(init[3], pairs)
        mut = await prop.mutate(task, par, 16, rng, 0.5)
        xo = await prop.crossover(task, par, cand(init[5], pairs), 16, rng)
        return [init, mut, xo]

    assert await run() == await run()


class _NoClock:
    """A ``time`` module whose clocks must not be read."""

    def __getattr__(self, name: str) -> Any:
        raise AssertionError(f"time.{name} read in a run bounded by op applications alone")


async def test_a_budgeted_proposer_reads_no_clock(monkeypatch: pytest.MonkeyPatch) -> None:
    """Without CPU-time nets and a time limit (the CLI's ``--budget`` run), no clock is
    read, so what the proposer returns cannot depend on the machine's load."""
    from atlas_actors.arc import domain, solver

    task = arc_task("1f85a75f")
    pairs = train_pairs(task)
    prop = domain.make_proposer(task, cpu_limits=False, time_limit_s=None)
    assert isinstance(prop, DSLProposer)
    prop.initial_budget, prop.mutate_budget = 600, 100
    monkeypatch.setattr(solver, "time", _NoClock())
    monkeypatch.setattr(proposer, "time", _NoClock())
    rng = random.Random(1)
    init = await prop.initial(task, 20, rng)
    await prop.mutate(task, cand(init[2], pairs), 8, rng, 0.5)
    await prop.crossover(task, cand(init[2], pairs), cand(init[4], pairs), 8, rng)


async def test_enumeration_steps_end_at_the_time_limit() -> None:
    """With a time limit, the proposer's enumeration stops where the limit passes (the
    search checks it only between calls)."""
    task = arc_task("1f85a75f")
    late = DSLProposer(initial_budget=2000, time_limit=1e-9)
    await late.initial(task, 8, random.Random(0))
    assert late.entry(task).solver.applications == 0
    free = DSLProposer(initial_budget=2000, time_limit=3600)
    await free.initial(task, 8, random.Random(0))
    assert free.entry(task).solver.applications >= 2000


async def test_mutate_uses_pair_feedback_and_repairs_a_wrong_last_op() -> None:
    """A parent whose last op breaks the shapes gets sibling replacements: the right op
    on the same input (here: crop the largest object, then mirror it)."""
    pairs = [
        ([[0, 0, 0, 0], [0, 1, 2, 0], [0, 3, 4, 0]], [[2, 1], [4, 3]]),
        ([[5, 6, 0], [7, 8, 0], [0, 0, 0]], [[6, 5], [8, 7]]),
    ]
    task = grids_task("feedback-toy", pairs, [[[0, 0], [1, 2]]])
    data = [(np.array(i), np.array(o)) for i, o in pairs]
    prop = DSLProposer(initial_budget=0, mutate_budget=0)
    parent = cand(["upscale", ["crop_nonbg", "x", 0], 2, 2], data)
    assert parent.outcome is not None
    assert not any(c.well_formed for c in parent.outcome.checks)
    kids = await prop.mutate(task, parent, 32, random.Random(0), 0.3)
    assert ["flip_h", ["crop_nonbg", "x", 0]] in kids
    assert fitness(kids[0], data)[1].success  # exact children come first


async def test_constructed_colour_map_task_is_solved_by_initial() -> None:
    pairs = [([[1, 2, 0]], [[5, 2, 0]]), ([[0, 1, 1], [2, 2, 1]], [[0, 5, 5], [2, 2, 5]])]
    task = grids_task("cmap-toy", pairs, [[[1, 0, 2]]])
    sols = await DSLProposer().initial(task, 10, random.Random(0))
    assert sols[0] == ["recolor", "x", [[1, 5]]]


async def test_constructed_scale_task_is_solved_by_initial() -> None:
    pairs = [
        ([[1, 2]], [[1, 1, 2, 2], [1, 1, 2, 2]]),
        ([[3], [0]], [[3, 3], [3, 3], [0, 0], [0, 0]]),
    ]
    task = grids_task("scale-toy", pairs, [[[4, 4]]])
    sols = await DSLProposer().initial(task, 10, random.Random(0))
    assert sols[0] == ["upscale", "x", 2, 2]


@pytest.mark.parametrize("tid", REAL)
async def test_real_training_tasks_are_solved(tid: str) -> None:
    """Geometry, colour, crop, tiling/scale and object tasks: initial + a few mutations."""
    from atlas_actors.arc.environment import load_arc_task

    task = arc_task(tid)
    data = load_arc_task(task)
    prop = DSLProposer()
    rng = random.Random(0)
    pool = [cand(s, data.train) for s in await prop.initial(task, 80, rng)]
    for _ in range(8):
        if any(c.outcome and c.outcome.success for c in pool):
            break
        pool.sort(key=lambda c: -c.fitness)
        pool += [cand(s, data.train) for s in await prop.mutate(task, pool[0], 32, rng, 0.3)]
    best = next(c for c in pool if c.outcome and c.outcome.success)
    fn = compile_program(best.solution)
    assert data.test_outputs is not None
    for x, y in zip(data.test_inputs, data.test_outputs, strict=True):
        assert np.array_equal(fn(x), y)


def test_a_program_failing_validation_is_dropped_with_a_warning(
    caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An enumerated program whose arguments its op's signature rejects (a generator
    bug) is not proposed, and the drop is logged once per op, not lost silently."""
    from atlas_actors.arc import proposer as proposer_mod

    monkeypatch.setattr(proposer_mod, "_REPORTED", set())
    p = DSLProposer()
    e = p.entry(grids_task("bad", [([[1, 0]], [[0, 1]])], [[[1, 0]]]))
    out: list[Any] = []
    # table entries are [key, colour]: 1861 is no colour
    bad = ("shift_by_color", "x", ((1, 1861),), 0)
    with caplog.at_level("WARNING", logger="atlas_actors.arc.proposer"):
        p._emit(e, bad, out)
        p._emit(e, ("shift_by_color", "x", ((2, 1862),), 0), out)
        p._emit(e, ("shift_by_color", "x", ((1861, 1),), 0), out)
    assert out == [["shift_by_color", "x", [[1861, 1]], 0]]
    warned = [r for r in caplog.records if "fails validation" in r.getMessage()]
    assert len(warned) == 1 and "shift_by_color" in warned[0].getMessage()


def test_program_keys_are_canonical_memoised_and_take_unhashable_programs() -> None:
    expr = ("recolor", ("rigid", "x", 1), ((1, 2),))
    assert proposer._key(expr) == '["recolor",["rigid","x",1],[[1,2]]]'
    assert proposer._key(expr) is proposer._key(expr)  # the memo's answer
    assert proposer._key(["recolor", ["rigid", "x", 1], [[1, 2]]]) == proposer._key(expr)
    assert proposer._key(("no_such_op", "x")) == "invalid"


def test_the_arc_options_reach_the_dsl_proposer() -> None:
    from atlas_actors.arc import domain

    task = arc_task("1f85a75f")
    opts = domain.ARCOptions(cpu_limits=False, time_limit_s=3.0, check_views=True)
    prop = domain.make_proposer(task, **opts.model_dump())
    assert isinstance(prop, DSLProposer)
    assert prop.step_seconds == float("inf") and prop.time_limit == 3.0
    assert prop.entry(task).solver.check_views
    default = domain.make_proposer(task)
    assert isinstance(default, DSLProposer)
    assert default.step_seconds < float("inf") and not default.entry(task).solver.check_views


def object_task(tid: str) -> tuple[Task, list[tuple[Any, Any]]]:
    """Crop the object, scale it by 2, mirror it (three steps)."""
    inputs = [
        [[0, 0, 0, 0], [0, 1, 2, 0], [0, 3, 4, 0], [0, 0, 0, 0]],
        [[5, 6, 0], [7, 8, 0], [0, 0, 0]],
        [[0, 0, 0], [0, 0, 0], [0, 2, 9], [0, 9, 2]],
    ]
    pairs = []
    for g in inputs:
        a = np.array(g)
        rows, cols = np.nonzero(a)
        obj = a[rows.min() : rows.max() + 1, cols.min() : cols.max() + 1]
        pairs.append((g, np.kron(obj, np.ones((2, 2), dtype=int))[:, ::-1].tolist()))
    task = grids_task(tid, pairs, [[[0, 3, 1], [0, 1, 1]]])
    return task, [(np.array(i), np.array(o)) for i, o in pairs]


def steps(expr: Any) -> list[str]:
    """The op names of a chain program, innermost first."""
    out: list[str] = []
    while isinstance(expr, list):
        out.append(expr[0])
        expr = expr[1]
    return out[::-1]


async def test_mutate_replaces_an_inner_step_by_an_enumerated_one() -> None:
    """A three-step parent whose middle step is wrong: mutation replaces that step by an
    op enumerated from the state before it and keeps the step above; the enumeration
    itself gets no budget, so only the step replacement can find the program."""
    task, data = object_task("inner-step-toy")
    truth = ["flip_h", ["upscale", ["crop_nonbg", "x", 0], 2, 2]]
    assert fitness(truth, data)[1].success
    parent = cand(["flip_h", ["transpose", ["crop_nonbg", "x", 0]]], data)
    kids = await DSLProposer(initial_budget=0, mutate_budget=0, held_out_budget=0).mutate(
        task, parent, 32, random.Random(0), 0.3
    )
    assert truth in kids
    assert fitness(kids[0], data)[1].success  # exact children come first
    for kid in kids:  # every child is valid and runs
        compile_program(kid)(data[0][0])
    alone = DSLProposer(initial_budget=0, mutate_budget=0, held_out_budget=0, evolve=False)
    assert truth not in await alone.mutate(task, parent, 32, random.Random(0), 0.3)


def test_crossover_splices_a_prefix_of_one_parent_under_a_suffix_of_the_other() -> None:
    a = ("flip_h", ("crop_nonbg", "x", 0))
    b = ("upscale", ("transpose", "x"), 2, 2)
    rng = random.Random(0)
    kids = proposer._grafts(b, a, rng, 100) + proposer._grafts(a, b, rng, 100)
    # a's first step under b's last step, b's first step under a's last, one on the other
    assert ("upscale", ("crop_nonbg", "x", 0), 2, 2) in kids
    assert ("flip_h", ("transpose", "x")) in kids
    assert ("upscale", ("flip_h", ("crop_nonbg", "x", 0)), 2, 2) in kids
    for kid in kids:
        Program(kid)  # each one validates


async def test_crossover_of_two_parents_finds_their_splice() -> None:
    """Neither parent fits; the lower two steps of one under the last step of the other
    do, and crossover returns that splice first."""
    task, data = object_task("splice-toy")
    a = cand(["flip_h", ["transpose", "x"]], data)
    b = cand(["transpose", ["upscale", ["crop_nonbg", "x", 0], 2, 2]], data)
    assert not (a.outcome and a.outcome.success) and not (b.outcome and b.outcome.success)
    prop = DSLProposer(initial_budget=0, mutate_budget=0, held_out_budget=0)
    kids = await prop.crossover(task, a, b, 32, random.Random(0))
    splice = ["flip_h", ["upscale", ["crop_nonbg", "x", 0], 2, 2]]
    assert steps(splice) == steps(b.solution)[:2] + steps(a.solution)[-1:]
    assert kids[0] == splice
    assert fitness(splice, data)[1].success


async def test_the_op_budget_caps_every_call() -> None:
    """With ``max_applications``, a task's calls stop proposing once the budget is spent;
    the count covers the enumeration and the mutations' own ops."""
    task = arc_task("1b60fb0c")
    pairs = train_pairs(task)
    inf = float("inf")
    prop = DSLProposer(
        max_applications=3000, initial_seconds=inf, step_seconds=inf, second_seconds=inf
    )
    rng = random.Random(0)
    init = await prop.initial(task, 40, rng)
    assert init and prop.applications(task.id) > 0
    parent = max((cand(s, pairs) for s in init), key=lambda c: c.fitness)
    for _ in range(20):
        if prop.applications(task.id) >= 3000:
            break
        before = prop.applications(task.id)
        await prop.mutate(task, parent, 16, rng, 0.5)
        assert prop.applications(task.id) > before
    spent = prop.applications(task.id)
    assert spent >= 3000
    assert await prop.mutate(task, parent, 16, rng, 0.5) == []
    assert await prop.crossover(task, parent, parent, 16, rng) == []
    assert prop.applications(task.id) == spent
    assert prop.report(task.id) == {"op_applications": float(spent)}


@pytest.mark.parametrize("evolve", [True, False])
async def test_mind_evolution_with_an_op_budget_is_deterministic(evolve: bool) -> None:
    from atlas_actors.config import MindEvolutionConfig
    from atlas_actors.environments.local import LocalEvaluator
    from atlas_actors.search.solve import solve_task

    task = arc_task("1b60fb0c")
    inf = float("inf")

    async def run() -> Any:
        prop = DSLProposer(
            evolve=evolve,
            max_applications=4000,
            initial_seconds=inf,
            step_seconds=inf,
            second_seconds=inf,
        )
        evaluator = LocalEvaluator()
        try:
            r = await solve_task(
                task, evaluator, config=MindEvolutionConfig(generations=2), seed=3, proposer=prop
            )
        finally:
            await evaluator.aclose()
        return r.solution, r.attempts, r.evaluations, r.stats["op_applications"]

    first = await run()
    assert first[3] >= 4000
    assert await run() == first


def test_the_evolve_option_reaches_the_offline_proposer() -> None:
    from atlas_actors.cli import build_parser
    from atlas_actors.cli.arc import arc_options
    from atlas_actors.environments.registry import get_domain
    from atlas_actors.errors import ConfigError

    spec = get_domain("arc")
    assert spec is not None
    task = arc_task("007bbfb7")
    for flags, evolve in (([], False), (["--evolve"], True), (["--no-evolve"], False)):
        options = arc_options(build_parser().parse_args(["arc", *flags]))
        assert ("evolve" in options) == bool(flags)  # a default run's settings unchanged
        prop = spec.make_proposer(task, None, **spec.check_options(options))
        assert isinstance(prop, DSLProposer) and prop.evolve is evolve
    with pytest.raises(ConfigError, match="evolve"):
        spec.check_options({"evolve": "sometimes"})
