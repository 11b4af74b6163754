"""ray_cluster.yaml is a valid Ray cluster-launcher config (Ray's own schema)."""

from __future__ import annotations

import copy
import json
import re
import shlex
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import ray
import yaml

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def cluster() -> dict[str, Any]:
    data = yaml.safe_load((ROOT / "ray_cluster.yaml").read_text())
    assert isinstance(data, dict)
    return data


def test_validates_against_rays_schema(cluster: dict[str, Any]) -> None:
    schema = json.loads((Path(ray.__file__).parent / "autoscaler" / "ray-schema.json").read_text())
    jsonschema.validate(cluster, schema)
    # and the checks `ray up` runs before launching anything: Ray fills in the
    # provider's defaults, then validates the result
    from ray.autoscaler._private.util import prepare_config, validate_config

    prepared = prepare_config(copy.deepcopy(cluster))
    validate_config(prepared)
    assert prepared["available_node_types"]["head"]["max_workers"] == 0


def test_a_broken_config_is_rejected(cluster: dict[str, Any]) -> None:
    schema = json.loads((Path(ray.__file__).parent / "autoscaler" / "ray-schema.json").read_text())
    broken = {**cluster, "max_workers": "many"}
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(broken, schema)


def test_nodes_install_the_package_and_its_system_needs(cluster: dict[str, Any]) -> None:
    assert cluster["head_node_type"] in cluster["available_node_types"]
    assert len(cluster["available_node_types"]) >= 2  # a head and a worker type
    setup = "\n".join(cluster["setup_commands"])
    for need in ("bubblewrap", "docker.io", f"ray[default]=={ray.__version__}"):
        assert need in setup, need
    mounted = next(iter(cluster["file_mounts"]))
    assert f"-e {mounted}" in setup  # the copied repository is what gets installed


def test_every_repository_path_it_names_exists() -> None:
    """Paths in the file (its comments included) point at files of this repository."""
    text = (ROOT / "ray_cluster.yaml").read_text()
    named = set(re.findall(r"\b(?:tests|scripts|docs|atlas_actors)/[\w./-]*\w", text))
    assert named, "the file names no repository path (the pattern no longer matches?)"
    missing = sorted(p for p in named if not (ROOT / p).exists())
    assert missing == []


def test_the_commands_it_shows_parse() -> None:
    """Every ``atlas-actors`` command line of the usage in its comments is one the CLI
    accepts."""
    from atlas_actors.cli import build_parser

    text = (ROOT / "ray_cluster.yaml").read_text()
    commands = re.findall(r"^#\s+atlas-actors ([^\n#]+)", text, re.M)
    assert commands
    for line in commands:
        build_parser().parse_args(shlex.split(line))  # exits (status 2) on a bad flag
