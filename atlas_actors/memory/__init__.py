"""Experience memory: a persistent store of finished tasks and their similarity.

* :class:`MemorySystem` (``store.py``): the SQLite store, ``record`` / ``query`` /
  JSONL export and import, safe with many processes and runs at once.
* ``features.py``: the features protocol (:class:`DomainFeatures`, a domain's
  ``features`` part) and the generic similarity; each domain's own features live in its
  package.
* ``session.py``: what a run holds (routing and recording around the store).
"""

from __future__ import annotations

from atlas_actors.memory.features import (
    MAX_FEATURE_SIMILARITY,
    DomainFeatures,
    domain_features,
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
    "similarity",
    "task_features",
    "task_fingerprint",
]
