"""``normcore compare`` on an optimizer: steps of normcore's and of torch.optim's on the same
gradients, every parameter and state entry judged; a planted difference fails with status 1;
--eval and --fast are refused for it, before torch is needed."""

import numpy as np
import pytest

import normcore as nc
from normcore import cli, torch_bridge
from normcore._install import TORCH_CPU
from normcore.commands import compare as compare_command

OPTIMIZER_MODELS = ["sgd-nesterov", "sgd-maximize", "adam-amsgrad", "adamw-maximize"]


def torch_or_skip():
    return pytest.importorskip("torch", reason=f"compare needs PyTorch: {TORCH_CPU}")


def table_rows(out):
    """{row name: its last column} of a compare table."""
    lines = out.splitlines()
    body = lines[lines.index("-" * 78) + 1:-1]
    return {line[:30].strip(): line.split()[-1] for line in body}


@pytest.mark.parametrize("model", OPTIMIZER_MODELS)
def test_every_optimizer_model_matches_with_every_state_entry_in_the_table(model, capsys):
    torch_or_skip()
    assert model in compare_command.MODELS
    assert cli.main(["compare", model]) == 0
    out = capsys.readouterr().out
    assert out.splitlines()[0].endswith("against torch.optim, float64, 5 steps")
    rows = table_rows(out)
    expected = (["momentum_buffer"] if model.startswith("sgd")
                else ["step", "exp_avg", "exp_avg_sq", "max_exp_avg_sq"])
    assert list(rows) == [f"{p}{s}" for p in ("weight", "bias") for s in ["", *(" " + k for k in expected)]]
    assert set(rows.values()) == {"ok"} and out.splitlines()[-1] == "all match"
    assert all(len(line) <= 80 for line in out.splitlines())


def test_float32_is_judged_at_float32s_tolerance(capsys):
    torch_or_skip()
    assert cli.main(["compare", "adamw-maximize", "--dtype", "float32", "--seed", "3"]) == 0
    out = capsys.readouterr().out
    assert "float32, 5 steps" in out and "atol=1e-04" in out


def test_torch_run_without_nesterov_fails_with_status_1(monkeypatch, capsys):
    """The planted difference: torch's twin built with nesterov=False (heavy-ball momentum)."""
    torch_or_skip()
    build = torch_bridge.optimizers._torch_optimizer

    def without_nesterov(optimizer, tparams):
        twin = build(optimizer, tparams)
        for group in twin.param_groups:
            group["nesterov"] = False
        return twin
    monkeypatch.setattr(torch_bridge.optimizers, "_torch_optimizer", without_nesterov)
    assert cli.main(["compare", "sgd-nesterov"]) == 1
    out = capsys.readouterr().out
    assert table_rows(out)["weight"] == "FAIL" and "differ" in out.splitlines()[-1]


class AdamForgettingItsMaximum(nc.Adam):
    """A planted bug: AMSGrad ignored (no max_exp_avg_sq, the current exp_avg_sq used)."""

    def _update(self, p, grad, state, **hyper):
        super()._update(p, grad, state, **{**hyper, "amsgrad": False})


def test_a_state_entry_one_side_lacks_fails_and_a_subclass_finds_its_torch_twin():
    torch_or_skip()
    linear = nc.Linear(4, 3, rng=np.random.default_rng(0))
    optimizer = AdamForgettingItsMaximum(linear.parameters(), lr=0.05, amsgrad=True)
    report = torch_bridge.compare_optimizer(optimizer, names=["weight", "bias"], out=None)
    verdict = {row.name: row.passed for row in report.rows}
    assert not report.passed and verdict["weight exp_avg"]  # the moments agree, the update does not
    assert not verdict["weight"] and not verdict["weight max_exp_avg_sq"]
    assert np.isinf(report.rows[[r.name for r in report.rows].index("bias max_exp_avg_sq")].max_abs)


def test_an_optimizer_that_stepped_or_that_torch_lacks_is_refused_with_what_was_expected():
    torch_or_skip()
    p = nc.Parameter(np.ones(3))
    optimizer = nc.SGD([p], lr=0.1, momentum=0.9)
    optimizer.step()
    with pytest.raises(ValueError, match="has taken steps already; give a fresh optimizer"):
        torch_bridge.compare_optimizer(optimizer, out=None)

    class Lion(nc.optim.Optimizer):
        def _update(self, p, grad, state, lr, weight_decay):
            p.data -= lr * np.sign(grad)
    with pytest.raises(TypeError, match="torch.optim has no twin of Lion"):
        torch_bridge.compare_optimizer(Lion([p], {"lr": 0.1, "weight_decay": 0.0}), out=None)


@pytest.mark.parametrize("flag", ["--eval", "--fast"])
def test_eval_and_fast_are_refused_for_an_optimizer_with_status_2(flag, capsys):
    """Refused before torch is needed: a usage error whether PyTorch is installed or not."""
    assert cli.main(["compare", "adam-amsgrad", flag]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert "adam-amsgrad is an optimizer" in captured.err and "leave them out" in captured.err
    assert all(len(line) <= 80 for line in captured.err.splitlines())
