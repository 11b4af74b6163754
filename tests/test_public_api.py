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


def test_the_seed_specs_search_names_are_exported() -> None:
    """The names the seed specs use for the searches and their parts, from the package."""
    from atlas_actors.search.discriminator import Discriminator
    from atlas_actors.search.mcts import SWESearch
    from atlas_actors.search.mind_evolution import MindEvolutionSearch
    from atlas_actors.search.router import EnhancedTaskRouter

    expected = {
        "MindEvolutionSearch": MindEvolutionSearch,
        "SWESearch": SWESearch,
        "Discriminator": Discriminator,
        "EnhancedTaskRouter": EnhancedTaskRouter,
    }
    for name, obj in expected.items():
        assert name in atlas_actors.__all__, name
        assert getattr(atlas_actors, name) is obj, name
