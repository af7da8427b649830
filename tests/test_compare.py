"""``normcore compare`` and ``torch_bridge.compare`` judge each number at the scale of its data:
a gradient that is 0 in theory passes as rounding noise, a wrong one fails at any scale; an
input in the wrong dtype gets normcore's message, not torch's."""

import numpy as np
import pytest

import normcore as nc
from normcore import cli, torch_bridge
from normcore._install import TORCH_CPU
from normcore.layer_cases import perturb_parameters

pytest.importorskip("torch", reason=f"compare needs PyTorch: {TORCH_CPU}")


class OffBias(nc.Linear):
    """A Linear whose bias gradient is off by ``error`` (a fraction of the largest gradient)."""
    error = 0.0

    def backward(self, dy):
        dx = super().backward(dy)
        self.bias.grad[1] += self.error * np.abs(self.weight.grad).max()
        return dx


def linear_batchnorm(error=0.0, seed=0):
    rng = np.random.default_rng(seed)
    linear = OffBias(4, 3, rng=rng)
    linear.error = error
    return perturb_parameters(nc.Sequential(linear, nc.BatchNorm1d(3)), rng), rng.standard_normal((6, 4))


def rows(report):
    return {row.name: row for row in report.rows}


def test_a_bias_before_batchnorm_is_rounding_noise_judged_at_the_scale_of_its_pass():
    model, x = linear_batchnorm()
    report = torch_bridge.compare(model, x, out=None)
    bias, weight = rows(report)["0.bias grad"], rows(report)["0.weight grad"]
    theirs = np.abs(model[0].bias.grad).max()
    assert theirs < 1e-12 * np.abs(model[0].weight.grad).max()  # 0 in theory
    assert report.passed and bias.passed
    assert bias.max_rel < 1e-12 and weight.max_rel < 1e-12  # not |noise - noise| / |noise|


@pytest.mark.parametrize("error", [1e-6, 1e-3])
def test_a_wrong_bias_gradient_fails_even_where_it_should_be_zero(error):
    model, x = linear_batchnorm(error)
    report = torch_bridge.compare(model, x, out=None)
    assert [row.name for row in report.rows if not row.passed] == ["0.bias grad"]
    model.zero_grad()  # the scale: the largest gradient of the pass (compare's dy is seed 0's)
    model(x)
    grads = [model.backward(np.random.default_rng(0).standard_normal((6, 3)))]
    grads += [p.grad for p in model.parameters()]
    bias = rows(report)["0.bias grad"]
    assert bias.max_rel == pytest.approx(bias.max_abs / max(np.abs(g).max() for g in grads), rel=1e-6)
    assert error / 10 < bias.max_rel <= error


def test_a_wrong_gradient_fails_when_all_the_gradients_are_tiny():
    """An absolute floor (1e-9) would pass anything here: the gradients are all about 1e-12."""
    model, x = linear_batchnorm(error=0.1)
    dy = np.random.default_rng(1).standard_normal((6, 3)) * 1e-12
    report = torch_bridge.compare(model, x, dy=dy, out=None)
    assert rows(report)["0.weight grad"].max_abs < 1e-20
    assert [row.name for row in report.rows if not row.passed] == ["0.bias grad"]


def test_the_command_says_how_it_judges_a_gradient_that_is_zero_in_theory(capsys):
    assert cli.main(["compare", "linear-batchnorm"]) == 0
    out = capsys.readouterr().out
    assert "0 in theory is judged at the scale of its backward pass" in out
    assert "max rel = max abs / s" in out
    bias = next(line for line in out.splitlines() if line.startswith("0.bias grad"))
    assert bias.split()[-1] == "ok" and float(bias.split()[-3]) < 1e-12
    assert all(len(line) <= 80 for line in out.splitlines())


def test_an_input_in_another_dtype_than_the_model_is_refused_with_what_was_expected():
    ln = nc.LayerNorm(4, dtype=np.float32)
    x = np.random.default_rng(0).standard_normal((3, 4))
    with pytest.raises(TypeError, match=r"computes in float32 .* input 0 is float64: give it as "
                                        r"x\.astype\(np\.float32\)"):
        torch_bridge.compare(ln, x, out=None)
    assert torch_bridge.compare(ln, x.astype(np.float32), out=None).passed



@pytest.mark.parametrize("model, argv", [("batch-renorm", ["--eval"]), ("ghost-batchnorm", ["--fast"]),
                                         ("weight-norm", ["--dtype", "float32"]), ("ws-linear", ["--seed", "2"])])
def test_the_weight_and_batch_variant_models_in_other_modes(model, argv, capsys):
    """``--fast`` on a layer without a fast twin compares the reference layer."""
    assert cli.main(["compare", model, *argv]) == 0
    out = capsys.readouterr().out
    assert "all match" in out and ("eval mode" if "--eval" in argv else "train mode") in out.splitlines()[0]


def test_the_rezero_model_is_what_its_description_says():
    from normcore.commands.compare import MODELS, _description
    what, build = MODELS["rezero"]
    assert _description(what) == "ReZero() at alpha = 0: the input's gradient is 0"
    layer, (x,) = build("reference", np.random.default_rng(0))
    assert layer.alpha.data[0] == 0.0
    report = torch_bridge.compare(layer, x, out=None)
    layer(x)
    assert not layer.backward(np.random.default_rng(1).standard_normal(x.shape)).any() and report.passed
