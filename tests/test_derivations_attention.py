"""explain attention: self-attention's backward on a tape (one head, then H heads split and merged,
causal or not), checked against MultiheadSelfAttention and central differences; x's three
shares, the causal mask's zero gradient, the errors, the command line and the graph."""

import contextlib
import io
import re
import xml.etree.ElementTree as ET

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as hs

import normcore as nc
from normcore.cli import main
from normcore.derivations import step_through
from normcore.derivations import steps as steps_module
from normcore.i18n.width import display_width
from norm_tiers import suite_settings

HEAD_NODES = ("q_r", "qh", "k_r", "kh", "v_r", "vh", "oh", "o_t")  # the split and the merge


def _names(st):
    return [n.name for n in st.tape]


def _future(st):
    """True where key j > query i: the entries the causal mask hides."""
    length = st.tape["x"].value.shape[-2]
    return np.triu(np.ones((length, length), dtype=bool), 1)


def _layer_shares(st):
    """dquery, dkey, dvalue of MultiheadAttention(query = key = value = x) with the tape's
    parameters: x's three shares, computed by the layer without the tape."""
    names = _names(st)
    x = st.tape["x"].value
    heads = st.tape["qh"].value.shape[-3] if "qh" in names else 1
    layer = nc.MultiheadAttention(x.shape[-1], heads, causal="s_m" in names)
    for p in "qkvo":
        linear = getattr(layer, p)
        linear.weight.data[...] = st.tape[f"W{p}"].value.T  # the tape keeps W as (in, out)
        if linear.bias is not None:
            linear.bias.data[...] = st.tape[f"b{p}"].value
    lead = (None,) * (3 - x.ndim)
    layer.forward(x[lead], x[lead], x[lead])
    return [d.reshape(x.shape) for d in layer.backward(st.dy[lead])]


@hs.composite
def attention_cases(draw):
    heads = draw(hs.sampled_from([1, 2, 4]))
    width = heads * draw(hs.integers(1, 2))
    length = draw(hs.integers(1, 4))
    batch = draw(hs.sampled_from([(), (1,), (2,)]))
    return batch + (length, width), heads, draw(hs.booleans()), draw(hs.integers(0, 2 ** 16))


@suite_settings(max_examples=24)
@given(attention_cases())
def test_every_check_passes_and_x_gets_three_shares(case):
    shape, heads, causal, seed = case
    st = step_through("attention", shape=shape, heads=heads, causal=causal, seed=seed)
    assert st.passed, [c for c in st.checks if c.verdict == "DIFFERS"]
    assert {c.node for c in st.checks if c.against == "numerical"} == set(_names(st))
    compact = {c.node for c in st.checks if c.against == "compact"}
    assert compact == {"x", "Wq", "bq", "Wk", "Wv", "bv", "Wo", "bo", "y"}  # k has no bias
    assert all(value < 1e-12 for _, value in st.properties), st.properties
    # x fans out to three projections: three shares, each the layer's, adding up to dx
    x = st.tape["x"]
    users = st.tape.consumers(x)
    assert [u.name for u in users] == ["xWq", "k", "xWv"]
    shares = [u.share("x") for u in users]
    np.testing.assert_allclose(shares[0] + shares[1] + shares[2], x.grad, rtol=0, atol=1e-14)
    for share, layer_share in zip(shares, _layer_shares(st)):
        np.testing.assert_allclose(share, layer_share, rtol=1e-10, atol=1e-13)
    assert np.abs(x.grad).max() > 1e-4  # a random dy: a gradient far from 0
    # softmax's rows: each sums to 1 and its gradient to 0
    p, s_in = st.tape["p"], st.tape["s_m" if causal else "s"]
    np.testing.assert_allclose(p.value.sum(-1), 1.0, rtol=1e-14)
    np.testing.assert_allclose(s_in.grad.sum(-1), 0.0, atol=1e-15)
    # the heads are nodes of their own only when there are several
    assert all((name in _names(st)) == (heads > 1) for name in HEAD_NODES)
    assert p.value.shape == shape[:-2] + ((heads,) if heads > 1 else ()) + (shape[-2], shape[-2])
    if causal:  # hidden entries: probability 0 and gradient exactly 0, in every node of scores
        future = _future(st)
        assert np.all(p.value[..., future] == 0)
        for name in ("qkT", "s", "s_m", "z"):
            assert np.all(st.tape[name].grad[..., future] == 0), name
        assert np.all(np.isneginf(st.tape["s_m"].value[..., future]))


def test_masked_scores_get_exactly_zero_and_the_property_says_so():
    st = step_through("attention", shape=(2, 4, 4), heads=2, causal=True, seed=5)
    future = _future(st)
    assert future.sum() == 6 and st.tape["s"].grad.shape == (2, 2, 4, 4)
    assert np.all(st.tape["s"].grad[..., future] == 0)
    assert np.abs(st.tape["s"].grad[..., ~future]).max() > 1e-3  # the others do get a gradient
    masked = [v for d, v in st.properties if "key j > query i" in str(d)]
    assert masked == [0.0]
    # the numerical gradient agrees: nudging a hidden score changes L by rounding only
    assert np.abs(st.tape.numerical_grad(st.tape["s"], st.dy)[..., future]).max() < 1e-9


def test_one_head_and_the_batch_of_one_agree():
    rng = np.random.default_rng(4)
    x, dy = rng.standard_normal((3, 4)), rng.standard_normal((3, 4))
    flat = step_through("attention", x, dy=dy, seed=1)
    batched = step_through("attention", x[None], dy=dy[None], seed=1)
    for name in ("x", "Wq", "bq", "Wk", "Wv", "bv", "Wo", "bo"):
        np.testing.assert_allclose(flat.tape[name].grad.reshape(batched.tape[name].grad.shape),
                                   batched.tape[name].grad, rtol=1e-12, atol=1e-15)
    # one head: scores, scale, softmax, attend; no split, no merge, no mask
    assert _names(flat) == ["x", "Wq", "bq", "xWq", "q", "Wk", "k", "Wv", "bv", "xWv", "v", "kT", "qkT",
                            "s", "m", "z", "e", "total", "rtotal", "p", "o", "Wo", "bo", "oWo", "y"]


def test_heads_split_and_merge_are_reshape_and_transpose_nodes():
    st = step_through("attention", shape=(2, 3, 4), heads=2, seed=0)
    steps = {n.name: (n.step, n.value.shape) for n in st.tape}
    assert steps["q_r"] == ("split heads", (2, 3, 2, 2)) and steps["qh"] == ("heads first", (2, 2, 3, 2))
    assert steps["khT"] == ("transpose", (2, 2, 2, 3)) and steps["qkT"] == ("scores", (2, 2, 3, 3))
    assert steps["oh"] == ("attend", (2, 2, 3, 2)) and steps["o_t"] == ("heads back", (2, 3, 2, 2))
    assert steps["o"] == ("merge heads", (2, 3, 4))
    # the split is undone by the merge: o is the heads' outputs side by side
    oh = st.tape["oh"].value
    np.testing.assert_array_equal(st.tape["o"].value[..., :2], oh[:, 0])
    np.testing.assert_array_equal(st.tape["o"].value[..., 2:], oh[:, 1])
    # the scale is 1/sqrt(d_k) with d_k = D / H = 2
    np.testing.assert_allclose(st.tape["s"].value, st.tape["qkT"].value / np.sqrt(2), rtol=1e-15)


def test_the_largest_input_explain_takes_passes_above_the_rounding_of_l():
    # 256 values (explain's limit): L adds 256 terms of order 1, and its rounding, divided by h,
    # puts a numerical gradient of the max (exactly 0 on the tape: softmax ignores a shift of
    # its row) above 1e-8; the checks accept noise up to the rounding of L, no more
    st = step_through("attention", shape=(4, 8, 8), heads=2, seed=0)
    assert st.passed
    check = st.check("m", "numerical")
    # how far above 1e-8 the rounding lands depends on the BLAS's order of summation (4e-9 with
    # some builds): the check must pass either way, and never accept more than L's rounding
    assert np.abs(st.tape["m"].grad).max() < 1e-13 and check.max_diff < 1e-6
    loss_terms = np.abs(st.tape.output.value * st.dy).sum()
    assert check.max_diff < 4 * np.finfo(float).eps * loss_terms / 1e-6


def test_forgetting_the_scale_in_the_backward_is_caught(monkeypatch):
    # Break the scale's rule (pass dL/ds on without 1/sqrt(d_k)): the q and k routes go wrong,
    # the v route, which does not pass through the scores, stays right.
    original = steps_module.Tape.scale

    def unscaled(self, *args, **kwargs):
        node = original(self, *args, **kwargs)
        node.edges[0].vjp = lambda g, out, v: g
        return node

    monkeypatch.setattr(steps_module.Tape, "scale", unscaled)
    st = step_through("attention", shape=(3, 4), seed=0)
    assert not st.passed
    for node in ("x", "Wq", "Wk"):
        assert st.check(node, "compact").verdict == "DIFFERS"
    assert st.check("qkT", "numerical").verdict == "DIFFERS"
    for node in ("Wv", "bv", "Wo", "bo"):
        assert st.check(node, "compact").verdict in ("exact", "close")
    assert st.check("s", "numerical").verdict in ("exact", "close")  # above the broken node


def test_bad_requests_raise_clear_errors():
    with pytest.raises(ValueError, match=r"heads \(3\) must divide the width D = 4"):
        step_through("attention", shape=(3, 4), heads=3)
    for shape in [(4,), (1, 2, 3, 4)]:
        with pytest.raises(ValueError, match=r"takes x of shape \(T, D\) or \(B, T, D\)"):
            step_through("attention", shape=shape)
    with pytest.raises(ValueError, match="heads applies to the self-attention step-through only"):
        step_through("layernorm", shape=(3, 4), heads=2)
    with pytest.raises(ValueError, match="positive int"):
        step_through("attention", heads=0)
    with pytest.raises(TypeError, match="heads"):
        step_through("attention", heads=2.5)
    with pytest.raises(TypeError, match="causal must be True or False"):
        step_through("attention", causal="yes")
    with pytest.raises(ValueError, match="takes no gamma"):
        step_through("attention", gamma=np.ones(4))
    with pytest.raises(ValueError, match=r"dy must have the input's shape \(3, 4\)"):
        step_through("attention", dy=np.ones((4, 3)))


# --- the command line --------------------------------------------------------------------------
def _run(argv):
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        status = main(argv)
    return status, out.getvalue(), err.getvalue()


def _fits(text):
    return max(display_width(line) for line in text.splitlines()) <= 80


@pytest.mark.parametrize("args", [["--shape", "2x3x4", "--heads", "2", "--causal"],
                                  ["--shape", "4x4", "--heads", "4"], []])
def test_explain_attention_prints_the_three_shares_in_80_columns(args):
    status, text, _ = _run(["explain", "attention", *args])
    assert status == 0 and _fits(text)
    lines = text.splitlines()
    assert re.fullmatch(r"All \d+ checks are exact or close\.", lines[-1])
    assert "dL/dx = share from xWq + share from k + share from xWv" in text
    assert "TeX" in text and "MultiheadSelfAttention.backward" in text
    assert ("causal mask" in text) == ("--causal" in args)
    assert ("split heads" in text) == ("--heads" in args)


def test_explain_attention_summary_step_md_and_svg(tmp_path, monkeypatch):
    status, summary, _ = _run(["explain", "attention", "--heads", "2", "--causal", "--summary"])
    assert status == 0 and _fits(summary) and not re.search(r"\d\.\d{4}", summary)
    assert "[ 0] x: input" in summary
    assert "rule   d_kh += transpose(d_khT, (0, 2, 1))" in summary
    # --step: Enter twice, back once, then stdin closes and it runs to the end
    monkeypatch.setattr("sys.stdin", io.StringIO("\n\nb\n"))
    status, stepped, _ = _run(["explain", "attention", "--step", "--no-latex"])
    assert status == 0 and _fits(stepped)
    shown = [line.split("]")[0] for line in stepped.splitlines() if line.startswith("[node ")]
    assert shown == ["[node 1/25", "[node 2/25", "[node 3/25", "[node 2/25"]  # then no more waiting
    order = [int(line[1:3]) for line in stepped.splitlines() if line[:1] == "[" and line[3:4] == "]"]
    assert order[:5] == [24, 23, 22, 23, 22] and order[-1] == 0 and len(order) == 25 + 2
    assert "checks are exact or close" in stepped.splitlines()[-1]
    status, md, _ = _run(["explain", "attention", "--heads", "2", "--format", "md"])
    assert status == 0 and md.count("$$") % 2 == 0 and "### [0] `x`" in md
    assert r"{k_h^{\top}}^{\top}" in md  # the transpose of k^T is braced: no double superscript
    path = tmp_path / "attention.svg"
    status, text, _ = _run(["explain", "attention", "--heads", "2", "--causal", "--graph", str(path)])
    first, rest = text.split("\n", 1)  # the first line names the file, however long its path
    assert status == 0 and first == f"wrote {path}" and _fits(rest)
    assert ET.parse(path).getroot().tag == "{http://www.w3.org/2000/svg}svg"
    assert [line.split(":")[0].strip() for line in text.splitlines()[2:] if ":" in line] == [
        "through v", "through q", "through k"]


@pytest.mark.parametrize("argv,option,message", [
    (["--shape", "3x4", "--heads", "3"], "--heads", "must divide the width D = 4"),
    (["--shape", "4", "--heads", "2"], "--shape", "(T, D) or (B, T, D)"),
])
def test_explain_attention_refuses_bad_heads_and_shapes(argv, option, message):
    status, text, err = _run(["explain", "attention", *argv])
    assert status == 2 and not text
    assert f"argument {option}" in err and message in " ".join(err.split())
    status, _, err = _run(["explain", "layernorm", "--heads", "2"])
    assert status == 2 and "argument --heads" in err
    with pytest.raises(SystemExit) as exc, contextlib.redirect_stderr(io.StringIO()) as err:
        main(["explain", "attention", "--heads", "0"])
    assert exc.value.code == 2 and "expected a positive integer" in err.getvalue()


def test_graph_lays_each_route_of_x_in_its_lane():
    from matplotlib.text import Annotation

    st = step_through("attention", shape=(2, 3, 4), heads=2, causal=True)
    graph = st.graph()
    assert graph.nodes == _names(st) and graph.target == "y"
    assert [label.split(":")[0] for label in graph.routes] == ["through v", "through q", "through k"]
    v_route, q_route, k_route = graph.routes.values()
    assert v_route[0] == ("x", "xWv") and v_route[-1] == ("oWo", "y")
    assert q_route[0] == ("x", "xWq") and ("p", "oh") in q_route and ("qh", "qkT") in q_route
    assert k_route == [("x", "k"), ("k", "k_r"), ("k_r", "kh"), ("kh", "khT"), ("khT", "qkT")]
    rows = {name: row for name, (_, row) in graph.positions.items()}
    assert rows["xWq"] == rows["qh"] == 2 and rows["k"] == rows["khT"] == rows["qkT"] == 0
    assert rows["xWv"] == rows["vh"] == -2 and rows["m"] == 1
    assert rows["Wq"] == 3 and rows["Wk"] == 1 and rows["Wv"] == -3
    # its 34 nodes take two bands of columns: the softmax's end and the output below the rest,
    # each lane as it is in the first band (the sum above the softmax's row, Wo below its use)
    assert graph.bands == 2 and rows["total"] == rows["e"] + 1 < rows["Wv"] and rows["Wo"] == rows["oWo"] - 1
    assert len(set(graph.positions.values())) == len(graph.nodes)  # no two boxes in one place
    ax = graph.figure().axes[0]
    arrows = [t for t in ax.texts if isinstance(t, Annotation)]
    assert len(arrows) == len(graph.edges)
    styles = {(a.arrow_patch.get_edgecolor(), a.arrow_patch.get_linestyle()) for a in arrows}
    assert len(styles) == 4  # three routes and the grey of the parameters
    low, high = ax.get_ylim()
    assert low < min(rows.values()) and high > 3  # the lanes of the parameters are inside the picture
