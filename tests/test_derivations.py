"""The step-through derivations: every node's staged gradient against the layer's compact
backward and against finite differences, and the ``explain`` and ``tour`` commands."""

import contextlib
import io
import math
import re

import numpy as np
import pytest

import normcore as nc
from normcore.cli import main
from normcore.derivations import KINDS, step_through
from normcore.derivations import steps as steps_module
from normcore.derivations.steps import LOSS_AND_ACTIVATION_KINDS, standardize_tape
from normcore.nn import softmax, softmax_backward

SHAPES = {
    "batchnorm": [(3, 4), (5, 2), (2, 3, 4), (2, 2, 2, 3)],
    "layernorm": [(3, 4), (6,), (2, 3, 5), (4, 3)],
    "rmsnorm": [(3, 4), (6,), (2, 3, 5), (4, 3)],
    "dyt": [(3, 4), (6,), (2, 3, 5), (2, 2, 2, 3)],
    "softmax": [(3, 4), (6,), (2, 3, 5), (4, 3)],
    "log_softmax": [(3, 4), (6,), (2, 3, 5), (4, 3)],
    "cross_entropy": [(3, 4), (5, 2), (1, 6), (8, 3)],
    "gelu": [(3, 4), (6,), (2, 3, 5), (2, 2, 2, 3)],
    "gelu_tanh": [(3, 4), (6,), (2, 3, 5), (2, 2, 2, 3)],
    "groupnorm": [(3, 4), (2, 4, 3), (2, 6, 2), (2, 2, 2, 3)],
    "instancenorm": [(3, 4), (2, 3, 4), (2, 2, 5), (2, 2, 2, 3)],
    "dropout": [(3, 4), (6,), (2, 3, 5), (2, 2, 2, 3)],
    "residual": [(3, 4), (2, 3, 4), (1, 5), (2, 2, 3)],  # each position: test_derivations_block.py
    "attention": [(3, 4), (4, 2), (2, 3, 4), (1, 5, 3)],  # (T, D) or (B, T, D), one head
    "qk_norm": [(3, 4), (4, 3), (2, 3, 5), (2, 2, 3, 4)],  # q: (T, D), (H, T, D), (B, H, T, D)
    "sync_batchnorm": [(3, 4), (5, 2), (4, 2, 3), (3, 2, 2, 2)],  # the whole batch, over 2 ranks
    "linear": [(3, 4), (4, 1), (2, 3, 5), (2, 2, 1, 3)],  # test_derivations_layers.py: these six
    "relu": [(3, 4), (6,), (2, 3, 5), (2, 2, 2, 3)],
    "sigmoid": [(3, 4), (6,), (2, 3, 5), (2, 2, 2, 3)],
    "tanh": [(3, 4), (6,), (2, 3, 5), (2, 2, 2, 3)],
    "mse": [(3, 4), (6,), (2, 3, 5), (2, 2, 2, 3)],
    "feedforward": [(3, 4), (4, 1), (2, 3, 2), (2, 1, 2, 3)],
    "embedding": [(3, 4), (5, 2), (1, 3), (4, 3)],  # the table (V, D)
    "batch_renorm": [(3, 4), (4, 3), (2, 3, 2), (2, 2, 2, 2)],  # test_derivations_weights.py: these two
    "weight_norm": [(3, 4), (2, 2), (2, 3, 2), (1, 2, 1, 3)],  # x (*, D), D >= 2
    "layer_scale": [(3, 4), (2, 2), (2, 3, 2), (1, 2, 1, 3)],  # x + s * Linear(x): these two too
    "rezero": [(3, 4), (2, 2), (2, 3, 2), (1, 2, 1, 3)],
    "softcap": [(3, 4), (6,), (2, 3, 5), (2, 2, 2, 3)],  # test_derivations_logits.py: these two
    "z_loss": [(3, 4), (5, 2), (1, 6), (8, 3)],
}
CASES = [(kind, shape, seed) for kind in KINDS for shape in SHAPES[kind] for seed in (0, 7)]


def _compact(kind, st):
    """The compact backward of the layer, computed here independently of the step-through."""
    x, dy = st.tape.nodes[0].value, st.dy
    if kind in LOSS_AND_ACTIVATION_KINDS:
        return _compact_loss_or_activation(kind, st)
    if kind == "softmax":
        return {"s": softmax_backward(dy, softmax(x))}
    if kind == "attention":
        return attention_layer_gradients(st)
    if kind == "dyt":  # written out here: t = tanh(alpha x), y = gamma t + beta
        alpha, g = st.tape["alpha"].value, st.tape["gamma"].value
        t = np.tanh(alpha * x)
        du = dy * g * (1 - t ** 2)
        lead = tuple(range(x.ndim - 1))
        return {"x": alpha * du, "alpha": np.sum(du * x, keepdims=True).reshape(1),
                "gamma": np.sum(dy * t, axis=lead), "beta": np.sum(dy, axis=lead)}
    if kind == "residual":  # Pre-Norm written out here: y = x + LN(x) @ W + b
        ln = nc.LayerNorm(x.shape[-1])
        ln.weight.data[...], ln.bias.data[...] = st.tape["gamma"].value, st.tape["beta"].value
        h, rows = ln.forward(x), (-1, x.shape[-1])
        dx = dy + ln.backward(dy @ st.tape["W"].value.T)
        return {"x": dx, "W": h.reshape(rows).T @ dy.reshape(rows), "b": dy.reshape(rows).sum(axis=0),
                "gamma": ln.weight.grad, "beta": ln.bias.grad}
    if kind == "dropout":  # written out here: the mask is where the forward kept x
        mask = st.tape["kept"].value != 0
        return {"x": dy * mask / (1 - steps_module.DROPOUT_P)}
    if kind in ("qk_norm", "sync_batchnorm"):
        return _compact_modern(kind, st)
    if kind in ("batch_renorm", "weight_norm", "layer_scale", "rezero"):
        from test_derivations_weights import written_out as weights_written_out
        return weights_written_out(kind, st)
    if kind in ("linear", "relu", "sigmoid", "tanh", "mse", "feedforward", "embedding"):
        from test_derivations_layers import written_out
        return written_out(kind, st)
    if kind in ("softcap", "z_loss"):
        from test_derivations_logits import written_out as logits_written_out
        return logits_written_out(kind, st)
    if kind == "groupnorm":
        layer = nc.GroupNorm(st.tape["xg"].value.shape[1], x.shape[1])
    elif kind == "instancenorm":
        channels = x.shape[0] if x.ndim == 2 else x.shape[1]  # (C, L) is one unbatched sample
        layer = (nc.InstanceNorm1d if x.ndim < 4 else nc.InstanceNorm2d)(channels, affine=True)
    elif kind == "batchnorm":
        layer = (nc.BatchNorm1d if x.ndim < 4 else nc.BatchNorm2d)(x.shape[1])
    else:
        layer = {"layernorm": nc.LayerNorm, "rmsnorm": nc.RMSNorm}[kind](x.shape[-1])
    layer.weight.data[...] = st.tape["gamma"].value.reshape(layer.weight.shape)
    if layer.bias is not None:
        layer.bias.data[...] = st.tape["beta"].value.reshape(layer.bias.shape)
    layer.forward(x)
    grads = {"x": layer.backward(dy), "gamma": layer.weight.grad}
    if layer.bias is not None:
        grads["beta"] = layer.bias.grad
    return grads


def attention_layer_gradients(st):
    """MultiheadSelfAttention with the tape's parameters (the tape keeps each W as (in, out)):
    its gradients of x and of every parameter, named as on the tape."""
    names = {n.name for n in st.tape}
    x = st.tape["x"].value
    heads = st.tape["qh"].value.shape[-3] if "qh" in names else 1
    layer = nc.MultiheadSelfAttention(x.shape[-1], heads, causal="s_m" in names)
    linears = {p: getattr(layer, p) for p in "qkvo"}
    for p, linear in linears.items():
        linear.weight.data[...] = st.tape[f"W{p}"].value.T
        if linear.bias is not None:
            linear.bias.data[...] = st.tape[f"b{p}"].value
    lead = (None,) * (3 - x.ndim)  # (T, D) as a batch of one
    layer.forward(x[lead])
    grads = {"x": layer.backward(st.dy[lead]).reshape(x.shape)}
    for p, linear in linears.items():
        grads[f"W{p}"] = linear.weight.grad.T
        if linear.bias is not None:
            grads[f"b{p}"] = linear.bias.grad
    return grads


@pytest.mark.parametrize("kind,shape,seed", CASES)
def test_staged_gradient_matches_compact_and_numerical(kind, shape, seed):
    st = step_through(kind, shape=shape, seed=seed)
    assert st.passed, [c for c in st.checks if c.verdict == "DIFFERS"]
    # every node was checked numerically, the inputs and the output also against the compact
    assert {c.node for c in st.checks if c.against == "numerical"} == {n.name for n in st.tape}
    for name, grad in _compact(kind, st).items():
        staged = st.tape[name].grad.reshape(grad.shape)
        assert nc.rel_error(staged, grad) < 1e-12, name
        assert st.check(name, "compact").verdict in ("exact", "close")
    # the upstream gradient is random, not ones: the input gradient is far from zero
    assert np.abs(st.tape.nodes[0].grad).max() > 1e-3


@pytest.mark.parametrize("kind", list(KINDS))
def test_input_gradient_agrees_with_gradcheck_of_the_layer(kind):
    # the step-through's numerical gradient of x matches nc.gradcheck's for the same layer
    st = step_through(kind, shape=(4, 3), seed=3)
    staged = st.tape.nodes[0].grad
    numerical = st.tape.numerical_grad(st.tape.nodes[0], st.dy)
    assert nc.rel_error(staged, numerical) < 1e-8


def test_the_tape_does_not_use_the_compact_formula(monkeypatch):
    def forbidden(*args, **kwargs):
        raise AssertionError("the tape must not call the compact backward")

    monkeypatch.setattr("normcore.norms.layernorm.standardize_backward", forbidden)
    monkeypatch.setattr("normcore.norms.batchnorm.standardize_backward", forbidden)
    rng = np.random.default_rng(0)
    x, g, b, dy = rng.standard_normal((3, 4)), rng.standard_normal(4), rng.standard_normal(4), \
        rng.standard_normal((3, 4))
    tape = standardize_tape(x, g, b, 1e-5, (1,), "D", "N")
    grads = tape.backward(dy)
    # and yet it lands on the compact formula's value
    x_hat = (x - x.mean(1, keepdims=True)) / np.sqrt(x.var(1, keepdims=True) + 1e-5)
    dx_hat = dy * g
    rstd = 1 / np.sqrt(x.var(1, keepdims=True) + 1e-5)
    compact = rstd * (dx_hat - dx_hat.mean(1, keepdims=True)
                      - x_hat * (dx_hat * x_hat).mean(1, keepdims=True))
    assert nc.rel_error(grads["x"], compact) < 1e-12


def test_a_wrong_local_derivative_is_caught(monkeypatch):
    # Break one node's rule (d rstd / d var_eps with the wrong sign): the checks must say so.
    original = steps_module.Tape.rsqrt

    def wrong_rsqrt(self, *args, **kwargs):
        node = original(self, *args, **kwargs)
        vjp = node.edges[0].vjp
        node.edges[0].vjp = lambda g, out, v: -vjp(g, out, v)
        return node

    monkeypatch.setattr(steps_module.Tape, "rsqrt", wrong_rsqrt)
    st = step_through("layernorm", shape=(3, 4), seed=0)
    assert not st.passed
    assert st.check("x", "compact").verdict == "DIFFERS"
    assert st.check("var", "numerical").verdict == "DIFFERS"
    assert st.check("rstd", "numerical").verdict in ("exact", "close")  # above the broken node
    assert "DIFFER" in st.text()


@pytest.mark.parametrize("kind, shape, node, edge, receiver", [
    ("layernorm", (3, 4), "rstd", 0, "var_eps"),   # d var_eps += d_rstd * (-1/2) var_eps**(-3/2)
    ("batchnorm", (2, 3, 4), "var", 0, "xc2"),     # d xc2 += broadcast(d_var) / n
    ("rmsnorm", (3, 4), "x_hat", 1, "rrms"),       # d rrms += sum_D(d_x_hat * x)
    ("softmax", (3, 4), "e", 0, "z"),              # d z += d_e * e
])
def test_a_rule_off_by_1e_4_differs_numerically_at_the_node_it_feeds(monkeypatch, kind, shape, node, edge,
                                                                      receiver):
    """One backward rule a factor 1 + 1e-4 off: the numerical check is sharp enough to call the
    node that rule feeds DIFFERS (not only the compact check of x), and every node above it is
    still right, so the first DIFFERS from the output down points at the wrong rule."""
    op = steps_module.Tape._op

    def off(self, name, *args):
        made = op(self, name, *args)
        if name == node:
            vjp = made.edges[edge].vjp
            made.edges[edge].vjp = lambda *values: vjp(*values) * (1 + 1e-4)
        return made

    monkeypatch.setattr(steps_module.Tape, "_op", off)
    st = step_through(kind, shape=shape, seed=0)
    assert st.check(receiver, "numerical").verdict == "DIFFERS"
    assert st.check(st.tape.nodes[0].name, "compact").verdict == "DIFFERS"
    above = st.tape.nodes[st.tape[receiver].index + 1:]
    assert all(st.check(n.name, "numerical").verdict in ("exact", "close") for n in above)
    assert f"{receiver} (numerical)" in st.text(width=10 ** 6)


def test_a_value_used_twice_receives_both_shares():
    st = step_through("layernorm", shape=(2, 5), seed=1)
    x = st.tape["x"]
    shares = [share for node in st.tape for src, share in node.shares if src is x]
    assert len(shares) == 2  # through the mean and through the centring
    assert np.allclose(shares[0] + shares[1], x.grad, rtol=0, atol=1e-15)


def test_class_scores_by_subject_and_by_student():
    # students A and B, subjects (90 80 70) and (60 50 40): LayerNorm compares each student
    # with themself, BatchNorm each subject across students.
    scores = np.array([[90.0, 80.0, 70.0], [60.0, 50.0, 40.0]])
    ln = step_through("layernorm", scores, gamma=np.ones(3), beta=np.zeros(3))
    bn = step_through("batchnorm", scores, gamma=np.ones(3), beta=np.zeros(3))
    z = 10 / np.sqrt(200 / 3 + 1e-5)
    assert np.allclose(ln.tape["y"].value, [[z, 0, -z], [z, 0, -z]])
    w = 15 / np.sqrt(225 + 1e-5)
    assert np.allclose(bn.tape["y"].value, [[w, w, w], [-w, -w, -w]])
    # with two students every standardised score is +-1 whatever the scores, so BatchNorm's
    # input gradient is almost nothing: a change of x barely changes y
    assert np.abs(bn.tape["x"].grad).max() < 1e-6 < np.abs(ln.tape["x"].grad).max()
    assert ln.passed and bn.passed


@pytest.mark.parametrize("kind", ["batchnorm", "layernorm", "rmsnorm", "softmax"])  # DyT's: the next test
def test_properties_of_the_input_gradient(kind):
    st = step_through(kind, shape=(3, 5), seed=2)
    shift, *rescale = st.properties if kind != "rmsnorm" else [None] + st.properties
    if shift is not None:
        assert shift[1] < 1e-12, shift[0]
    if rescale:
        # sum(dx * x_hat) = r * sum(dx_hat * x_hat) * eps / (v + eps) exactly: zero only when eps
        # is, because then mean(x_hat**2) = v / (v + eps) would be 1
        t, axis = st.tape, 0 if kind == "batchnorm" else 1
        r, v = (t["rstd"], t["var"]) if kind != "rmsnorm" else (t["rrms"], t["ms"])
        s = np.sum(t["x_hat"].grad * t["x_hat"].value, axis=axis, keepdims=True)
        predicted = np.max(np.abs(r.value * s * st.eps / (v.value + st.eps)))
        assert rescale[0][1] == pytest.approx(predicted, rel=1e-6, abs=1e-15), rescale[0][0]


def test_dyt_properties_and_its_one_route():
    """DyT has no reduction: dx is alpha * gamma * (1 - t**2) * dy element by element, alpha's
    share sums over every element, and x reaches y by one route only."""
    st = step_through("dyt", shape=(3, 5), seed=2, alpha=0.7)
    assert st.passed and st.tape["alpha"].value.tolist() == [0.7]
    assert [p[1] < 1e-14 for p in st.properties] == [True, True], st.properties
    t = st.tape
    np.testing.assert_allclose(t["alpha"].grad, [np.sum(t["u"].grad * t["x"].value)], rtol=1e-13)
    assert [n.name for n in t] == ["x", "alpha", "gamma", "beta", "u", "t", "scaled", "y"]
    graph = st.graph()
    assert list(graph.routes) == ["direct: x -> u -> t -> scaled -> y"] and graph.target == "y"
    assert "d_u += d_t * (1 - t**2)" in st.text() and "element by element" in st.text()


def test_dyt_tanh_rule_written_with_the_input_is_caught(monkeypatch):
    """The common mistake, tanh'(u) = 1 - u**2 instead of 1 - t**2: every check below t fails."""
    original = steps_module.Tape.tanh

    def wrong_tanh(self, *args, **kwargs):
        node = original(self, *args, **kwargs)
        node.edges[0].vjp = lambda g, out, v: g * (1.0 - v * v)
        return node

    monkeypatch.setattr(steps_module.Tape, "tanh", wrong_tanh)
    st = step_through("dyt", shape=(3, 4), seed=0)
    assert not st.passed
    for node in ("x", "alpha"):
        assert st.check(node, "compact").verdict == "DIFFERS"
    assert st.check("u", "numerical").verdict == "DIFFERS"
    assert st.check("t", "numerical").verdict in ("exact", "close")  # above the broken node


def test_latex_is_well_formed():
    for kind in KINDS:
        for node in step_through(kind, shape=(2, 3)).tape:
            for tex in [node.formula_tex] + [e.local_tex for e in node.edges]:
                assert tex.count("{") == tex.count("}"), tex
                assert "^2_" not in tex, tex  # a double script, e.g. x_c^2_i


def test_bad_requests_raise_clear_errors():
    with pytest.raises(ValueError, match="unknown step-through 'spectralnorm'"):
        step_through("spectralnorm")
    with pytest.raises(ValueError, match="more than one value per channel"):
        step_through("batchnorm", shape=(1, 4))
    with pytest.raises(ValueError, match="rank 2 or 3 or 4"):
        step_through("batchnorm", shape=(4,))
    with pytest.raises(ValueError, match=r"dy must have the input's shape \(2, 3\)"):
        step_through("layernorm", shape=(2, 3), dy=np.ones((3, 2)))


def _run(argv):
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        status = main(argv)
    return status, out.getvalue()


@pytest.mark.parametrize("kind", list(KINDS))
def test_explain_prints_at_most_80_columns(kind):
    status, text = _run(["explain", kind, "--shape", "2x4", "--seed", "3"])
    assert status == 0
    lines = text.splitlines()
    assert len(lines) > 50 and max(len(line) for line in lines) <= 80
    assert "checks are exact or close" in lines[-1]
    assert "TeX" in text
    assert "TeX" not in _run(["explain", kind, "--no-latex"])[1]


@pytest.mark.parametrize("shape", ["2x12", "2x2x3x3"])
def test_explain_wraps_wide_and_deep_inputs_at_80_columns(shape):
    status, text = _run(["explain", "batchnorm", "--shape", shape])
    assert status == 0 and max(len(line) for line in text.splitlines()) <= 80


def test_causal_softmax_masks_the_future():
    st = step_through("softmax", shape=(2, 4, 4), seed=1, causal=True)
    assert st.passed
    future = np.triu(np.ones((4, 4), dtype=bool), 1)
    assert np.all(st.tape["p"].value[..., future] == 0) and np.all(st.tape["s"].grad[..., future] == 0)
    assert np.allclose(st.tape["p"].value.sum(-1), 1)
    status, text = _run(["explain", "softmax", "--shape", "4x4", "--causal"])
    assert status == 0 and "-inf" in text and "causal mask" in text
    with pytest.raises(ValueError, match="square last two axes"):
        step_through("softmax", shape=(3, 4), causal=True)
    with pytest.raises(ValueError, match="causal applies to the softmax and self-attention step-throughs only, "
                                         "got LayerNorm"):  # every kind that takes it, from the registry
        step_through("layernorm", shape=(4, 4), causal=True)
    assert _run(["explain", "softmax", "--shape", "3x4", "--causal"])[0] == 2


def _refused(argv):
    """The exit status and the message of a command argparse refuses."""
    err = io.StringIO()
    with pytest.raises(SystemExit) as exc, contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        main(argv)
    return exc.value.code, " ".join(err.getvalue().split())


@pytest.mark.parametrize("shape", [["--shape", "-3x4"], ["--shape=-3x4"], ["--shape", "0x4"], ["--shape", "3x"]])
def test_explain_says_what_a_shape_is(shape):
    status, err = _refused(["explain", "layernorm", *shape])
    assert status == 2 and "argument --shape: expected a shape: positive integers joined by x" in err, err
    assert "expected one argument" not in err


def test_explain_takes_a_kind_in_any_case():
    assert _run(["explain", "LayerNorm", "--summary"]) == _run(["explain", "layernorm", "--summary"])
    assert _run(["explain", "Log-Softmax", "--shape", "2x3", "--summary"])[0] == 0
    status, err = _refused(["explain", "SpectralNorm"])
    assert status == 2 and "unknown step-through 'SpectralNorm'; choose one of batchnorm, layernorm" in err


def test_explain_causal_names_every_computation_that_takes_it():
    err = io.StringIO()
    with contextlib.redirect_stderr(err):
        status, _text = _run(["explain", "layernorm", "--causal"])
    message = " ".join(err.getvalue().split())
    assert status == 2 and ("argument --causal: causal applies to the softmax and self-attention "
                            "step-throughs only, got LayerNorm") in message, message


def test_explain_rejects_bad_shapes():
    with pytest.raises(SystemExit) as exc, contextlib.redirect_stderr(io.StringIO()):
        main(["explain", "layernorm", "--shape", "2y4"])
    assert exc.value.code == 2
    err = io.StringIO()
    with contextlib.redirect_stderr(err):
        status, text = _run(["explain", "batchnorm", "--shape", "1x4"])
    assert status == 2 and "more than one value per channel" in " ".join(err.getvalue().split())
    assert "argument --shape" in err.getvalue() and not text


# The tour (`normcore tour`) is run, in English and in Chinese, by
# tests/test_i18n_cli.py::test_tour_speaks_chinese_within_80_columns_with_the_numbers_of_the_english_one.


@pytest.mark.parametrize("kind", list(KINDS))
def test_the_graph_has_the_tapes_nodes_and_edges(kind):
    st = step_through(kind, shape=(4, 3))
    graph = st.graph()
    assert list(graph.nodes) == [n.name for n in st.tape]
    assert [f"{a}->{b}" for a, b in graph.edges] == [f"{e.source.name}->{n.name}" for n in st.tape for e in n.edges]


# Drawing a picture takes a second: the command is run on a norm, a block-level computation and
# the widest tapes (the pictures of every kind are drawn by the docs' tests and test_graph_readable).
@pytest.mark.parametrize("kind", ["layernorm", "residual", "attention", "sync_batchnorm"])
def test_explain_graph_writes_a_png_whose_nodes_are_the_tapes(kind, tmp_path):
    from PIL import Image

    path = tmp_path / f"{kind}.png"
    status, text = _run(["explain", kind, "--shape", "4x3", "--graph", str(path)])
    first, *rest = text.splitlines()
    assert status == 0 and first == f"wrote {path}" and max(len(line) for line in rest) <= 80
    tape = step_through(kind, shape=(4, 3)).tape
    with Image.open(path) as image:
        assert image.format == "PNG" and image.size[0] > 600
        description = image.text["Description"]
    nodes, edges = description.removeprefix("nodes: ").split("; edges: ")
    assert nodes.split(", ") == [n.name for n in tape]
    assert edges.split(", ") == [f"{e.source.name}->{n.name}" for n in tape for e in n.edges]
    assert _run(["explain", kind, "--graph", str(tmp_path / "missing" / "g.png")])[0] == 2


@pytest.mark.parametrize("kind", ["layernorm", "batchnorm"])
def test_graph_colours_the_three_routes_from_x_to_x_hat(kind):
    from matplotlib.text import Annotation

    from normcore.derivations.graph import ROUTE_STYLES

    st = step_through(kind, shape=(4, 3))
    graph = st.graph()
    assert list(graph.routes.values()) == [
        [("x", "xc"), ("xc", "x_hat")],
        [("x", "mean"), ("mean", "xc")],
        [("xc", "xc2"), ("xc2", "var"), ("var", "var_eps"), ("var_eps", "rstd"), ("rstd", "x_hat")]]
    assert [label.split(":")[0] for label in graph.routes] == [
        "direct", "through the mean", "through the variance"]
    # each route its own colour and its own line style: readable without colour vision
    assert len({c for c, _ in ROUTE_STYLES}) == len({s for _, s in ROUTE_STYLES}) == 3
    fig = graph.figure()
    ax = fig.axes[0]
    arrows = [t for t in ax.texts if isinstance(t, Annotation)]
    boxes = [t for t in ax.texts if not isinstance(t, Annotation)]
    assert sorted(t.get_text().split("\n")[0] for t in boxes) == sorted(n.name for n in st.tape)
    assert len(arrows) == len(graph.edges)
    styles = {(a.arrow_patch.get_edgecolor(), a.arrow_patch.get_linestyle()) for a in arrows}
    assert len(styles) == 4  # three routes and the grey of the parameters and later steps
    # the direct route and the variance route are the shares the backward adds up at xc and x
    assert np.allclose(st.tape["x_hat"].share("xc") + st.tape["xc2"].share("xc"), st.tape["xc"].grad)
    assert np.allclose(st.tape["xc"].share("x") + st.tape["mean"].share("x"), st.tape["x"].grad)


def test_rmsnorm_graph_has_two_routes_and_softmax_no_parameters():
    rms = step_through("rmsnorm", shape=(3, 4)).graph()
    assert [label.split(":")[0] for label in rms.routes] == ["direct", "through the mean square"]
    assert rms.positions["x2"][1] == -1 and rms.positions["gamma"][1] == 1
    soft = step_through("softmax", shape=(3, 4)).graph()
    assert soft.target == "p" and [label.split(":")[0] for label in soft.routes] == [
        "direct", "through the max", "through the sum"]
    assert all(soft.route_of(edge) for edge in soft.edges)


def _norm_jacobian(v_hat, r):
    """d v_hat / d v of one standardised vector, as the notebooks write it for both norms."""
    n = v_hat.size
    return r / n * (n * np.eye(n) - 1 - np.outer(v_hat, v_hat))


def test_batchnorm_jacobian_is_layernorms_over_the_batch_axis():
    rng = np.random.default_rng(5)
    x = rng.normal(3.0, 2.0, size=(5, 3))
    st = step_through("batchnorm", x, seed=5)
    x_hat, r, g = st.tape["x_hat"].value, st.tape["rstd"].value, st.tape["x_hat"].grad
    bn, h = nc.BatchNorm1d(3, affine=False), 1e-6
    numerical = np.zeros((5, 3, 5, 3))
    for j, d in np.ndindex(5, 3):
        step = np.zeros_like(x)
        step[j, d] = h
        numerical[:, :, j, d] = (bn(x + step) - bn(x - step)) / (2 * h)
    for c in range(3):
        J = _norm_jacobian(x_hat[:, c], r[0, c])
        assert np.abs(J - numerical[:, c, :, c]).max() < 1e-6
        assert np.allclose(J @ g[:, c], st.tape["x"].grad[:, c], atol=1e-12)
        for d in set(range(3)) - {c}:
            assert np.abs(numerical[:, c, :, d]).max() < 1e-9  # no coupling between channels
    assert np.allclose(nc.LayerNorm(5, elementwise_affine=False)(x.T), x_hat.T)


def test_layernorm_jacobian_null_directions_and_scale():
    st = step_through("layernorm", shape=(3, 4), seed=0)
    x_hat, r = st.tape["x_hat"].value[0], st.tape["rstd"].value[0, 0]
    var = st.tape["var"].value[0, 0]
    J = _norm_jacobian(x_hat, r)
    assert np.abs(J @ np.ones(4)).max() < 1e-12  # a shift: exactly nothing
    assert np.allclose(J @ x_hat, r * x_hat * st.eps / (var + st.eps))  # a rescaling: ~eps
    eig = np.linalg.eigvalsh(J)
    assert np.abs(eig[:2]).max() < 1e-4 and np.allclose(eig[2:], r)


def _compact_modern(kind, st):
    """QK-norm: the two norm layers' backward through s = q_n k_n^T / sqrt(D); SyncBatchNorm:
    plain BatchNorm on the ranks' rows put back together."""
    t, dy = st.tape, st.dy
    names = {n.name for n in t}
    if kind == "qk_norm":
        D = t["q"].value.shape[-1]
        made = {}
        for of in "qk":
            layer = nc.RMSNorm(D) if "rrms_q" in names else nc.LayerNorm(D, bias=f"beta_{of}" in names)
            layer.weight.data[...] = t[f"gamma_{of}"].value
            if layer.bias is not None:
                layer.bias.data[...] = t[f"beta_{of}"].value
            made[of] = layer, layer.forward(t[of].value)
        (q_norm, q_n), (k_norm, k_n) = made["q"], made["k"]
        grads = {"q": q_norm.backward(dy @ k_n / math.sqrt(D)),
                 "k": k_norm.backward(np.swapaxes(dy, -1, -2) @ q_n / math.sqrt(D))}
        for of, (layer, _) in made.items():
            grads[f"gamma_{of}"] = layer.weight.grad
            if layer.bias is not None:
                grads[f"beta_{of}"] = layer.bias.grad
        return grads
    xs = [t[f"x_{r}"].value for r in range(len([n for n in names if n.startswith("x_") and n[2:].isdigit()]))]
    x = np.concatenate(xs)
    layer = (nc.BatchNorm1d if x.ndim < 4 else nc.BatchNorm2d)(x.shape[1])
    layer.weight.data[...] = t["gamma"].value.ravel()
    layer.bias.data[...] = t["beta"].value.ravel()
    layer.forward(x)
    dx = np.split(layer.backward(dy), np.cumsum([len(v) for v in xs])[:-1])
    return {**{f"x_{r}": d for r, d in enumerate(dx)}, "gamma": layer.weight.grad, "beta": layer.bias.grad}


# --- log-softmax, cross-entropy and GELU ---------------------------------------------------------
def _compact_loss_or_activation(kind, st):
    """Their compact backward, written out here independently of the step-through and normcore.nn."""
    x, dy = st.tape.nodes[0].value, st.dy
    if kind == "log_softmax":  # ds = dlogp - p * sum(dlogp)
        return {"s": dy - softmax(x) * dy.sum(-1, keepdims=True)}
    if kind == "cross_entropy":  # ds = dloss * (softmax(s) - onehot(y)) / N
        onehot = np.eye(x.shape[1])[st.target]
        return {"s": dy[0, 0] * (softmax(x) - onehot) / x.shape[0]}
    if kind == "gelu":  # y = x Phi(x): dx = dy (Phi + x phi)
        Phi = 0.5 * (1 + np.vectorize(math.erf)(x / math.sqrt(2)))
        phi = np.exp(-x * x / 2) / math.sqrt(2 * math.pi)
        return {"x": dy * (Phi + x * phi)}
    k, c = math.sqrt(2 / math.pi), 0.044715  # y = x (1 + tanh(k (x + c x**3))) / 2
    t = np.tanh(k * (x + c * x ** 3))
    return {"x": dy * ((1 + t) / 2 + x / 2 * (1 - t * t) * k * (1 + 3 * c * x * x))}


@pytest.mark.parametrize("seed", [0, 3, 11])
@pytest.mark.parametrize("shape", [(3, 4), (6, 2), (2, 7)])
def test_cross_entropy_staged_gradient_is_softmax_minus_onehot_over_n(shape, seed):
    rng = np.random.default_rng(seed)
    logits = rng.normal(0.0, 3.0, size=shape)
    target = rng.integers(0, shape[1], size=shape[0])
    st = step_through("cross_entropy", logits, target=target)
    assert st.passed and st.tape.output.value.shape == (1, 1)
    p = np.exp(logits - logits.max(1, keepdims=True))
    p /= p.sum(1, keepdims=True)
    fused = (p - np.eye(shape[1])[target]) / shape[0]
    np.testing.assert_allclose(st.tape["s"].grad, fused, rtol=1e-12, atol=1e-15)
    loss = -np.mean(np.log(p[np.arange(shape[0]), target]))
    assert st.tape.output.value[0, 0] == pytest.approx(loss, rel=1e-12)
    # only the picked entries get a share from pick; the rest of dlogp is 0
    share = st.tape["picked"].share("logp")
    assert np.count_nonzero(share) == shape[0] and np.all(share[np.arange(shape[0]), target] == -1 / shape[0])
    assert all(value < 1e-14 for _, value in st.properties), st.properties
    # an upstream gradient of 2.5 scales everything by 2.5
    twice = step_through("cross_entropy", logits, target=target, dy=2.5)
    np.testing.assert_allclose(twice.tape["s"].grad, 2.5 * fused, rtol=1e-12, atol=1e-15)


def test_log_softmax_steps_and_its_stability():
    st = step_through("log-softmax", shape=(3, 5), seed=2)  # "log-softmax" names log_softmax
    assert st.kind == "log_softmax" and st.passed
    assert [n.name for n in st.tape] == ["s", "m", "z", "e", "total", "lse", "logp"]
    assert st.properties[0][1] < 1e-14, st.properties
    np.testing.assert_allclose(np.exp(st.tape["logp"].value).sum(-1), 1.0, rtol=1e-14)
    # never log(softmax): where softmax underflows to 0, the tape's logp stays finite and exact
    big = step_through("log_softmax", np.array([[-800.0, 1e4]]), dy=np.array([[1.0, -1.0]]))
    assert big.tape["logp"].value.tolist() == [[-10800.0, 0.0]] and big.passed
    graph = st.graph()
    assert [label.split(":")[0] for label in graph.routes] == ["direct", "through the max", "through the sum"]
    assert graph.target == "logp"


@pytest.mark.parametrize("kind,nodes,steps", [
    ("gelu", ["x", "u", "e", "e1", "Phi", "y"], ["scale", "erf", "add 1", "halve", "gate"]),
    ("gelu_tanh", ["x", "x3", "cx3", "w", "u", "t", "t1", "h", "y"],
     ["cube", "scale by c", "add", "scale by k", "tanh", "add 1", "halve", "gate"])])
def test_gelu_tapes_in_both_forms(kind, nodes, steps):
    st = step_through(kind, shape=(3, 5), seed=4)
    assert st.passed and [n.name for n in st.tape] == nodes
    assert [n.step for n in st.tape][1:] == steps
    assert st.properties[0][1] < 1e-14, st.properties
    # x reaches y twice: as the gated value and through the gate; the backward adds both shares
    x = st.tape["x"]
    shares = [share for node in st.tape for src, share in node.shares if src is x]
    assert len(shares) == (2 if kind == "gelu" else 3)
    np.testing.assert_allclose(sum(shares), x.grad, rtol=0, atol=1e-14)
    routes = list(st.graph().routes)
    assert routes[0] == "direct: x -> y" and len(routes) == 2
    if kind == "gelu_tanh":  # x used twice inside the branch: x + c * x**3
        assert routes[1].endswith("-> h -> y, x -> w"), routes


def test_gelu_forms_differ_by_the_documented_amount():
    x = np.linspace(-4.0, 4.0, 81)
    exact = step_through("gelu", x).tape.output.value
    approx = step_through("gelu_tanh", x).tape.output.value
    gap = np.abs(exact - approx)
    assert 1e-4 < gap.max() < 4.8e-4 and abs(x[gap.argmax()]) > 2


def test_gelu_erf_rule_without_its_factor_is_caught(monkeypatch):
    """The common slip, d erf(u)/du = exp(-u**2) without 2/sqrt(pi): every check below e fails."""
    original = steps_module.Tape.erf

    def wrong_erf(self, *args, **kwargs):
        node = original(self, *args, **kwargs)
        node.edges[0].vjp = lambda g, out, v: g * np.exp(-v * v)
        return node

    monkeypatch.setattr(steps_module.Tape, "erf", wrong_erf)
    st = step_through("gelu", shape=(3, 4), seed=0)
    assert not st.passed
    assert st.check("x", "compact").verdict == "DIFFERS"
    assert st.check("u", "numerical").verdict == "DIFFERS"
    assert st.check("e", "numerical").verdict in ("exact", "close")  # above the broken node
    assert st.properties[0][1] > 1e-3


def test_cross_entropy_bad_requests_raise_clear_errors():
    with pytest.raises(ValueError, match=r"one class index in \[0, 4\) per row"):
        step_through("cross_entropy", shape=(3, 4), target=[0, 4, 1])
    with pytest.raises(ValueError, match=r"shape \(3,\)"):
        step_through("cross_entropy", shape=(3, 4), target=[0, 1])
    with pytest.raises(ValueError, match="dy must be one number"):
        step_through("cross_entropy", shape=(3, 4), dy=np.ones((3, 4)))
    with pytest.raises(ValueError, match="rank 2"):
        step_through("cross_entropy", shape=(2, 3, 4))
    with pytest.raises(ValueError, match="causal applies to the softmax and self-attention"):
        step_through("log_softmax", shape=(4, 4), causal=True)
    with pytest.raises(ValueError, match="target applies to the cross-entropy and cross-entropy with z-loss "
                                         "step-throughs only"):
        step_through("log_softmax", shape=(3, 4), target=[0, 1, 2])


def test_explain_cross_entropy_shows_targets_and_the_fused_gradient():
    status, text = _run(["explain", "cross_entropy", "--shape", "4x3", "--seed", "5"])
    assert status == 0 and max(len(line) for line in text.splitlines()) <= 80
    st = step_through("cross_entropy", shape=(4, 3), seed=5)
    assert f"Targets y (one class per row): {st.target.tolist()}" in text
    assert "softmax(s) - onehot(y)) / N" in text and "dL/dloss = dy = 1" in text
    assert "loss (fwd) (1, 1)" in text


# --- GroupNorm, InstanceNorm and dropout -------------------------------------------------------
def test_groupnorm_is_layernorm_on_its_reshape():
    """G = 1: one group per sample, so x_hat is LayerNorm's over the flattened (C, *S)."""
    x = np.random.default_rng(4).normal(2.0, 3.0, size=(2, 3, 4))
    gn = step_through("groupnorm", x, groups=1, seed=4)
    ln = step_through("layernorm", x.reshape(2, 12), seed=4)
    assert gn.tape["xg"].value.shape == (2, 1, 12) and gn.passed
    np.testing.assert_allclose(gn.tape["x_hat"].value.reshape(2, 12), ln.tape["x_hat"].value,
                               rtol=0, atol=1e-13)
    # with the same upstream gradient on x_hat, the two backward passes agree on dx
    assert [n.step for n in gn.tape][3] == "group" and gn.tape["x_hat"].step == "ungroup"
    assert "d_x += reshape(d_xg, (2, 3, 4))" in gn.text()


@pytest.mark.parametrize("groups", [1, 2, 4])
def test_groupnorm_groups_and_instancenorm_is_one_group_per_channel(groups):
    rng = np.random.default_rng(groups)
    x, g, b = rng.normal(1.0, 2.0, size=(2, 4, 3)), rng.normal(size=4), rng.normal(size=4)
    gn = step_through("groupnorm", x, groups=groups, gamma=g, beta=b, seed=groups)
    assert gn.passed and gn.tape["xg"].value.shape == (2, groups, 12 // groups)
    assert gn.properties[0][1] < 1e-12  # each group's dx sums to 0
    # and is orthogonal to the group's x_hat up to eps: r * sum_K(dx_hat * x_hat) * eps / (v + eps)
    t = gn.tape
    s = np.sum(t["xg_hat"].grad * t["xg_hat"].value, axis=2, keepdims=True)
    predicted = np.max(np.abs(t["rstd"].value * s * gn.eps / (t["var"].value + gn.eps)))
    assert gn.properties[1][1] == pytest.approx(predicted, rel=1e-6, abs=1e-15)
    if groups == 4:
        inn = step_through("instancenorm", x, gamma=g, beta=b, seed=groups)
        assert inn.passed
        np.testing.assert_allclose(inn.tape["x"].grad, gn.tape["x"].grad, rtol=1e-12, atol=1e-14)


def test_instancenorm_unbatched_sample_and_its_checks():
    st = step_through("instancenorm", shape=(3, 5), seed=1)  # (C, L): one sample
    assert st.passed and st.tape["xg"].value.shape == (1, 3, 5)
    assert st.reference == "InstanceNorm1d.backward"
    assert step_through("instancenorm", shape=(2, 2, 3, 2)).reference == "InstanceNorm2d.backward"


def test_dropout_passes_dy_through_the_forwards_mask():
    st = step_through("dropout", shape=(4, 5), seed=3, p=0.25)
    assert st.passed and st.reference == "Dropout.backward"
    mask, t = st.mask, st.tape
    assert 0 < mask.sum() < mask.size  # some kept, some dropped
    np.testing.assert_array_equal(t["x"].grad[~mask], 0)
    np.testing.assert_allclose(t["x"].grad[mask], st.dy[mask] / 0.75, rtol=1e-15)
    np.testing.assert_allclose(t["y"].value, t["x"].value * mask / 0.75, rtol=1e-15)
    assert st.properties[0][1] == 0.0 and st.properties[1][1] < 1e-15
    assert [n.name for n in t] == ["x", "kept", "y"]
    assert list(st.graph().routes) == ["direct: x -> kept -> y"]
    text = st.text()
    assert "p = 0.25" in text and "1/(1-p) = 1.333" in text and "The mask (1 keeps" in text
    # another seed draws another mask; the layer's own forward agrees each time (checked above)
    assert not np.array_equal(step_through("dropout", shape=(4, 5), seed=4, p=0.25).mask, mask)


def test_dropout_backward_without_the_mask_is_caught(monkeypatch):
    """The mistake of passing dy straight through the mask node: the checks name x."""
    original = steps_module.Tape.scale

    def forgetful(self, a, c, cname, *args, **kwargs):
        node = original(self, a, c, cname, *args, **kwargs)
        if cname == "mask":
            node.edges[0].vjp = lambda g, out, v: g
        return node

    monkeypatch.setattr(steps_module.Tape, "scale", forgetful)
    st = step_through("dropout", shape=(3, 4), seed=0)
    assert not st.passed
    assert st.check("x", "compact").verdict == "DIFFERS"
    assert st.check("x", "numerical").verdict == "DIFFERS"
    assert st.check("kept", "numerical").verdict in ("exact", "close")  # above the broken node


def test_grouped_and_dropout_bad_requests_raise_clear_errors():
    with pytest.raises(ValueError, match="groups must divide the 4 channels"):
        step_through("groupnorm", shape=(2, 4, 3), groups=3)
    with pytest.raises(ValueError, match="groups must divide the 4 channels"):
        step_through("groupnorm", shape=(2, 4, 3), groups=True)
    with pytest.raises(ValueError, match="more than one value per group"):
        step_through("groupnorm", shape=(3, 4), groups=4)
    with pytest.raises(ValueError, match="groups applies to the GroupNorm step-through only, got InstanceNorm"):
        step_through("instancenorm", shape=(2, 3, 4), groups=3)
    with pytest.raises(ValueError, match="rank 2 or 3 or 4"):
        step_through("instancenorm", shape=(6,))
    with pytest.raises(ValueError, match="p = 1 drops every element"):
        step_through("dropout", p=1.0)
    err = io.StringIO()
    with contextlib.redirect_stderr(err):
        status, text = _run(["explain", "instancenorm", "--shape", "3x1"])
    assert status == 2 and "more than one value per group" in " ".join(err.getvalue().split())


@pytest.mark.parametrize("kind,shape", [("groupnorm", "2x4x3"), ("instancenorm", "2x2x2x3"),
                                        ("dropout", "2x4x3")])
def test_explain_grouped_and_dropout_on_spatial_inputs(kind, shape):
    status, text = _run(["explain", kind, "--shape", shape, "--seed", "5"])
    lines = text.splitlines()
    assert status == 0 and max(len(line) for line in lines) <= 80
    assert "checks are exact or close" in lines[-1]
    if kind == "dropout":
        assert "The mask (1 keeps an element, 0 drops it)" in text and "d_kept += d_y * 1/(1-p)" in text
    else:  # the reshape to the groups and back are nodes of their own
        assert "xg = reshape(x, (2, " in text and "x_hat = reshape(xg_hat, (2, " in text


# --- explain --step (paced by stdin) and --summary (no values) ---------------------------------
def _step(kind, keys, monkeypatch, *extra):
    """explain KIND --step with ``keys`` as the lines typed; the nodes shown, in order."""
    monkeypatch.setattr("sys.stdin", io.StringIO(keys))
    status, text = _run(["explain", kind, "--step", "--shape", "2x4", *extra])
    shown = [int(line[1:3]) for line in text.splitlines() if line[:1] == "[" and line[3:4] == "]"]
    return status, text, shown


# three backward nodes or more (ReLU's, Tanh's and Embedding's two: test_derivations_layers.py)
STEPPED = [kind for kind in KINDS if kind not in ("relu", "tanh", "embedding")]


@pytest.mark.parametrize("kind", STEPPED)
def test_step_goes_on_goes_back_and_quits(kind, monkeypatch):
    order = [node.index for node in reversed(step_through(kind, shape=(2, 4)).tape.nodes)]
    status, text, shown = _step(kind, "\n\nb\n\nq\n", monkeypatch)
    assert status == 0
    # Enter, Enter: nodes 1, 2, 3; b: back to 2; Enter: 3 again; q: nothing more, no checks
    assert shown == [order[0], order[1], order[2], order[1], order[2]]
    n = len(order)
    assert [line.split("]")[0] for line in text.splitlines() if line.startswith("[node ")] == [
        f"[node {k}/{n}" for k in (1, 2, 3, 2, 3)]
    assert "== Checks" not in text and "checks are exact or close" not in text
    assert text.startswith(str(step_through(kind, shape=(2, 4)).title))  # the header comes first
    assert max(len(line) for line in text.splitlines()) <= 80


def test_step_back_at_the_first_node_stays_there(monkeypatch):
    status, text, shown = _step("dropout", "b\nq\n", monkeypatch)
    assert shown == [2, 2] and status == 0


@pytest.mark.parametrize("kind", STEPPED)
def test_step_runs_to_the_end_when_stdin_is_closed(kind, monkeypatch):
    status, text, shown = _step(kind, "\n", monkeypatch, "--no-latex")  # one Enter, then EOF
    order = [node.index for node in reversed(step_through(kind, shape=(2, 4)).tape.nodes)]
    assert status == 0 and shown == order
    assert text.count("[node ") == 2  # it waited twice, then stopped waiting
    assert "== Checks" in text and "checks are exact or close" in text.splitlines()[-1]
    assert "TeX" not in text
    # the same per-node lines as the whole step-through prints
    full = _run(["explain", kind, "--shape", "2x4", "--no-latex"])[1]
    assert text[text.index(f"[{order[-1]:>2}] "):text.index("== Checks")].strip() in full


@pytest.mark.parametrize("kind", list(KINDS))
def test_summary_has_the_rules_and_verdicts_but_no_values(kind):
    st = step_through(kind, shape=(3, 4))
    status, text = _run(["explain", kind, "--summary"])
    full = _run(["explain", kind])[1]
    assert status == 0 and max(len(line) for line in text.splitlines()) <= 80
    assert re.search(r"\d\.\d{4}", full) and not re.search(r"\d\.\d{4}", text)  # array values
    shorter = 1.8 if kind == "sync_batchnorm" else 2  # its ranks hold one or two rows of values each
    assert "TeX" not in text and len(text.splitlines()) < len(full.splitlines()) / shorter
    words = " ".join(text.split())  # the wrapped lines as one line
    for node in st.tape:
        assert f"[{node.index:>2}] {node.name}: " in text
        for edge in node.edges:
            assert " ".join(f"local {edge.local}".split()) in words
            assert " ".join(f"rule {edge.rule}".split()) in words
    verdicts = [line for line in text.splitlines() if re.fullmatch(r"  \S+ +vs \w+ +\w+", line)]
    assert len(verdicts) == len(st.checks)
    assert all(line.split()[-1] == st.check(line.split()[0], line.split()[2]).verdict
               for line in verdicts)
    assert text.splitlines()[-1] == f"All {len(st.checks)} checks are exact or close."


def test_explain_help_shows_step_and_summary_examples(monkeypatch, capsys):
    monkeypatch.setenv("COLUMNS", "80")
    with pytest.raises(SystemExit):
        main(["explain", "--help"])
    out = capsys.readouterr().out
    examples = out[out.index("examples:"):]
    assert "normcore explain layernorm --step" in examples
    assert "normcore explain batchnorm --summary" in examples
    assert max(len(line) for line in out.splitlines()) <= 80
    with pytest.raises(SystemExit) as exc, contextlib.redirect_stderr(io.StringIO()) as err:
        main(["explain", "layernorm", "--step", "--summary"])
    assert exc.value.code == 2 and "not allowed with" in err.getvalue()


# What render_latex emits, plus the LaTeX and amsmath basics a fragment may use: a macro outside
# this list would be a typo or a package the fragment does not say it needs.
TEX_MACROS = {
    "section", "subsection", "begin", "end", "item", "text", "texttt", "textbackslash",
    "frac", "tfrac", "partial", "sqrt", "sum", "hat", "mathrm", "operatorname", "log", "max",
    "arg", "tanh", "exp", "cdot", "quad", "qquad", "left", "right", "mathbb", "ell",
    "alpha", "beta", "gamma", "epsilon", "mu", "sigma", "pi", "Phi", "top",
}


def _tex_braces_balance(tex):
    depth = 0
    for c in re.sub(r"\\[{}]|%.*", "", tex):  # escaped braces and comments do not count
        depth += {"{": 1, "}": -1}.get(c, 0)
        if depth < 0:
            return False
    return depth == 0


@pytest.mark.parametrize("kind", list(KINDS))
def test_explain_format_tex_is_a_balanced_fragment_of_known_macros(kind):
    status, tex = _run(["explain", kind, "--format", "tex"])
    assert status == 0 and _tex_braces_balance(tex)
    opened = re.findall(r"\\begin\{([^}]*)\}", tex)
    assert opened == re.findall(r"\\end\{([^}]*)\}", tex)
    st = step_through(kind)
    # the forward as one list, then one align* per node of the backward
    assert opened == ["enumerate"] + ["align*"] * len(st.tape.nodes)
    assert tex.count(r"\item ") == len(st.tape.nodes)
    assert set(re.findall(r"\\([A-Za-z]+)", tex)) <= TEX_MACROS
    for node in st.tape:
        for edge in node.edges:
            assert edge.local_tex in tex


def test_tex_braces_check_can_fail():
    assert not _tex_braces_balance(r"\frac{1}{2")
    assert not _tex_braces_balance(r"}{")
    assert _tex_braces_balance(r"\{ a \} {b}")


@pytest.mark.parametrize("kind", list(KINDS))
def test_explain_format_md_names_every_node_and_balances_its_math(kind):
    status, md = _run(["explain", kind, "--format", "md"])
    assert status == 0
    st = step_through(kind)
    for node in st.tape:
        assert f"### [{node.index}] `{node.name}`" in md
    text = md.replace("$$", "")
    assert md.count("$$") % 2 == 0 and md.count("$$") >= 2 * len(st.tape.nodes)
    for line in text.splitlines():  # inline math opens and closes on its line
        assert line.count("$") % 2 == 0, line
    for block in re.findall(r"\$\$(.*?)\$\$", md, flags=re.S):
        assert block.strip() and "\n" not in block and _tex_braces_balance(block)
    assert not run_together(md), run_together(md)


def run_together(md):
    """The paragraphs of Markdown ``md`` in which lines written apart would run into one
    sentence: two lines or more, not all list items or table rows (code blocks aside)."""
    prose = re.sub(r"```.*?```", "", md, flags=re.S)
    return [p for p in prose.split("\n\n") if len(p.strip().splitlines()) > 1
            and not all(line.startswith(("- ", "|")) for line in p.strip().splitlines())]


def test_the_run_together_check_sees_two_header_lines_in_one_paragraph():
    assert run_together("# T\n\nLayerNorm step by step: eps = 1e-05\nLoss L = sum(y * dy).\n\n## x")
    assert not run_together("# T\n\n- eps = 1e-05\n- Loss L = sum(y * dy).\n\n| a |\n|---|")


def test_explain_graph_writes_svg_and_refuses_other_suffixes(tmp_path, capsys):
    import xml.etree.ElementTree as ET

    path = tmp_path / "layernorm.svg"
    status, text = _run(["explain", "layernorm", "--graph", str(path)])
    assert status == 0 and text.splitlines()[0] == f"wrote {path}"
    assert ET.parse(path).getroot().tag == "{http://www.w3.org/2000/svg}svg"
    capsys.readouterr()
    assert main(["explain", "layernorm", "--graph", str(tmp_path / "g.jpg")]) == 2
    assert ".png or .svg" in " ".join(capsys.readouterr().err.split()) and not (tmp_path / "g.jpg").exists()
    with pytest.raises(ValueError, match=r"\.png or \.svg"):
        step_through("layernorm").graph().save(tmp_path / "g.pdf")


def test_explain_help_shows_format_examples(monkeypatch, capsys):
    monkeypatch.setenv("COLUMNS", "80")
    with pytest.raises(SystemExit):
        main(["explain", "--help"])
    text = capsys.readouterr().out
    assert "--format md" in text and "--format tex" in text and ".svg" in text
    assert max(len(line) for line in text.splitlines()) <= 80


def test_matmul_and_transpose_nodes_match_central_differences():
    """The matrix product (a batch of matrices times a shared one) and the axis permutation
    send each input the share a numerical gradient measures."""
    from normcore.derivations.tape import Tape
    rng = np.random.default_rng(3)
    t = Tape()
    a = t.leaf("a", rng.standard_normal((2, 3, 4)))
    b = t.leaf("b", rng.standard_normal((4, 5)))
    c = t.matmul(a, b, "c", "product", "c")
    t.transpose(c, (0, 2, 1), "d", "transpose", "d")
    dy = rng.standard_normal((2, 5, 3))
    t.backward(dy)
    assert t["b"].grad.shape == (4, 5)  # summed over the batch axis it was broadcast along
    for name in ("a", "b", "c"):
        np.testing.assert_allclose(t[name].grad, t.numerical_grad(t[name], dy), rtol=1e-6, atol=1e-8)


def test_explain_gives_notice_before_checking_a_large_input(capsys):
    """From NOTICE_VALUES input values on (a size, nothing timed), explain says on stderr that it
    checks every node value by value before it starts; for a small input it says nothing."""
    from normcore.commands.explain import NOTICE_VALUES
    assert main(["explain", "layernorm", "--shape", f"{NOTICE_VALUES // 8}x8", "--summary"]) == 0
    notice = " ".join(capsys.readouterr().err.split())
    assert "numerically, value by value" in notice and f"({NOTICE_VALUES} input values)" in notice
    assert main(["explain", "layernorm", "--shape", "2x3", "--summary"]) == 0
    assert capsys.readouterr().err == ""
