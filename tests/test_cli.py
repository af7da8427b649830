"""The ``normcore`` command line."""

import subprocess
import sys

import numpy as np

import normcore as nc
from normcore import cli, layer_cases


def test_gradcheck_command_lists_every_layer_and_passes(capsys):
    assert cli.main(["gradcheck"]) == 0
    out = capsys.readouterr().out
    for name in ["LayerNorm", "RMSNorm", "BatchNorm1d", "BatchNorm2d", "GroupNorm", "InstanceNorm1d",
                 "InstanceNorm2d", "Dropout"]:
        assert name in out
    rows = [line for line in out.splitlines() if line.rstrip().endswith(("pass", "FAIL"))]
    assert len(rows) >= 3 * 15 and all(line.endswith("pass") for line in rows)
    errors = [float(line.split()[-2]) for line in rows]
    assert max(errors) <= 1e-7


def test_gradcheck_command_fails_with_exit_status_1_on_a_wrong_backward(monkeypatch, capsys):
    class Wrong(nc.LayerNorm):
        def backward(self, dy):
            super().backward(dy)  # dgamma and dbeta are right
            x_hat, rstd, _ = self._cached()
            return rstd * dy * self.gamma.data  # dx forgets both mean terms

    def cases(seed=0):
        x = np.random.default_rng(seed).standard_normal((3, 4))
        return [layer_cases.Case("Wrong LayerNorm", Wrong(4), (x,))]

    monkeypatch.setattr("normcore.commands.gradcheck.all_cases", cases)
    assert cli.main(["gradcheck"]) == 1
    out = capsys.readouterr().out
    assert "FAIL" in out and "1 gradient(s) FAIL" in out


def test_console_entry_point_runs_as_a_module():
    done = subprocess.run([sys.executable, "-m", "normcore", "--help"], capture_output=True, text=True)
    assert done.returncode == 0 and "gradcheck" in done.stdout
