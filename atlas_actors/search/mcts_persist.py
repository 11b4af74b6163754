"""MCTS persistence: a search's tree as JSON (:class:`~atlas_actors.search.tree.SearchTree`),
written atomically after every iteration and read back to resume (see
:mod:`atlas_actors.search.mcts`); and the root a new search starts from."""

from __future__ import annotations

import contextlib
import os
import tempfile
from pathlib import Path

import anyio
import anyio.to_thread
from pydantic import ValidationError

from atlas_actors.errors import ConfigError
from atlas_actors.search.base import Transition
from atlas_actors.search.mcts_run import SearchRun, cut
from atlas_actors.search.mcts_select import TreePolicy
from atlas_actors.search.tree import MCTSNode, SearchTree, state_key, verdict_key


class TreeFile:
    """Where one search's tree is kept (``path``; None: nowhere, the counters are still
    brought up to date on :meth:`save`)."""

    def __init__(self, path: Path | None) -> None:
        self.path = path

    async def start(self, run: SearchRun) -> None:
        """Resume ``run`` from the file when it exists; else grow its root (the task's
        initial state, verified and valued) and save."""
        run.usage_base = run.usage_now()
        if self.path is not None and self.path.exists():
            self._load(run, await anyio.to_thread.run_sync(self.path.read_text))
            return
        root_tr = Transition.model_validate(await run.stepper.root(run.task))
        outcome = await run.verdict(root_tr.solution, root_tr.state)
        key = state_key(root_tr.solution, root_tr.state)
        root = MCTSNode(
            id=0,
            state=root_tr.state,
            solution=root_tr.solution,
            key=key,
            observation=cut(root_tr.observation, run.cfg.max_observation_chars),
            done=root_tr.done,
            outcome=outcome,
        )
        root.estimate = await run.estimate(key, run.candidate(root))
        run.nodes.append(root)
        run.table[key] = 0
        TreePolicy.backpropagate(run.nodes, 0, root.value)
        await self.save(run)

    def _load(self, run: SearchRun, text: str) -> None:
        try:
            tree = SearchTree.model_validate_json(text)
        except ValidationError as exc:
            raise ConfigError(f"tree_path {self.path}: not a search tree ({exc})") from None
        if tree.task_id != run.task.id:
            raise ConfigError(
                f"tree_path {self.path}: the tree is for task {tree.task_id!r}, not {run.task.id!r}"
            )
        if tree.seed != run.seed:
            raise ConfigError(
                f"tree_path {self.path}: the tree was grown with seed {tree.seed}, "
                f"not {run.seed}; resume with the same seed"
            )
        if not tree.nodes:
            raise ConfigError(f"tree_path {self.path}: the tree has no root")
        tree.config = run.cfg.model_dump(mode="json")
        tree.stopped = None
        tree.final = None
        run.tree = tree
        run.prior_seconds = tree.stats.seconds
        run.prior_calls = tree.stats.llm_calls
        run.prior_cost = tree.stats.llm_cost
        for node in tree.nodes:
            run.table.setdefault(node.key, node.id)
            if node.outcome is not None:
                run.verdicts.done.setdefault(verdict_key(node.solution, node.state), node.outcome)
            if node.estimate is not None:
                run.estimates.done.setdefault(node.key, node.estimate)
        run.verdicts.done.update(tree.outcomes)

    async def save(self, run: SearchRun) -> None:
        """Bring the counters up to date and write the tree (with the verdicts of
        solutions seen outside it)."""
        run.update_stats()
        if self.path is None:
            return
        in_tree = {verdict_key(n.solution, n.state) for n in run.nodes}
        run.tree.outcomes = {k: o for k, o in run.verdicts.done.items() if k not in in_tree}
        text = run.tree.model_dump_json()
        await anyio.to_thread.run_sync(write_atomic, self.path, text)


def write_atomic(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` atomically (a temporary file, then ``os.replace``)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
