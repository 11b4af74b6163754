"""The table of install facts (swebench 4.1.0's) and its translation to pip steps."""

from __future__ import annotations

import pytest
from swebench.harness.log_parsers import PARSER_REGISTRY

from atlas_actors.swe.specs import (
    EnvSpec,
    NoSpecError,
    RepoSpecs,
    environment_recipe,
    environment_yml_to_pip,
    load_spec_table,
    read_requirements,
)

LITE_DEV = {
    "sqlfluff/sqlfluff": ["0.6", "0.8"],
    "pvlib/pvlib-python": ["0.7", "0.8", "0.9"],
    "pydicom/pydicom": ["1.3", "2.0", "2.1", "2.3"],
    "pylint-dev/astroid": ["2.9", "2.10", "2.12", "2.13", "2.14"],
    "marshmallow-code/marshmallow": ["2.20", "3.0"],
    "pyvista/pyvista": ["0.39"],
}
LITE_PURE_PYTHON = [
    "pytest-dev/pytest",
    "pylint-dev/pylint",
    "pallets/flask",
    "psf/requests",
    "sphinx-doc/sphinx",
    "mwaskom/seaborn",
    "pydata/xarray",
]


def test_the_table_loads_and_every_entry_is_complete() -> None:
    table = load_spec_table()
    assert "swebench 4.1.0" in table.source
    assert set(LITE_DEV) | set(LITE_PURE_PYTHON) <= set(table.repos)
    for repo, versions in LITE_DEV.items():
        for v in versions:
            table.lookup(repo, v)  # every dev split version has its facts
    entries = 0
    for repo, specs in table.repos.items():
        assert specs.log_parser in PARSER_REGISTRY, repo
        assert specs.versions, repo
        for version, spec in specs.versions.items():
            entries += 1
            where = f"{repo} {version}"
            assert spec.test_cmd.strip(), where
            assert spec.install.strip(), where
            assert int(spec.python.split(".")[1]) >= 5, where
            if spec.packages == "requirements.txt":
                assert specs.requirements_paths, where
            if spec.packages == "environment.yml":
                assert specs.environment_yml_paths, where
            # conda is not here: no step may call it
            for step in (*spec.pre_install, spec.install, *spec.eval_commands):
                assert "conda " not in step, where
    assert entries > 200


def test_a_missing_spec_says_which_repo_and_version() -> None:
    table = load_spec_table()
    with pytest.raises(NoSpecError, match=r"no spec for repo pallets/flask version 9\.9 "):
        table.lookup("pallets/flask", "9.9")
    with pytest.raises(NoSpecError, match="no spec for repo someone/thing version 1.0"):
        table.lookup("someone/thing", "1.0")


def files(mapping: dict[str, str]):  # type: ignore[no-untyped-def]
    return lambda path: mapping.get(path)


def test_requirements_are_read_as_swebench_reads_them() -> None:
    repo = files(
        {
            "requirements/dev.txt": "-r base.txt\n-e .\n# comment\npytest\ntypes-pkg_resources\n",
            "requirements/base.txt": "click>=8\n.[test]\n",
        }
    )
    text, where = read_requirements(repo, ["requirements_dev.txt", "requirements/dev.txt"])
    assert where == "requirements/dev.txt"
    lines = [x for x in text.splitlines() if x]
    assert lines == ["click>=8", "pytest", "types-setuptools"]
    with pytest.raises(NoSpecError, match="none of a.txt exists"):
        read_requirements(repo, ["a.txt"])


def test_a_spec_becomes_pip_steps() -> None:
    specs = RepoSpecs(log_parser="parse_log_pytest", requirements_paths=("req.txt",), versions={})
    spec = EnvSpec(
        python="3.9",
        packages="requirements.txt",
        pip_packages=("pytest==7.4.0",),
        pre_install=("apt-get update && apt-get install -y graphviz", "sed -i 's/a/b/' tox.ini"),
        install="python -m pip install -e .",
        test_cmd="pytest -rA",
    )
    recipe = environment_recipe(specs, spec, files({"req.txt": "six\n"}))
    assert recipe.system == ("apt-get update && apt-get install -y graphviz",)
    assert recipe.repo_edits == ("sed -i 's/a/b/' tox.ini",)
    assert recipe.files["requirements.txt"].strip() == "six"
    assert recipe.dependencies == (
        "python -m pip install -r /atlas_build/requirements.txt",
        "python -m pip install pytest==7.4.0",
    )
    conda_list = environment_recipe(
        specs, EnvSpec(python="3.9", packages="pandas scipy", test_cmd="pytest"), files({})
    )
    assert conda_list.dependencies == ("python -m pip install pandas scipy",)


def test_a_conda_environment_file_is_read_as_pip_requirements() -> None:
    names, pip_lines = environment_yml_to_pip(
        "name: x\nchannels: [conda-forge]\ndependencies:\n  - python=3.10\n  - numpy=1.23\n"
        "  - pandas>=1.4\n  - conda-forge::cftime\n  - pip\n  - pip:\n      - pytest-env\n"
    )
    assert names == ["numpy==1.23.*", "pandas>=1.4", "cftime"]
    assert pip_lines == ["pytest-env"]
