"""normcore.torch_bridge: every layer round-trips to torch.nn, compare finds planted bugs,
``normcore compare`` prints and exits as documented, and nothing imports torch early."""

import os
import subprocess
import sys

import numpy as np
import pytest

import normcore as nc
from normcore import cli, fast, torch_bridge
from normcore._install import TORCH_CPU
from normcore.commands import compare as compare_command
from normcore.layer_cases import perturb_parameters, randomize_parameters

NO_TORCH = "import sys; sys.modules['torch'] = None  # import torch raises ImportError\n"


def run_python(code):
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=120)


# --- without torch ----------------------------------------------------------------------------

def test_importing_normcore_and_the_bridge_does_not_import_torch():
    code = ("import sys, normcore, normcore.fast, normcore.cli, normcore.torch_bridge\n"
            "import normcore.commands.compare\n"
            "assert 'torch' not in sys.modules, 'torch was imported'\n")
    result = run_python(code)
    assert result.returncode == 0, result.stderr


def test_without_torch_the_bridge_imports_and_says_what_is_missing():
    code = NO_TORCH + (
        "import normcore as nc\n"
        "from normcore.torch_bridge import to_torch\n"
        "try:\n    to_torch(nc.LayerNorm(3))\n"
        "except ImportError as err:\n    print(err)\n")
    result = run_python(code)
    assert result.returncode == 0, result.stderr
    assert "needs PyTorch" in result.stdout and TORCH_CPU in result.stdout


def test_cli_without_torch_exits_2_with_a_clear_message():
    code = NO_TORCH + ("import sys; from normcore import cli\n"
                       "sys.exit(cli.main(['compare', 'layernorm']))")
    result = run_python(code)
    assert result.returncode == 2
    assert "PyTorch is not installed" in result.stderr and TORCH_CPU in result.stderr
    assert all(len(line) <= 80 for line in result.stderr.splitlines())


# --- with torch ------------------------------------------------------------------------------

try:
    import torch
    torch.set_num_threads(1)
except ImportError:  # the tests above still run
    torch = None
needs_torch = pytest.mark.skipif(torch is None, reason=f"PyTorch is the optional oracle: {TORCH_CPU}")


def x(rng, *shape):
    return rng.standard_normal(shape) * 2 + 0.5


def warmed(bn, shape, rng):
    for _ in range(3):
        bn(x(rng, *shape))
    return bn


def cases():
    """(label, module, inputs); every class in CONVERTERS appears at least once."""
    rng = np.random.default_rng(0)
    r = lambda m: randomize_parameters(m, rng)  # noqa: E731
    p = lambda m: perturb_parameters(m, rng)  # noqa: E731
    out = []
    for tier in (nc, fast):
        t = tier.__name__
        out += [
            (f"{t}.LayerNorm", r(tier.LayerNorm(6)), (x(rng, 4, 6),)),
            (f"{t}.LayerNorm 2d no bias", r(tier.LayerNorm((2, 3), bias=False)), (x(rng, 2, 2, 3),)),
            (f"{t}.LayerNorm no affine", tier.LayerNorm(4, elementwise_affine=False), (x(rng, 3, 4),)),
            (f"{t}.RMSNorm", r(tier.RMSNorm(6)), (x(rng, 4, 6),)),
            (f"{t}.RMSNorm eps", r(tier.RMSNorm((2, 5), eps=1e-6)), (x(rng, 3, 2, 5),)),
            (f"{t}.BatchNorm1d train", r(tier.BatchNorm1d(3)), (x(rng, 5, 3),)),
            (f"{t}.BatchNorm1d NCL train", r(tier.BatchNorm1d(3, momentum=None)), (x(rng, 4, 3, 5),)),
            (f"{t}.BatchNorm1d eval", warmed(r(tier.BatchNorm1d(3)), (6, 3), rng).eval(), (x(rng, 5, 3),)),
            (f"{t}.BatchNorm1d no stats eval", tier.BatchNorm1d(3, track_running_stats=False).eval(),
             (x(rng, 5, 3),)),
            (f"{t}.BatchNorm2d train", r(tier.BatchNorm2d(2)), (x(rng, 3, 2, 2, 3),)),
            (f"{t}.BatchNorm2d eval", warmed(r(tier.BatchNorm2d(2)), (3, 2, 2, 2), rng).eval(),
             (x(rng, 3, 2, 2, 3),)),
            (f"{t}.GroupNorm", r(tier.GroupNorm(2, 6)), (x(rng, 3, 6, 4),)),
            (f"{t}.GroupNorm 2d", r(tier.GroupNorm(3, 6)), (x(rng, 2, 6, 2, 3),)),
            (f"{t}.InstanceNorm1d", r(tier.InstanceNorm1d(3, affine=True)), (x(rng, 2, 3, 5),)),
            (f"{t}.InstanceNorm1d stats", tier.InstanceNorm1d(3, track_running_stats=True),
             (x(rng, 2, 3, 5),)),
            (f"{t}.InstanceNorm2d", r(tier.InstanceNorm2d(2, affine=True)), (x(rng, 2, 2, 3, 4),)),
            (f"{t}.BatchNorm3d train", r(tier.BatchNorm3d(2)), (x(rng, 2, 2, 2, 3, 2),)),
            (f"{t}.BatchNorm3d eval no bias", warmed(r(tier.BatchNorm3d(2, bias=False)), (2, 2, 2, 2, 2), rng).eval(),
             (x(rng, 2, 2, 2, 3, 2),)),
            (f"{t}.BatchNorm1d no bias", r(tier.BatchNorm1d(3, bias=False)), (x(rng, 5, 3),)),
            (f"{t}.BatchNorm2d no bias", r(tier.BatchNorm2d(2, bias=False)), (x(rng, 3, 2, 2, 3),)),
            (f"{t}.GroupNorm no bias", r(tier.GroupNorm(2, 4, bias=False)), (x(rng, 2, 4, 3),)),
            (f"{t}.InstanceNorm1d no bias", r(tier.InstanceNorm1d(3, affine=True, bias=False)), (x(rng, 2, 3, 5),)),
            (f"{t}.InstanceNorm3d", r(tier.InstanceNorm3d(2, affine=True)), (x(rng, 2, 2, 2, 3, 2),)),
            (f"{t}.InstanceNorm3d unbatched stats no bias",
             r(tier.InstanceNorm3d(2, affine=True, bias=False, track_running_stats=True)), (x(rng, 2, 3, 2, 2),)),
        ]
    out += [
        ("Linear", r(nc.Linear(5, 3)), (x(rng, 2, 4, 5),)),
        ("Linear no bias", r(nc.Linear(5, 3, bias=False)), (x(rng, 4, 5),)),
        ("ReLU", nc.ReLU(), (x(rng, 3, 4),)),
        ("GELU", nc.GELU(), (x(rng, 3, 4),)),
        ("GELU tanh", nc.GELU(approximate="tanh"), (x(rng, 3, 4),)),
        ("LogSoftmax", nc.LogSoftmax(axis=1), (x(rng, 3, 4, 2),)),
        ("Sigmoid", nc.Sigmoid(), (x(rng, 3, 4),)),
        ("Tanh", nc.Tanh(), (x(rng, 3, 4),)),
        ("Softmax", nc.Softmax(), (x(rng, 3, 4),)),
        ("Softmax axis 0", nc.Softmax(axis=0), (x(rng, 3, 4),)),
        ("Softmax float32 in float64", nc.Softmax(dtype=np.float64), (x(rng, 3, 4).astype(np.float32),)),
        ("LogSoftmax float32 in float64", nc.LogSoftmax(axis=0, dtype=np.float64),
         (x(rng, 3, 4).astype(np.float32),)),
        ("Dropout eval", nc.Dropout(0.5, rng=0).eval(), (x(rng, 3, 4),)),
        ("Dropout p=0 train", nc.Dropout(0.0), (x(rng, 3, 4),)),
        ("Embedding", nc.Embedding(7, 4, rng=0), (rng.integers(0, 7, (2, 5)),)),
        ("PositionalEmbedding", nc.PositionalEmbedding(6, 4, rng=0), (x(rng, 2, 5, 4),)),
        ("CausalSelfAttention", p(nc.CausalSelfAttention(12, 3, rng=0)), (x(rng, 2, 7, 12),)),
        ("MultiheadSelfAttention", p(nc.MultiheadSelfAttention(8, 2, rng=0)), (x(rng, 2, 5, 8),)),
        ("MultiheadSelfAttention masks", p(nc.MultiheadSelfAttention(8, 2, rng=0)),
         (x(rng, 2, 5, 8), np.array([[0, 0, 0, 1, 1], [0, 0, 0, 0, 0]], dtype=bool), x(rng, 5, 5))),
        ("MultiheadSelfAttention causal, bool mask", p(nc.MultiheadSelfAttention(8, 2, causal=True, rng=0)),
         (x(rng, 2, 5, 8), None, (rng.random((2, 2, 5, 5)) < 0.3) & ~np.eye(5, dtype=bool))),
        ("CausalSelfAttention padding", p(nc.CausalSelfAttention(8, 4, rng=0)),
         (x(rng, 3, 4, 8), np.array([[0, 0, 0, 1], [0, 0, 0, 0], [0, 0, 1, 1]], dtype=bool))),
        ("MultiheadAttention cross", p(nc.MultiheadAttention(8, 2, rng=0)),
         (x(rng, 2, 3, 8), x(rng, 2, 6, 8), x(rng, 2, 6, 8))),
        ("MultiheadAttention kdim vdim bias_kv zero_attn masks",
         p(nc.MultiheadAttention(8, 2, add_bias_kv=True, add_zero_attn=True, kdim=5, vdim=3, rng=0)),
         (x(rng, 2, 3, 8), x(rng, 2, 4, 5), x(rng, 2, 4, 3), np.array([[0, 0, 1, 1], [1, 1, 1, 1]], dtype=bool),
          x(rng, 2, 2, 3, 4))),
        ("MultiheadAttention causal no bias zero_attn", p(nc.MultiheadAttention(8, 4, False, add_zero_attn=True,
                                                                               causal=True, rng=0)),
         (x(rng, 3, 4, 8), x(rng, 3, 4, 8), x(rng, 3, 4, 8), None, (rng.random((4, 4)) < 0.3))),
        ("FeedForward", p(nc.FeedForward(6, 10, activation="relu", rng=0)), (x(rng, 2, 3, 6),)),
        ("Sequential", nc.Sequential(r(nc.Linear(4, 6)), nc.Tanh(), r(nc.LayerNorm(6)),
                                     nc.Dropout(0.3).eval(), r(nc.Linear(6, 2))), (x(rng, 5, 4),)),
        ("CrossEntropyLoss", nc.CrossEntropyLoss(), (x(rng, 6, 5), rng.integers(0, 5, 6))),
        ("CrossEntropyLoss (N,C,d)", nc.CrossEntropyLoss(), (x(rng, 2, 5, 3), rng.integers(0, 5, (2, 3)))),
        ("CrossEntropyLoss ignore", nc.CrossEntropyLoss(ignore_index=-1),
         (x(rng, 6, 5), np.array([0, -1, 4, 2, -1, 1]))),
        ("CrossEntropyLoss weight smoothing", nc.CrossEntropyLoss(weight=rng.uniform(0.5, 2, 5),
                                                                  label_smoothing=0.1),
         (x(rng, 6, 5), np.array([0, -100, 4, 2, 3, 1]))),
        ("CrossEntropyLoss sum", nc.CrossEntropyLoss(reduction="sum"), (x(rng, 4, 3), rng.integers(0, 3, 4))),
        ("CrossEntropyLoss none", nc.CrossEntropyLoss(reduction="none", label_smoothing=0.2),
         (x(rng, 2, 4, 3), rng.integers(0, 4, (2, 3)))),
        ("CrossEntropyLoss z_loss", nc.CrossEntropyLoss(z_loss=0.1, ignore_index=2),
         (x(rng, 2, 5, 3), rng.integers(0, 5, (2, 3)))),
        ("SoftCap", nc.SoftCap(1.5), (x(rng, 3, 4),)),
        ("MSELoss", nc.MSELoss(), (x(rng, 3, 4), x(rng, 3, 4))),
        ("MSELoss sum", nc.MSELoss(reduction="sum"), (x(rng, 3, 4), x(rng, 3, 4))),
        ("MSELoss none", nc.MSELoss(reduction="none"), (x(rng, 3, 4), x(rng, 3, 4))),
    ]
    for norm in ("layernorm", "rmsnorm"):
        for position in ("pre", "post", "deepnorm", "none"):
            for tier in ("reference", "fast"):
                block = nc.TransformerBlock(8, 2, 16, norm, position, n_layers=3, rng=0, norm_tier=tier)
                out.append((f"TransformerBlock {position} {norm} {tier}", p(block), (x(rng, 3, 5, 8),)))
            model = nc.TinyTransformer(9, 8, 2, 2, 6, d_ff=12, norm=norm, position=position, rng=1)
            out.append((f"TinyTransformer {position} {norm}", perturb_parameters(model, rng, 0.2),
                        (rng.integers(0, 9, (3, 6)),)))
    out.append(("TransformerBlock eval", p(nc.TransformerBlock(8, 2, dropout=0.2, rng=0)).eval(),
                (x(rng, 2, 4, 8),)))
    padding = np.array([[0, 0, 0, 1, 1], [0, 0, 0, 0, 0], [0, 1, 1, 1, 1]], dtype=bool)
    for position in ("pre", "post", "deepnorm", "none"):  # encoder layers: not causal, padding masks
        for norm in ("layernorm", "rmsnorm"):
            block = nc.TransformerBlock(8, 2, 16, norm, position, n_layers=3, rng=0, activation="relu", causal=False)
            out.append((f"TransformerBlock encoder {position} {norm}", p(block), (x(rng, 3, 5, 8), padding)))
    out.append(("TransformerBlock encoder no bias, float mask",
                p(nc.TransformerBlock(8, 2, position="post", causal=False, bias=False, rng=0)),
                (x(rng, 3, 5, 8), None, x(rng, 5, 5))))
    memory_padding = np.array([[0, 0, 0, 0, 1, 1], [0, 0, 0, 0, 0, 0], [0, 1, 1, 1, 1, 1]], dtype=bool)
    for position in ("pre", "post", "deepnorm", "none"):  # decoder blocks: x (3, 5, 8), memory (3, 6, 8)
        for norm in ("layernorm", "rmsnorm"):
            block = nc.TransformerDecoderBlock(8, 2, 16, norm, position, n_layers=3, rng=0, activation="relu")
            out.append((f"TransformerDecoderBlock {position} {norm}", p(block),
                        (x(rng, 3, 5, 8), x(rng, 3, 6, 8), None, memory_padding)))
        model = nc.TinySeq2Seq(9, 7, 8, 2, 2, 6, 5, d_ff=12, position=position, rng=1)
        out.append((f"TinySeq2Seq {position}", perturb_parameters(model, rng, 0.2),
                    (rng.integers(0, 9, (3, 6)), rng.integers(0, 7, (3, 5)), memory_padding)))
    # DyT (torch has none: the bridge's twin), alone and in every model that takes norm=
    out += [
        ("DyT", r(nc.DyT(6)), (x(rng, 4, 6),)),
        ("DyT 2d no bias", r(nc.DyT((2, 3), alpha_init=1.2, bias=False)), (x(rng, 2, 2, 3),)),
        ("DyT no affine", r(nc.DyT(4, elementwise_affine=False)), (x(rng, 3, 4),)),
    ]
    for position in ("pre", "post", "deepnorm"):
        for tier in ("reference", "fast"):
            block = nc.TransformerBlock(8, 2, 16, "dyt", position, n_layers=3, rng=0, norm_tier=tier)
            out.append((f"TransformerBlock {position} dyt {tier}", p(block), (x(rng, 3, 5, 8),)))
        block = nc.TransformerDecoderBlock(8, 2, 16, "dyt", position, n_layers=3, rng=0, activation="relu")
        out.append((f"TransformerDecoderBlock {position} dyt", p(block),
                    (x(rng, 3, 5, 8), x(rng, 3, 6, 8), None, memory_padding)))
    model = nc.TinyTransformer(9, 8, 2, 2, 6, d_ff=12, norm="dyt", rng=1)
    out.append(("TinyTransformer pre dyt", perturb_parameters(model, rng, 0.2), (rng.integers(0, 9, (3, 6)),)))
    model = nc.TinySeq2Seq(9, 7, 8, 2, 2, 6, 5, d_ff=12, norm="dyt", rng=1)
    out.append(("TinySeq2Seq pre dyt", perturb_parameters(model, rng, 0.2),
                (rng.integers(0, 9, (3, 6)), rng.integers(0, 7, (3, 5)), memory_padding)))
    # the weight side and the batch variants: torch's weight_norm parametrization, the rest twins
    # (tests/test_torch_bridge_weights.py: every dim, clipping, warm-up, evaluation)
    out += [
        ("WeightNorm", r(nc.WeightNorm(nc.Linear(5, 3), dim=0)), (x(rng, 2, 4, 5),)),
        ("WSLinear", r(nc.WSLinear(5, 3)), (x(rng, 4, 5),)),
        ("LayerScale", r(nc.LayerScale(4)), (x(rng, 2, 3, 4),)),
        ("ReZero", r(nc.ReZero()), (x(rng, 3, 4),)),
        ("BatchRenorm1d train", r(nc.BatchRenorm1d(3, r_max=1.2, d_max=0.1)), (x(rng, 5, 3),)),
        ("BatchRenorm2d eval", warmed(r(nc.BatchRenorm2d(2)), (3, 2, 2, 2), rng).eval(), (x(rng, 3, 2, 2, 3),)),
        ("GhostBatchNorm1d train", r(nc.GhostBatchNorm1d(3, virtual_batch_size=2)), (x(rng, 5, 3, 2),)),
        ("GhostBatchNorm2d train", r(nc.GhostBatchNorm2d(2, virtual_batch_size=3, momentum=None)),
         (x(rng, 7, 2, 2, 2),)),
    ]
    return out


CASES = cases()


@needs_torch
def test_every_supported_class_has_a_round_trip_case():
    covered = {type(m) for _, m, _ in CASES}
    for _, m, _ in CASES:
        covered |= {type(sub) for _, sub in m.named_modules()}
    missing = [cls.__name__ for cls in torch_bridge.CONVERTERS
               if not any(issubclass(c, cls) for c in covered)]
    assert not missing


@needs_torch
@pytest.mark.parametrize("label, module, inputs", CASES, ids=[c[0] for c in CASES])
def test_round_trip_forward_and_every_gradient_to_1e_9(label, module, inputs):
    report = torch_bridge.compare(module, *inputs, out=None)
    assert report.rows[0].name == "output"
    names = [r.name for r in report.rows]
    for name, _ in module.named_parameters():
        assert f"{name} grad" in names
    assert any(r.name.startswith("input") and r.name.endswith("grad") for r in report.rows) == np.issubdtype(
        np.asarray(inputs[0]).dtype, np.floating)
    for row in report.rows:
        assert row.max_abs <= 1e-9, (label, row)
    assert report.passed, str(report)


@needs_torch
def test_to_torch_copies_weights_buffers_dtype_and_mode():
    bn = warmed(randomize_parameters(nc.BatchNorm1d(3), np.random.default_rng(1)), (5, 3),
                np.random.default_rng(2)).eval()
    tbn = torch_bridge.to_torch(bn)
    assert isinstance(tbn, torch.nn.BatchNorm1d) and not tbn.training
    assert tbn.weight.dtype == torch.float64
    assert int(tbn.num_batches_tracked) == 3
    for key, value in bn.state_dict().items():
        np.testing.assert_array_equal(tbn.state_dict()[key].numpy(), value)
    ln32 = torch_bridge.to_torch(nc.LayerNorm(4, dtype=np.float32))
    assert ln32.weight.dtype == torch.float32
    block = torch_bridge.to_torch(nc.TransformerBlock(8, 2, position="deepnorm", n_layers=4, rng=0))
    assert block.alpha == pytest.approx(8 ** 0.25)


@needs_torch
def test_a_fully_masked_row_is_nan_on_both_sides():
    rng = np.random.default_rng(9)
    attn = perturb_parameters(nc.MultiheadSelfAttention(4, 2, rng=0), rng)
    padding = np.array([[1, 1, 1], [0, 0, 1]], dtype=bool)  # sequence 0: every key masked out
    report = torch_bridge.compare(attn, x(rng, 2, 3, 4), padding, out=None)
    assert report.passed, str(report)
    tattn = torch_bridge.to_torch(attn)
    y = tattn(torch.from_numpy(x(rng, 2, 3, 4)), torch.from_numpy(padding)).detach().numpy()
    assert np.isnan(y[0]).all() and not np.isnan(y[1]).any()


@needs_torch
def test_modes_are_copied_per_module():
    model = nc.Sequential(nc.Linear(3, 3), nc.Dropout(0.5))
    model[1].eval()
    tmodel = torch_bridge.to_torch(model)
    assert tmodel.training and tmodel[0].training and not tmodel[1].training


@needs_torch
def test_batchnorm_running_statistics_after_several_forwards_agree():
    rng = np.random.default_rng(3)
    bn = randomize_parameters(nc.BatchNorm2d(2, momentum=0.3), rng)
    for _ in range(3):
        report = torch_bridge.compare(bn, x(rng, 4, 2, 3, 3), out=None)
        assert report.passed, str(report)
        assert {"running_mean", "running_var", "num_batches_tracked"} <= {r.name for r in report.rows}


# --- attention, the encoder layer, and from_torch ----------------------------------------------

@needs_torch
@pytest.mark.parametrize("kwargs, packed", [({}, True), ({"kdim": 5}, False), ({"vdim": 3, "add_bias_kv": True}, False),
                                            ({"add_zero_attn": True}, True)])
def test_multihead_attention_becomes_torchs_own_layer(kwargs, packed):
    m = perturb_parameters(nc.MultiheadAttention(8, 2, rng=0, **kwargs), np.random.default_rng(1))
    t = torch_bridge.to_torch(m)
    assert isinstance(t, torch.nn.MultiheadAttention) and t.batch_first and t._qkv_same_embed_dim == packed
    assert (t.bias_k is not None) == m.add_bias_kv and t.add_zero_attn == m.add_zero_attn
    W = t.in_proj_weight.detach().numpy() if packed else None
    for i, name in enumerate("qkv"):
        theirs = W[8 * i:8 * (i + 1)] if packed else getattr(t, f"{name}_proj_weight").detach().numpy()
        np.testing.assert_array_equal(theirs, getattr(m, name).weight.data)
    key_bias = t.in_proj_bias.detach().numpy()[8:16]
    np.testing.assert_array_equal(key_bias, np.zeros(8) if m.k.bias is None else m.k.bias.data)


@needs_torch
def test_compare_checks_the_three_input_gradients_of_attention():
    rng = np.random.default_rng(2)
    m = perturb_parameters(nc.MultiheadAttention(8, 2, add_bias_kv=True, kdim=5, rng=0), rng)
    report = torch_bridge.compare(m, x(rng, 2, 3, 8), x(rng, 2, 4, 5), x(rng, 2, 4, 8),
                                  np.array([[0, 0, 0, 1], [0, 1, 1, 1]], dtype=bool), out=None)
    names = [r.name for r in report.rows]
    assert names[:4] == ["output", "input 0 grad", "input 1 grad", "input 2 grad"]
    assert [r.shape for r in report.rows[1:4]] == [(2, 3, 8), (2, 4, 5), (2, 4, 8)]
    assert report.passed, str(report)

    class WrongValueGrad(nc.MultiheadAttention):
        def backward(self, dy):
            dq, dk, dv = super().backward(dy)
            return dq, dk, dv * 1.001
    wrong = perturb_parameters(WrongValueGrad(8, 2, rng=0), rng)
    report = torch_bridge.compare(wrong, x(rng, 2, 3, 8), x(rng, 2, 4, 8), x(rng, 2, 4, 8), out=None)
    assert [r.name for r in report.rows if not r.passed] == ["input 2 grad"]


def _round_trip_cases():
    rng = np.random.default_rng(3)
    p = lambda m: perturb_parameters(m, rng)  # noqa: E731
    return [
        ("MultiheadAttention", p(nc.MultiheadAttention(8, 2, rng=0))),
        ("MultiheadAttention everything", p(nc.MultiheadAttention(8, 4, add_bias_kv=True, add_zero_attn=True,
                                                                  kdim=3, vdim=5, causal=True, rng=0))),
        ("MultiheadAttention no bias", p(nc.MultiheadAttention(6, 3, bias=False, add_zero_attn=True, rng=0))),
        ("MultiheadSelfAttention", p(nc.MultiheadSelfAttention(8, 2, causal=True, bias=False, rng=0))),
        ("CausalSelfAttention", p(nc.CausalSelfAttention(8, 4, rng=0))),
        ("TransformerBlock encoder pre", p(nc.TransformerBlock(8, 2, 12, position="pre", causal=False,
                                                               activation="relu", rng=0))),
        ("TransformerBlock post no bias", p(nc.TransformerBlock(8, 2, position="post", bias=False, rng=0))),
        ("TransformerBlock causal gelu_tanh", p(nc.TransformerBlock(8, 2, activation="gelu_tanh", rng=0))),
        ("Sequential", nc.Sequential(p(nc.Linear(4, 6)), nc.GELU(approximate="tanh"), p(nc.LayerNorm(6)),
                                     p(nc.RMSNorm(6)), nc.Dropout(0.2), nc.Sigmoid(), p(nc.Linear(6, 2)))),
        ("norms", nc.Sequential(p(nc.BatchNorm1d(3)), p(nc.GroupNorm(1, 3)), nc.InstanceNorm1d(3), nc.Tanh(),
                                nc.ReLU())),
        ("norms no bias", nc.Sequential(p(nc.BatchNorm1d(3, bias=False)), p(nc.GroupNorm(1, 3, bias=False)),
                                        p(nc.InstanceNorm1d(3, affine=True, bias=False)))),
        ("3d norms", nc.Sequential(p(nc.BatchNorm3d(3, momentum=None)), p(nc.InstanceNorm3d(3, affine=True)),
                                   nc.InstanceNorm3d(3, track_running_stats=True, bias=False))),
        ("float32", p(nc.MultiheadAttention(4, 2, add_bias_kv=True, rng=0, dtype=np.float32)).eval()),
        ("WeightNorm dim=None", p(nc.WeightNorm(nc.Linear(4, 3), dim=None))),
        ("weights and scales", nc.Sequential(p(nc.WeightNorm(nc.Linear(4, 6, bias=False), dim=1)),
                                             p(nc.WSLinear(6, 5, eps=1e-3)), p(nc.LayerScale(5, init=0.1)),
                                             p(nc.ReZero(init=0.5)))),
        ("batch variants", nc.Sequential(p(nc.BatchRenorm1d(3, r_max=2.0, d_max=1.0, momentum=None,
                                                            warmup=(1, 4, 3))),
                                         p(nc.GhostBatchNorm1d(3, virtual_batch_size=4, bias=False)))),
        ("batch variants 2d", nc.Sequential(p(nc.BatchRenorm2d(3, affine=False)),
                                            nc.GhostBatchNorm2d(3, track_running_stats=False)).eval()),
    ]


@needs_torch
@pytest.mark.parametrize("label, module", _round_trip_cases(), ids=[c[0] for c in _round_trip_cases()])
def test_from_torch_gives_back_the_same_module(label, module):
    back = torch_bridge.from_torch(torch_bridge.to_torch(module))
    assert type(back) is type(module) and repr(back) == repr(module) and back.training == module.training
    assert list(back.state_dict()) == list(module.state_dict())
    for key, value in module.state_dict().items():
        assert back.state_dict()[key].dtype == value.dtype
        np.testing.assert_array_equal(back.state_dict()[key], value, err_msg=key)


@needs_torch
def test_from_torch_drops_a_key_bias_that_changes_nothing():
    t = torch.nn.MultiheadAttention(6, 2, batch_first=True, dtype=torch.float64)
    with torch.no_grad():
        t.in_proj_bias.copy_(torch.randn(18, dtype=torch.float64))
    m = torch_bridge.from_torch(t)
    assert m.k.bias is None
    rng = np.random.default_rng(4)
    q, k = x(rng, 2, 3, 6), x(rng, 2, 4, 6)
    ty = t(*(torch.from_numpy(a) for a in (q, k, k)), need_weights=True)[0].detach().numpy()
    np.testing.assert_allclose(m(q, k, k), ty, rtol=1e-12, atol=1e-12)


@needs_torch
@pytest.mark.parametrize("make, error, words", [
    (lambda: torch.nn.Conv1d(2, 2, 3), TypeError, "no normcore twin for Conv1d; supported: BatchNorm1d"),
    (lambda: nc.Linear(2, 2), TypeError, "expects a torch.nn.Module, got Linear"),
    (lambda: torch.nn.MultiheadAttention(4, 2, dropout=0.1), ValueError, "expected dropout=0.0, got 0.1"),
    (lambda: torch.nn.TransformerEncoderLayer(4, 2, 8), ValueError, "self_attn.dropout = dropout.p = 0"),
    (lambda: torch.nn.TransformerEncoderLayer(4, 2, 8, 0.0, torch.tanh), ValueError, "activation must be relu or gelu"),
    (lambda: torch.nn.Linear(2, 2).to(torch.bfloat16), TypeError, "got torch.bfloat16; convert the module first"),
    (lambda: torch.nn.LayerNorm(3, elementwise_affine=False), None, None),
])
def test_from_torch_refuses_what_normcore_cannot_express(make, error, words):
    if error is None:
        assert torch_bridge.from_torch(make()).weight is None
        return
    with pytest.raises(error) as info:
        torch_bridge.from_torch(make())
    assert words in str(info.value)


@needs_torch
def test_pytorchs_own_multihead_attention_samples_run_through_normcore():
    """torch.testing's module_db samples of nn.MultiheadAttention (bias, add_bias_kv, add_zero_attn,
    boolean masks, batch_first or not; unbatched (L, E) inputs) through ``from_torch``: the same
    output, input gradients and parameter gradients to 1e-10."""
    common_modules = pytest.importorskip("torch.testing._internal.common_modules")
    info = next(m for m in common_modules.module_db if m.module_cls is torch.nn.MultiheadAttention)
    samples = info.module_inputs_func(info, device="cpu", dtype=torch.float64, requires_grad=True, training=True)
    assert len(samples) == 64
    rng = np.random.default_rng(5)
    for sample in samples:
        c, f = sample.constructor_input, sample.forward_input
        t = torch.nn.MultiheadAttention(*c.args, **c.kwargs, dtype=torch.float64)
        m = torch_bridge.from_torch(t)
        keys = torch_bridge.key_map(m, torch_bridge.to_torch(m))
        tout = t(*f.args, **f.kwargs)[0]
        dy = rng.standard_normal(tout.shape)
        tout.backward(torch.from_numpy(dy))
        kpm, am = f.kwargs.get("key_padding_mask"), f.kwargs.get("attn_mask")  # (S,) and (H, L, S)
        assert m.batch_first == t.batch_first
        y = m(*(a.detach().numpy() for a in f.args), None if kpm is None else kpm.numpy(),
              None if am is None else am.numpy())  # unbatched (L, E), as torch's
        grads = m.backward(dy)
        what = f"{c.kwargs} masks: {kpm is not None}, {am is not None}"
        np.testing.assert_allclose(y, tout.detach().numpy(), rtol=1e-10, atol=1e-12, err_msg=what)
        for ours, a in zip(grads, f.args):
            np.testing.assert_allclose(ours, a.grad.numpy(), rtol=1e-10, atol=1e-12, err_msg=what)
        tparams = dict(t.named_parameters())
        for name, p in m.named_parameters():
            tkey, rows = keys[name]
            np.testing.assert_allclose(p.grad, tparams[tkey].grad.numpy()[rows], rtol=1e-10, atol=1e-12,
                                       err_msg=f"{what} {name}")


@needs_torch
def test_unknown_module_raises_type_error_listing_what_is_supported():
    class Custom(nc.Module):
        pass
    with pytest.raises(TypeError, match="no PyTorch mapping for Custom.*LayerNorm.*TinyTransformer"):
        torch_bridge.to_torch(nc.Sequential(nc.Linear(2, 2), Custom()))
    with pytest.raises(TypeError, match="normcore Module"):
        torch_bridge.to_torch(torch.nn.Linear(2, 2))


# --- compare finds what is wrong -------------------------------------------------------------

class WrongBackwardLayerNorm(nc.LayerNorm):
    """A LayerNorm whose input gradient is off at one index."""

    def backward(self, dy):
        dx = super().backward(dy)
        dx[1, 2] += 1e-6
        return dx


class WrongWeightGradLinear(nc.Linear):
    def backward(self, dy):
        dx = super().backward(dy)
        self.weight.grad[2, 0] *= 1.001
        return dx


@needs_torch
def test_compare_finds_a_wrong_input_gradient_and_reports_its_index():
    rng = np.random.default_rng(4)
    lines = []
    report = torch_bridge.compare(randomize_parameters(WrongBackwardLayerNorm(5), rng),
                                  x(rng, 3, 5), out=lines.append)
    assert not report.passed
    bad = [r for r in report.rows if not r.passed]
    assert [r.name for r in bad] == ["input grad"]
    assert bad[0].index == (1, 2)
    assert bad[0].max_abs == pytest.approx(1e-6, rel=1e-3)
    assert any("FAIL" in line and "(1,2)" in line for line in lines)
    assert "1 of 4 differ" in lines[-1]
    assert all(len(line) <= 80 for line in lines)


@needs_torch
def test_compare_finds_a_wrong_parameter_gradient_deep_in_a_model():
    rng = np.random.default_rng(5)
    model = nc.Sequential(nc.Linear(4, 3, rng=0), nc.ReLU(), WrongWeightGradLinear(3, 4, rng=1))
    report = torch_bridge.compare(randomize_parameters(model, rng), x(rng, 6, 4), out=None)
    bad = [r for r in report.rows if not r.passed]
    assert [(r.name, r.index) for r in bad] == [("2.weight grad", (2, 0))]


@needs_torch
def test_compare_finds_a_perturbed_output():
    class Shifted(nc.Tanh):
        def forward(self, x):
            y = super().forward(x)
            y[0, 3] += 1e-3
            return y
    rng = np.random.default_rng(6)
    report = torch_bridge.compare(Shifted(), x(rng, 2, 4), out=None)
    assert [(r.name, r.index) for r in report.rows if not r.passed] == [("output", (0, 3))]


@needs_torch
def test_dropout_in_training_differs_because_the_masks_differ_and_says_so():
    lines = []
    report = torch_bridge.compare(nc.Dropout(0.5, rng=0), np.ones((20, 20)), out=lines.append)
    assert not report.passed
    assert any("different masks" in line for line in lines)
    assert all(len(line) <= 80 for line in lines)


@needs_torch
@pytest.mark.parametrize("dtype, tol", [(np.float32, 1e-4), (np.float16, 1e-2)])
def test_tolerance_fits_the_dtype(dtype, tol):
    rng = np.random.default_rng(7)
    ln = nc.LayerNorm(8, dtype=dtype)
    report = torch_bridge.compare(ln, x(rng, 4, 8).astype(dtype), out=None)
    assert (report.atol, report.rtol) == (tol, tol)
    assert report.dtype == np.dtype(dtype).name
    assert report.passed, str(report)


@needs_torch
def test_explicit_dy_and_tolerances_are_used():
    rng = np.random.default_rng(8)
    ln = randomize_parameters(WrongBackwardLayerNorm(5), rng)
    report = torch_bridge.compare(ln, x(rng, 3, 5), dy=x(rng, 3, 5), atol=1e-5, out=None)
    assert report.passed and report.atol == 1e-5


# --- the command line ------------------------------------------------------------------------

@needs_torch
@pytest.mark.parametrize("model", list(compare_command.MODELS))
def test_cli_every_built_in_model_matches(model, capsys):
    assert cli.main(["compare", model]) == 0
    out = capsys.readouterr().out
    assert "all match" in out and ("output" in out or "against torch.optim" in out)  # a module or an optimizer
    assert all(len(line) <= 80 for line in out.splitlines())


@needs_torch
@pytest.mark.parametrize("argv", [["--eval"], ["--fast"], ["--dtype", "float32", "--seed", "3"]])
def test_cli_options(argv, capsys):
    assert cli.main(["compare", "block-deepnorm", *argv]) == 0
    out = capsys.readouterr().out
    assert ("eval mode" if "--eval" in argv else "train mode") in out.splitlines()[0]


@needs_torch
def test_cli_exits_1_when_a_comparison_fails(monkeypatch, capsys):
    def build(ns, rng):
        return WrongBackwardLayerNorm(5), (rng.standard_normal((3, 5)),)
    monkeypatch.setitem(compare_command.MODELS, "layernorm", ("planted", build))
    assert cli.main(["compare", "layernorm"]) == 1
    assert "FAIL" in capsys.readouterr().out


def test_cli_help_lists_models_with_an_example_within_80_columns():
    result = subprocess.run([sys.executable, "-m", "normcore", "compare", "--help"],
                            capture_output=True, text=True, env={**os.environ, "COLUMNS": "80"})
    assert result.returncode == 0
    for name in ("layernorm", "block-deepnorm", "tiny-transformer", "examples:", "normcore compare"):
        assert name in result.stdout
    assert all(len(line) <= 80 for line in result.stdout.splitlines())


def test_cli_unknown_model_is_a_usage_error(capsys):
    with pytest.raises(SystemExit) as exit_:
        cli.main(["compare", "no-such-model"])
    assert exit_.value.code == 2
    err = capsys.readouterr().err
    assert "unknown 'no-such-model'" in err
    assert all(len(line) <= 80 for line in err.splitlines())
