"""Sandboxes for untrusted code: bubblewrap (one script, or a fast ARC program runner)
and Docker containers (:mod:`atlas_actors.sandbox.docker`)."""

from atlas_actors.sandbox.bubblewrap import (
    SandboxResult,
    run_in_bubblewrap,
    run_in_bubblewrap_sync,
)
from atlas_actors.sandbox.runner import ProgramRunner, RunResult

__all__ = [
    "ProgramRunner",
    "RunResult",
    "SandboxResult",
    "run_in_bubblewrap",
    "run_in_bubblewrap_sync",
]
