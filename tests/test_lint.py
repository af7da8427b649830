"""The code passes ruff with the configuration in pyproject.toml (runs when ruff is installed,
as the test extra installs it)."""

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).parents[1]


def _ruff():
    """The ruff command: the one next to this Python, or on PATH; None when it is not installed."""
    here = Path(sys.executable).with_name("ruff")
    return str(here) if here.exists() else shutil.which("ruff")


@pytest.mark.skipif(_ruff() is None, reason="ruff is not installed (pip install -e '.[test]')")
def test_the_code_passes_ruff():
    run = subprocess.run([_ruff(), "check", "--no-cache", "."], cwd=ROOT, capture_output=True,
                         text=True)
    assert run.returncode == 0, run.stdout + run.stderr


@pytest.mark.skipif(_ruff() is None, reason="ruff is not installed (pip install -e '.[test]')")
def test_ruff_reports_a_new_mistake(tmp_path):
    """The configuration is in force: an unused variable and an over-long line are reported."""
    bad = tmp_path / "bad.py"
    bad.write_text("def f():\n    unused = 1\n    return 'x' * 2  " + "#" * 130 + "\n")
    run = subprocess.run([_ruff(), "check", "--no-cache", "--config", str(ROOT / "pyproject.toml"),
                          str(bad)], capture_output=True, text=True)
    assert run.returncode == 1
    assert "F841" in run.stdout and "E501" in run.stdout
