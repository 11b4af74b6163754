from __future__ import annotations

import pickle

import pytest
from pydantic import ValidationError

from atlas_actors import Candidate, Experience, Outcome, RoutingDecision, Task
from atlas_actors.types import TaskResult

TASK = Task(id="t1", domain="arc", description="d", context={"arc_task_id": "007bbfb7"})
OUTCOME = Outcome(success=False, partial_score=0.25, feedback="pair 0: wrong", details={"k": [1]})

SAMPLES = [
    TASK,
    OUTCOME,
    Candidate(
        solution=[["rot90"]],
        outcome=OUTCOME,
        fitness=0.25,
        origin="crossover",
        parents=["a", "b"],
        generation=3,
        island=2,
        cost={"evaluations": 1.0},
    ),
    Experience(task=TASK, solution="def transform(g): return g", outcome=OUTCOME),
    RoutingDecision(strategy="mcts", reason="swe domain", similarity=0.5),
    TaskResult(task_id="t1", solved=None, attempts=[{"attempt_1": [[1]], "attempt_2": [[2]]}]),
]


@pytest.mark.parametrize("obj", SAMPLES, ids=lambda o: type(o).__name__)
def test_json_and_pickle_round_trip(obj: object) -> None:
    cls = type(obj)
    assert cls.model_validate_json(obj.model_dump_json()) == obj  # type: ignore[attr-defined]
    assert pickle.loads(pickle.dumps(obj)) == obj


def test_partial_score_is_bounded() -> None:
    with pytest.raises(ValidationError, match="partial_score"):
        Outcome(success=True, partial_score=1.5)


def test_unknown_fields_and_bad_enums_are_refused() -> None:
    with pytest.raises(ValidationError, match="colour"):
        Task(id="x", colour="red")  # type: ignore[call-arg]
    with pytest.raises(ValidationError, match="strategy"):
        RoutingDecision(strategy="guess")  # type: ignore[arg-type]
    with pytest.raises(ValidationError, match="origin"):
        Candidate(solution=1, origin="magic")  # type: ignore[arg-type]
    with pytest.raises(ValidationError, match="id"):
        Task(id="")


def test_candidates_get_distinct_ids() -> None:
    assert Candidate(solution=1).id != Candidate(solution=1).id
