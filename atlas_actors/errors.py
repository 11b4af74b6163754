"""Exceptions raised by atlas_actors.

A failed verification is *data* (an :class:`~atlas_actors.types.Outcome` with
``success=False``); only bad input and infrastructure faults raise. Every exception
derives from :class:`AtlasError` and also from the matching builtin, so callers can
catch either ``AtlasError`` or e.g. ``ValueError`` / ``TimeoutError``.

Hierarchy::

    AtlasError
    ├── ConfigError(ValueError)             bad configuration or CLI input
    ├── InvalidTaskError(ValueError)        a task that cannot be loaded
    │   └── InvalidGridError                a malformed ARC grid
    ├── InvalidSolutionError(ValueError)    a solution of the wrong type or shape
    ├── EnvironmentNotReady(RuntimeError)   verify()/step() before reset()
    ├── SandboxError(RuntimeError)          the sandbox itself failed
    │   ├── BubblewrapNotFound(FileNotFoundError)
    │   ├── SandboxTimeout(TimeoutError)
    │   ├── RuntimeUnavailable              the in-container runtime cannot start
    │   └── RuntimeDied                     the in-container runtime ended during a call
    ├── DockerError(RuntimeError)           the Docker engine failed or is unreachable
    │   ├── DockerTimeout(TimeoutError)
    │   ├── ImageMissing(LookupError)       an image is absent and may not be pulled
    │   └── ImagePullError                  an image could not be pulled (after retries)
    ├── LLMError(RuntimeError)              an LLM endpoint failed after retries
    │   └── LLMTimeout(TimeoutError)
    ├── ActorError(RuntimeError)            an actor pool could not complete work
    └── MemoryStoreError(RuntimeError)      the experience store failed
        └── CorruptMemoryError              a memory file that is corrupt or unreadable
"""

from __future__ import annotations


class AtlasError(Exception):
    """Root of every exception atlas_actors raises on purpose."""


class ConfigError(AtlasError, ValueError):
    """A configuration value or command-line argument is invalid."""


class InvalidTaskError(AtlasError, ValueError):
    """A task cannot be loaded: unknown id, missing context, malformed data."""


class InvalidGridError(InvalidTaskError):
    """An ARC grid is malformed (ragged, colours outside 0-9, empty, too large)."""


class InvalidSolutionError(AtlasError, ValueError):
    """A solution has the wrong type or structure for the environment."""


class EnvironmentNotReady(AtlasError, RuntimeError):
    """An environment was used before ``reset(task)`` was called."""


class SandboxError(AtlasError, RuntimeError):
    """The sandbox could not run the code (not: the code failed inside it)."""


class BubblewrapNotFound(SandboxError, FileNotFoundError):
    """The ``bwrap`` executable is not installed."""


class SandboxTimeout(SandboxError, TimeoutError):
    """The sandbox infrastructure did not answer in time."""


class RuntimeUnavailable(SandboxError):
    """The in-container runtime cannot start in this workspace (no Python, an image
    without a shell): the workspace runs commands the slow way instead."""


class RuntimeDied(SandboxError):
    """The in-container runtime ended (or stopped answering) during a call: killed by
    what it ran, or its container is gone."""


class DockerError(AtlasError, RuntimeError):
    """The Docker engine is unreachable or a Docker call failed."""


class DockerTimeout(DockerError, TimeoutError):
    """A Docker call did not complete in time."""


class ImageMissing(DockerError, LookupError):
    """An image is not on the engine and the pull policy forbids pulling it."""


class ImagePullError(DockerError):
    """An image could not be pulled: registry unreachable, refused, or no such image."""


class LLMError(AtlasError, RuntimeError):
    """An LLM endpoint failed after all retries."""


class LLMTimeout(LLMError, TimeoutError):
    """An LLM call did not complete in time."""


class ActorError(AtlasError, RuntimeError):
    """An actor pool could not complete a piece of work after retries."""


class MemoryStoreError(AtlasError, RuntimeError):
    """The experience store (``atlas_actors.memory``) could not be opened or written."""


class CorruptMemoryError(MemoryStoreError):
    """A memory file is corrupt, unreadable or not a memory store; the message names the
    file and the fixes (``--memory-reset``, another ``--memory PATH``, ``--no-memory``)."""
