"""The step-throughs of Linear, ReLU, Sigmoid, Tanh, MSELoss, FeedForward and Embedding
(normcore/derivations/layers.py): their tapes, their checks against normcore's own layers and
against central differences, their properties, and ``normcore explain`` on them in English
and Chinese."""

import contextlib
import io
import re
import xml.etree.ElementTree as ET

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as hs
from norm_tiers import suite_settings

import normcore as nc
from normcore.cli import main
from normcore.derivations import step_through
from normcore.derivations import tape as tape_module
from normcore.derivations.layers import LAYER_KINDS
from normcore.i18n import set_language
from normcore.i18n.width import display_width

RANK_ONE = ("relu", "sigmoid", "tanh", "mse")  # the others take (*, D) with at least one row axis


def written_out(kind, st):
    """The compact gradients, written out here with NumPy alone (no normcore layer), from the
    values on the tape: each is what the staged gradient must equal."""
    t, dy = st.tape, st.dy
    x = t.nodes[0].value
    if kind == "linear":  # y = x @ W + b
        rows = dy.reshape(-1, dy.shape[-1])
        return {"x": dy @ t["W"].value.T, "W": x.reshape(-1, x.shape[-1]).T @ rows, "b": rows.sum(axis=0)}
    if kind == "relu":
        return {"x": dy * (x > 0)}
    if kind == "sigmoid":
        s = 1 / (1 + np.exp(-x))
        return {"x": dy * s * (1 - s)}
    if kind == "tanh":
        return {"x": dy / np.cosh(x) ** 2}
    if kind == "mse":
        return {"pred": dy.item() * 2 * (x - t["target"].value) / x.size}
    if kind == "embedding":  # the ids are where y's rows equal the table's (rows are distinct)
        ids = [int(np.flatnonzero((x == row).all(axis=1))[0]) for row in t.output.value]
        dW = np.zeros_like(x)
        for n, i in enumerate(ids):
            dW[i] += dy[n]
        return {"W": dW}
    # feedforward: a = x @ W1 + b1, h = relu(a), y = h @ W2 + b2
    W1, b1, W2 = t["W1"].value, t["b1"].value, t["W2"].value
    a = x @ W1 + b1
    h = np.maximum(a, 0)
    da = (dy @ W2.T) * (a > 0)
    flat = lambda v: v.reshape(-1, v.shape[-1])  # noqa: E731
    return {"x": da @ W1.T, "W1": flat(x).T @ flat(da), "b1": flat(da).sum(axis=0),
            "W2": flat(h).T @ flat(dy), "b2": flat(dy).sum(axis=0)}


def _run(argv, lang="en"):
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        status = main(["--lang", lang, *argv])
    return status, out.getvalue()


def _all_checked(st):
    assert st.passed, [c for c in st.checks if c.verdict == "DIFFERS"]
    assert {c.node for c in st.checks if c.against == "numerical"} == {n.name for n in st.tape}


# --- every kind, many shapes and seeds --------------------------------------------------------
@suite_settings(max_examples=30)
@given(kind=hs.sampled_from(LAYER_KINDS), lead=hs.lists(hs.integers(1, 3), min_size=0, max_size=2),
       d=hs.integers(1, 4), seed=hs.integers(0, 2 ** 16))
def test_staged_gradients_match_the_layer_and_central_differences(kind, lead, d, seed):
    shape = tuple(lead) + (d,)
    if len(shape) == 1 and kind not in RANK_ONE:
        shape = (2,) + shape
    if kind == "embedding":  # the table (V, D)
        shape = (int(np.prod(shape[:-1])), shape[-1])
    st = step_through(kind, shape=shape, seed=seed)
    _all_checked(st)
    compact = {c.node for c in st.checks if c.against == "compact"}
    expected = written_out(kind, st)
    assert compact == set(expected) | {st.tape.output.name}  # the input, every parameter, the output
    for name, grad in expected.items():
        np.testing.assert_allclose(st.tape[name].grad, grad, rtol=1e-10, atol=1e-12, err_msg=name)
    assert all(value < 1e-12 for _, value in st.properties), st.properties


@pytest.mark.parametrize("kind", LAYER_KINDS)
def test_each_kind_is_checked_against_its_normcore_layer(kind):
    st = step_through(kind, shape=(3, 4), seed=1)
    layer = {"linear": "Linear", "relu": "ReLU", "sigmoid": "Sigmoid", "tanh": "Tanh", "mse": "MSELoss",
             "feedforward": "FeedForward", "embedding": "Embedding"}[kind]
    assert st.reference == f"{layer}.backward" and st.title == layer
    assert len(st.properties) >= 1 and np.abs(st.tape.nodes[0].grad).max() > 1e-3


# --- Linear and FeedForward ------------------------------------------------------------------
def test_linear_holds_the_weight_transposed_and_its_gradient_too():
    st = step_through("linear", shape=(3, 4), seed=2)
    t = st.tape
    assert [n.name for n in t] == ["x", "W", "b", "u", "y"] and [n.step for n in t][3:] == ["matmul", "bias"]
    assert t["W"].value.shape == (4, 5) and t["y"].value.shape == (3, 5)  # Linear(4, 5): out != in
    assert "W is the Linear's weight transposed" in st.text()
    layer = nc.Linear(4, 5)
    layer.weight.data[...], layer.bias.data[...] = t["W"].value.T, t["b"].value
    np.testing.assert_allclose(layer(t["x"].value), t["y"].value, rtol=1e-14)
    layer.backward(st.dy)
    np.testing.assert_allclose(t["W"].grad, layer.weight.grad.T, rtol=1e-13)
    # the batch axes: W's share sums over every row of (B, T, D)
    deep = step_through("linear", shape=(2, 3, 4), seed=2)
    assert deep.passed and deep.tape["W"].grad.shape == (4, 5) and "sum_B,T(d_y)" in deep.text()


def test_feedforward_is_linear_relu_linear():
    st = step_through("feedforward", shape=(3, 2), seed=4)
    _all_checked(st)
    assert [n.name for n in st.tape] == ["x", "W1", "b1", "W2", "b2", "u1", "a", "h", "u2", "y"]
    assert st.tape["a"].value.shape == (3, 4)  # d_ff = 2 D
    # the hidden units switched off pass nothing back, and d_h reaches a only through ReLU
    off = st.tape["a"].value <= 0
    assert off.any() and np.all(st.tape["a"].grad[off] == 0)
    routes = list(st.graph().routes)
    assert routes == ["direct: x -> u1 -> a -> h -> u2 -> y"]


# --- the activations -------------------------------------------------------------------------
def test_relu_at_zero_takes_the_derivative_0_as_normcores_relu():
    x = np.array([[-1.0, 0.0, 2.0], [0.0, 3.0, -0.5]])
    dy = np.array([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
    st = step_through("relu", x, dy=dy)
    np.testing.assert_array_equal(st.tape["x"].grad, [[0, 0, 3], [0, 5, 0]])
    assert st.check("x", "compact").verdict == "exact"  # ReLU.backward agrees: 0 at x = 0
    # the central differences straddle the kink at 0 and measure dy / 2 there: said, not hidden
    assert st.check("x", "numerical").verdict == "DIFFERS" and not st.passed
    np.testing.assert_allclose(st.tape.numerical_grad(st.tape["x"], dy)[x == 0], [1.0, 2.0], rtol=1e-6)
    text = " ".join(st.text().split())
    assert "2 entries of x lie within 2h = 2e-06 of 0" in text and "takes it as 0 there" in text
    away = step_through("relu", x + 0.25, dy=dy)  # no entry at the kink: every check passes
    assert away.passed and "lie within" not in away.text()


def test_relu_rule_that_lets_everything_through_is_caught(monkeypatch):
    original = tape_module.Tape.relu

    def leaky(self, *args, **kwargs):
        node = original(self, *args, **kwargs)
        node.edges[0].vjp = lambda g, out, v: g  # forgets the indicator
        return node

    monkeypatch.setattr(tape_module.Tape, "relu", leaky)
    st = step_through("relu", shape=(3, 4), seed=0)
    assert st.check("x", "compact").verdict == "DIFFERS" and st.check("x", "numerical").verdict == "DIFFERS"
    assert st.properties[0][1] > 1e-3  # d_x where x <= 0 is no longer 0


def test_sigmoid_chain_lands_on_s_times_one_minus_s():
    st = step_through("sigmoid", shape=(3, 4), seed=5)
    assert [n.step for n in st.tape][1:] == ["negate", "exp", "add 1", "reciprocal"]
    y = st.tape.output.value
    np.testing.assert_allclose(st.tape["x"].grad, st.dy * y * (1 - y), rtol=1e-12)
    assert st.properties[0][1] < 1e-14
    # large inputs: exp(-x) underflows to 0 and y to 1, the gradient to 0; no overflow below -709
    big = step_through("sigmoid", np.array([[40.0, -40.0, 0.0]]))
    assert big.passed and big.tape.output.value[0, 0] == 1.0
    with pytest.raises(ValueError, match="overflows for x below -709.8"):
        step_through("sigmoid", np.array([[-800.0, 1.0]]))


def test_tanh_is_one_node_and_a_stretched_sigmoid():
    st = step_through("tanh", shape=(2, 5), seed=6)
    assert [n.name for n in st.tape] == ["x", "y"] and "d_x += d_y * (1 - y**2)" in st.text()
    assert st.properties[0][1] < 1e-14 and "stretched sigmoid" in str(st.properties[0][0])


# --- MSELoss ---------------------------------------------------------------------------------
def test_mse_ends_in_the_scalar_loss():
    st = step_through("mse", shape=(3, 4), seed=7)
    t = st.tape
    assert [n.name for n in t] == ["pred", "target", "diff", "sq", "loss"] and t.output.value.shape == (1, 1)
    loss = np.mean((t["pred"].value - t["target"].value) ** 2)
    assert t.output.value.item() == pytest.approx(loss, rel=1e-14)
    assert st.properties[0][1] == 0.0  # d_target is -d_pred exactly
    assert "dL/dloss = dy = 1" in st.text() and "N = 12 elements" in st.text()
    twice = step_through("mse", shape=(3, 4), seed=7, dy=2.5)
    np.testing.assert_allclose(twice.tape["pred"].grad, 2.5 * t["pred"].grad, rtol=1e-14)
    graph = st.graph()
    assert graph.labels["target"].split("\n")[1] == "input"  # the target is data, not a parameter


# --- Embedding ------------------------------------------------------------------------------
def test_embedding_scatters_back_and_adds_up_a_repeated_id():
    st = step_through("embedding", shape=(4, 3), seed=8)
    t = st.tape
    assert [n.name for n in t] == ["W", "y"] and t.output.value.shape == (5, 3)  # V + 1 ids
    idx = [int(np.flatnonzero((t["W"].value == row).all(axis=1))[0]) for row in t.output.value]
    counts = np.bincount(idx, minlength=4)
    twice = int(counts.argmax())
    assert counts[twice] >= 2  # 5 ids from 4 rows: one repeats
    picked = [n for n, i in enumerate(idx) if i == twice]
    np.testing.assert_allclose(t["W"].grad[twice], st.dy[picked].sum(axis=0), rtol=1e-14)
    np.testing.assert_array_equal(t["W"].grad[counts == 0], 0)
    text = " ".join(st.text().split())
    assert f"The ids idx (one per position): {idx}" in text and "Embedding.backward" in text
    assert all(value == 0.0 for _, value in st.properties), st.properties


def test_embedding_rule_that_keeps_one_of_the_repeats_is_caught(monkeypatch):
    """The classic slip, d_W[idx] += dy (NumPy keeps one of the repeated rows): the checks fail."""
    original = tape_module.Tape.gather

    def buffered(self, a, index, *args, **kwargs):
        node = original(self, a, index, *args, **kwargs)

        def wrong(g, out, v):
            share = np.zeros_like(v)
            share[np.asarray(index)] += g
            return share

        node.edges[0].vjp = wrong
        return node

    monkeypatch.setattr(tape_module.Tape, "gather", buffered)
    st = step_through("embedding", shape=(4, 3), seed=8)
    assert st.check("W", "compact").verdict == "DIFFERS" and st.check("W", "numerical").verdict == "DIFFERS"
    assert st.properties[0][1] > 1e-3


# --- errors ----------------------------------------------------------------------------------
def test_bad_requests_raise_clear_errors():
    with pytest.raises(ValueError, match="the Linear step-through takes an input of rank 2 or 3 or 4"):
        step_through("linear", shape=(4,))
    with pytest.raises(ValueError, match="has no gamma or beta"):
        step_through("relu", gamma=np.ones(4))
    with pytest.raises(ValueError, match=r"dy must have the output's shape \(3, 5\)"):
        step_through("linear", shape=(3, 4), dy=np.ones((3, 4)))
    with pytest.raises(ValueError, match="dy must be one number for mse"):
        step_through("mse", shape=(3, 4), dy=np.ones((3, 4)))
    with pytest.raises(ValueError, match="the Embedding step-through takes an input of rank 2"):
        step_through("embedding", shape=(2, 3, 4))
    with pytest.raises(ValueError, match="groups applies to the GroupNorm step-through only, got Tanh"):
        step_through("tanh", groups=2)


# --- the command line, in English and in Chinese -----------------------------------------------
@pytest.fixture(params=["en", "zh"])
def lang(request):
    yield request.param
    set_language("en")


def _fits(text):
    return max(display_width(line) for line in text.splitlines()) <= 80


@pytest.mark.parametrize("kind", LAYER_KINDS)
def test_explain_text_summary_step_and_exports_fit_80_columns(kind, lang, monkeypatch, tmp_path):
    status, text = _run(["explain", kind, "--shape", "2x3"], lang)
    assert status == 0 and _fits(text)
    assert ("检查" if lang == "zh" else "checks are exact or close") in text.splitlines()[-1]
    status, summary = _run(["explain", kind, "--summary"], lang)
    assert status == 0 and _fits(summary) and not re.search(r"\d\.\d{4}", summary)
    monkeypatch.setattr("sys.stdin", io.StringIO("\nb\n"))
    status, stepped = _run(["explain", kind, "--step", "--shape", "2x3"], lang)
    assert status == 0 and _fits(stepped) and len(re.findall(r"^\[\D+ \d+/\d+", stepped, re.M)) >= 2
    # it waited for Enter (the prompt names the node k/n), then ran on to the end of input
    assert stepped.splitlines()[-1] == text.splitlines()[-1]
    status, md = _run(["explain", kind, "--format", "md"], lang)
    assert status == 0 and md.startswith("# ") and md.count("$$") % 2 == 0
    status, tex = _run(["explain", kind, "--format", "tex"], lang)
    assert status == 0 and tex.count(r"\begin{align*}") == tex.count(r"\end{align*}") >= 2
    path = tmp_path / f"{kind}.svg"
    status, out = _run(["explain", kind, "--graph", str(path)], lang)
    assert status == 0 and ET.parse(path).getroot().tag == "{http://www.w3.org/2000/svg}svg"


@pytest.mark.parametrize("kind", ["relu", "tanh", "embedding"])
def test_step_through_a_two_node_tape(kind, monkeypatch):
    """Enter: node 0; b: back to node 1; q: quit, no checks."""
    monkeypatch.setattr("sys.stdin", io.StringIO("\nb\nq\n"))
    status, text = _run(["explain", kind, "--step", "--shape", "2x4"])
    shown = [int(line[1:3]) for line in text.splitlines() if line[:1] == "[" and line[3:4] == "]"]
    assert status == 0 and shown == [1, 0, 1] and "== Checks" not in text
    monkeypatch.setattr("sys.stdin", io.StringIO(""))  # no input at all: the whole backward, checked
    status, text = _run(["explain", kind, "--step", "--shape", "2x4"])
    assert status == 0 and "checks are exact or close" in text.splitlines()[-1]


def test_explain_refuses_a_rank_one_input_for_linear(capsys):
    status = main(["explain", "linear", "--shape", "4"])
    assert status == 2 and "rank 2 or 3 or 4" in " ".join(capsys.readouterr().err.split())
