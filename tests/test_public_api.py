"""The public names are importable from atlas_actors, and importing it stays light."""

from __future__ import annotations

import subprocess
import sys

import atlas_actors


def test_every_public_name_resolves() -> None:
    for name in atlas_actors.__all__:
        assert getattr(atlas_actors, name) is not None, name


def test_import_does_not_pull_in_ray_or_the_llm_sdk() -> None:
    code = (
        "import sys, atlas_actors; "
        "print(sorted(m for m in ('ray', 'openai', 'aiodocker') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
