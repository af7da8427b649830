"""The public API's type hints, checked by mypy with the settings in pyproject.toml.

``test_public_api_type_checks`` runs ``python -m mypy`` as a contributor would, on the files
that ``[tool.mypy] files`` lists (the stack, gradcheck, the norms of both tiers, the nn
layers, the optimizers), and fails on any error. ``test_mypy_catches_wrong_hints`` holds the
configuration strict enough to matter: a wrong return hint, a call with a wrong argument type
and an unannotated function must each be reported. Both skip when mypy is not installed (it
comes with the ``test`` extra).
"""

import importlib.util
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

pytestmark = [pytest.mark.skipif(importlib.util.find_spec("mypy") is None,
                                 reason="mypy is not installed (pip install -e '.[test]')"),
              pytest.mark.slow]  # slow: mypy over the public API, from an empty cache


@pytest.fixture(scope="module")
def cache(tmp_path_factory):
    """One mypy cache for both tests: the probe imports normcore, which the first run analysed
    (the cache starts empty in each test run, so nothing stale is read)."""
    return tmp_path_factory.mktemp("mypy_cache")


def run_mypy(cache, *args):
    """(exit status, output) of ``python -m mypy`` run from the repository root with its config."""
    cmd = [sys.executable, "-m", "mypy", "--config-file", str(ROOT / "pyproject.toml"),
           "--cache-dir", str(cache), "--no-color-output", "--no-error-summary", *args]
    proc = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=600)
    return proc.returncode, proc.stdout + proc.stderr


def test_public_api_type_checks(cache):
    status, out = run_mypy(cache)
    assert status == 0, f"mypy found errors in the public API:\n{out}"


def test_mypy_catches_wrong_hints(tmp_path, cache):
    probe = tmp_path / "probe.py"
    probe.write_text(textwrap.dedent("""\
        import numpy as np
        import normcore as nc

        def wrong_return(x: np.ndarray) -> int:
            return nc.LayerNorm(8).forward(x)        # forward returns an ndarray

        def wrong_argument() -> None:
            nc.BatchNorm1d(4, momentum="0.1")        # momentum is a float or None

        def unannotated(x):                          # every function must be typed
            return x
        """))
    status, out = run_mypy(cache, str(probe))
    assert status == 1, out
    errors = [ln for ln in out.splitlines() if ": error:" in ln]
    for line, code in ((5, "return-value"), (8, "arg-type"), (10, "no-untyped-def")):
        assert any(f"probe.py:{line}: error:" in e and e.endswith(f"[{code}]") for e in errors), out
