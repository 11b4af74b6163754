"""Experience memory: a persistent store of finished tasks and their similarity.

* :class:`MemorySystem` (``store.py``): the SQLite store, ``record`` / ``query`` /
  JSONL export and import, safe with many processes and runs at once.
* ``features.py``: per-domain similarity features (ARC grids and programs, SWE
  repositories, tests and problem statements), extensible with :func:`register_features`.
"""

from __future__ import annotations

from atlas_actors.memory.features import (
    MAX_FEATURE_SIMILARITY,
    DomainFeatures,
    domain_features,
    register_features,
    registered_domains,
    similarity,
    task_features,
    task_fingerprint,
)
from atlas_actors.memory.store import (
    MemorySystem,
    default_memory_path,
    experience_from_result,
)

__all__ = [
    "MAX_FEATURE_SIMILARITY",
    "DomainFeatures",
    "MemorySystem",
    "default_memory_path",
    "domain_features",
    "experience_from_result",
    "register_features",
    "registered_domains",
    "similarity",
    "task_features",
    "task_fingerprint",
]
