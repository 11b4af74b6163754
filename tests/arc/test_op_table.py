"""The ARC DSL's op table in the docs is generated from the op declarations."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_the_checked_in_op_table_is_current() -> None:
    r = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "arc_op_table.py"), "--check"],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=120,
    )
    assert r.returncode == 0, (
        f"{r.stderr.strip()} (docs/arc-dsl-ops.md is generated from the ops' declarations)"
    )
