"""The QK-norm and SyncBatchNorm step-throughs (normcore/derivations/modern.py): their tapes,
their checks against normcore's own layers (MultiheadAttention's norms, SyncBatchNorm over a
simulated group, plain BatchNorm on the whole batch) and against central differences, the
all-reduce node, and ``normcore explain qk_norm|sync_batchnorm``."""

import contextlib
import io
import math
import re
import xml.etree.ElementTree as ET

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as hs

import normcore as nc
from normcore.cli import main
from normcore.derivations import step_through
from normcore.derivations.modern import qk_norm_tape
from normcore.derivations.steps import layer_eps
from normcore.derivations.tape import Tape
from normcore.i18n.width import display_width
from normcore.nn import MultiheadAttention, softmax, softmax_backward

QK_SHAPES = [(2, 3), (3, 4), (2, 3, 5), (2, 2, 3, 4)]  # q: (T, D), (H, T, D), (B, H, T, D)


def _run(argv):
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        status = main(argv)
    return status, out.getvalue()


def _all_checked(st):
    """Every node checked numerically, and every check exact or close."""
    assert st.passed, [c for c in st.checks if c.verdict == "DIFFERS"]
    assert {c.node for c in st.checks if c.against == "numerical"} == {n.name for n in st.tape}


# --- QK-norm ---------------------------------------------------------------------------------
@pytest.mark.parametrize("norm", ["rmsnorm", "layernorm"])
@pytest.mark.parametrize("shape", QK_SHAPES)
def test_qk_norm_staged_gradients_match_the_attention_norms_and_central_differences(shape, norm):
    st = step_through("qk_norm", shape=shape, seed=3, qk_norm=norm)
    _all_checked(st)
    t = st.tape
    params = ["gamma_q", "gamma_k"] + (["beta_q"] if norm == "layernorm" else [])
    assert {c.node for c in st.checks if c.against == "compact"} == {"s", "q", "k", *params}
    assert "beta_k" not in {n.name for n in t}  # MultiheadAttention's k_norm has no bias
    T = shape[-2]
    assert t["s"].value.shape == shape[:-2] + (T, T) and t["q"].grad.shape == shape
    assert np.abs(t["q"].grad).max() > 1e-3 and np.abs(t["k"].grad).max() > 1e-3
    # the two chains run the same nodes, marked with their input
    chain = lambda of: [n.step for n in t if n.name.endswith(f"_{of}") and not n.is_leaf]  # noqa: E731
    assert len(chain("q")) >= 5 and chain("q")[:-1] == chain("k")[:len(chain("q")) - 1]
    for _, value in st.properties:
        assert value < (1e-4 if norm == "layernorm" else 1e-12)  # LayerNorm's eps = 1e-5


def test_qk_norm_bounds_the_scores_as_measured():
    q = np.random.default_rng(1).normal(0.0, 10.0, size=(4, 8))  # large queries
    st = step_through("qk_norm", q, seed=1)
    t, D = st.tape, 8
    q, k = t["q"].value, t["k"].value
    raw = np.abs(q @ k.T).max() / math.sqrt(D)
    bound = np.abs(t["gamma_q"].value).max() * np.abs(t["gamma_k"].value).max() * math.sqrt(D)
    assert np.abs(t["s"].value).max() <= bound < raw  # the raw scores exceed it, the normed never
    note = " ".join(" ".join(map(str, st.notes)).split())
    assert f"reaches {raw:.4g}" in note and f"<= {bound:.4g}" in note
    # scaling q and k up changes the raw scores a hundredfold and the normed ones not at all
    same, big = step_through("qk_norm", q, seed=1), step_through("qk_norm", q * 100.0, seed=1)
    np.testing.assert_array_equal(same.tape["k"].value, big.tape["k"].value)
    np.testing.assert_allclose(big.tape["s"].value, same.tape["s"].value, rtol=1e-12)


@pytest.mark.parametrize("norm", ["rmsnorm", "layernorm"])
def test_qk_norm_tape_against_the_whole_attention_layer(norm):
    """With identity projections, MultiheadAttention's dquery and dkey are the raw q's and k's
    gradients: the tape, fed the layer's own dS, must land on them."""
    rng = np.random.default_rng(4)
    B, T, D = 2, 3, 4
    attention = MultiheadAttention(D, 1, qk_norm=norm, rng=0)
    for proj in (attention.q, attention.k, attention.v, attention.o):
        proj.weight.data[...] = np.eye(D)
        if proj.bias is not None:
            proj.bias.data[...] = 0.0
    for layer in (attention.q_norm, attention.k_norm):
        for p in layer.parameters():
            p.data[...] = rng.standard_normal(p.shape)
    query, key, value = (rng.standard_normal((B, T, D)) * 2 + 1 for _ in range(3))
    dy = rng.standard_normal((B, T, D))
    attention.forward(query, key, value)
    dquery, dkey, _ = attention.backward(dy)

    q, k, v = query[:, None], key[:, None], value[:, None]  # (B, 1, T, D): one head
    tape = qk_norm_tape(q, k, attention.q_norm, attention.k_norm, layer_eps(attention.q_norm), "B,H,T")
    P = softmax(tape["s"].value, axis=-1)
    dS = softmax_backward(dy[:, None] @ np.swapaxes(v, -1, -2), P, axis=-1)  # A = P @ v, y = A
    tape.backward(dS)
    assert nc.rel_error(tape["q"].grad[:, 0], dquery) < 1e-12
    assert nc.rel_error(tape["k"].grad[:, 0], dkey) < 1e-12
    for of, layer in (("q", attention.q_norm), ("k", attention.k_norm)):
        assert nc.rel_error(tape[f"gamma_{of}"].grad, layer.weight.grad) < 1e-12


def test_qk_norm_graph_draws_q_and_k_on_their_own_rows():
    st = step_through("qk_norm", shape=(3, 4))
    graph = st.graph()
    assert graph.labels["k"].split("\n")[1] == "input"  # an input, not a parameter
    assert graph.labels["gamma_k"].split("\n")[1] == "parameter"
    rows = {name: row for name, (_, row) in graph.positions.items()}
    assert rows["q"] == rows["q_hat"] == rows["s"] != rows["k"] == rows["k_hat"]
    spots = list(graph.positions.values())
    assert len(spots) == len(set(spots))  # no two boxes on one spot
    assert [label.split(":")[0] for label in graph.routes] == ["direct", "through the mean square", "from k"]


# --- SyncBatchNorm ---------------------------------------------------------------------------
@pytest.mark.parametrize("ranks,shape", [(1, (3, 4)), (2, (5, 2)), (3, (5, 3)), (3, (7, 2, 2)),
                                         (2, (3, 2, 2, 2)), (3, (2, 3))])
def test_sync_batchnorm_matches_normcore_sync_batchnorm_batchnorm_and_central_differences(ranks, shape):
    st = step_through("sync_batchnorm", shape=shape, seed=2, ranks=ranks)
    _all_checked(st)
    t = st.tape
    sizes = [t[f"x_{r}"].value.shape[0] for r in range(ranks)]
    assert sizes == [len(part) for part in np.array_split(np.zeros(shape[0]), ranks)]  # unequal, maybe 0
    against = {(c.node, c.against) for c in st.checks}
    for name in ["y", "gamma", "beta"] + [f"x_{r}" for r in range(ranks)]:
        assert (name, "compact") in against and (name, "batchnorm") in against
    for _, value in st.properties:
        assert value < 1e-3  # the rescaling one is of the order of eps = 1e-5
    # the reference with the whole batch, written out here: plain BatchNorm
    x = np.concatenate([t[f"x_{r}"].value for r in range(ranks)])
    bn = (nc.BatchNorm1d if x.ndim < 4 else nc.BatchNorm2d)(shape[1])
    bn.weight.data[...], bn.bias.data[...] = t["gamma"].value.ravel(), t["beta"].value.ravel()
    np.testing.assert_allclose(t["y"].value, bn.forward(x), rtol=1e-12, atol=1e-13)
    dx = np.concatenate([t[f"x_{r}"].grad for r in range(ranks)])
    np.testing.assert_allclose(dx, bn.backward(st.dy), rtol=1e-10, atol=1e-13)


def test_the_all_reduce_node_sums_forward_and_hands_the_summed_gradient_back():
    st = step_through("sync_batchnorm", shape=(5, 3), seed=0, ranks=3)
    t = st.tape
    axes = (0,)
    np.testing.assert_array_equal(t["S"].value, sum(t[f"x_{r}"].value.sum(axes, keepdims=True) for r in range(3)))
    for r in range(3):  # its backward: every rank receives the same gradient, the total
        np.testing.assert_array_equal(t["S"].share(f"sum_{r}"), t["S"].grad)
        np.testing.assert_array_equal(t["M2"].share(f"m2_{r}"), t["M2"].grad)
    # that total is the sum of every rank's share at the shared nodes: the backward's all-reduce
    np.testing.assert_allclose(t["mean"].grad, sum(t[f"xc_{r}"].share("mean") for r in range(3)), rtol=1e-14)
    np.testing.assert_allclose(t["rstd"].grad, sum(t[f"x_hat_{r}"].share("rstd") for r in range(3)), rtol=1e-14)
    text = " ".join(" ".join(map(str, st.notes)).split())
    assert "4 all-reduce messages" in text and "rank 2: rows 4:5" in text and "agreement" in text
    assert "default protocol" in text and "one all_gather" in text
    empty = " ".join(" ".join(map(str, step_through("sync_batchnorm", shape=(2, 3), ranks=3).notes)).split())
    assert "rank 2: no rows" in empty


def test_one_rank_is_plain_batchnorm():
    x = np.random.default_rng(6).normal(2.0, 3.0, size=(4, 3))
    sync = step_through("sync_batchnorm", x, ranks=1, seed=6)
    bn = step_through("batchnorm", x, seed=6)
    assert sync.passed and [n.name for n in sync.tape if n.is_leaf] == ["x_0", "gamma", "beta"]
    np.testing.assert_array_equal(sync.tape["S"].value, sync.tape["sum_0"].value)  # one rank: no change
    np.testing.assert_allclose(sync.tape["x_hat_0"].value, bn.tape["x_hat"].value, rtol=1e-13)
    np.testing.assert_allclose(sync.tape["mean"].value, x.mean(0, keepdims=True), rtol=1e-14)
    np.testing.assert_allclose(sync.tape["var"].value, x.var(0, keepdims=True), rtol=1e-13)


def test_a_wrong_all_reduce_backward_is_caught(monkeypatch):
    # the classic mistake: each rank keeps 1/R of the gradient, as if the total were an average
    original = Tape.all_reduce

    def averaging(self, parts, *args, **kwargs):
        node, share = original(self, parts, *args, **kwargs), 1.0 / len(parts)
        for edge in node.edges:
            edge.vjp = lambda g, out, *values: g * share
        return node

    monkeypatch.setattr(Tape, "all_reduce", averaging)
    st = step_through("sync_batchnorm", shape=(4, 3), ranks=2)
    assert not st.passed
    assert st.check("x_0", "compact").verdict == st.check("x_0", "batchnorm").verdict == "DIFFERS"
    assert st.check("sum_0", "numerical").verdict == "DIFFERS"
    assert st.check("S", "numerical").verdict in ("exact", "close")  # above the broken node


def test_sync_batchnorm_graph_gives_each_rank_its_rows():
    graph = step_through("sync_batchnorm", shape=(5, 3), ranks=3).graph()
    rows = {name: row for name, (_, row) in graph.positions.items()}
    assert rows["S"] == rows["M2"] == 0 and len({rows[f"x_{r}"] for r in range(3)}) == 3
    assert rows["x_0"] > 0 > rows["x_1"]
    # its columns take two bands, the normalisation in the second: the same lanes, lower down
    middle = rows["rstd"]
    assert graph.bands == 2 and rows["gamma"] == rows["var"] == middle < min(rows[f"x_{r}"] for r in range(3))
    assert rows["x_hat_0"] > middle > rows["x_hat_1"] > rows["x_hat_2"]
    assert [graph.labels[f"x_{r}"].split("\n")[1] for r in range(3)] == ["input"] * 3
    spots = list(graph.positions.values())
    assert len(spots) == len(set(spots))


# --- both: random cases, errors ---------------------------------------------------------------
@settings(max_examples=12, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
@given(seed=hs.integers(0, 2**16), t=hs.integers(1, 3), d=hs.integers(2, 4), norm=hs.sampled_from(["rmsnorm",
                                                                                                 "layernorm"]))
def test_qk_norm_random_cases(seed, t, d, norm):
    _all_checked(step_through("qk_norm", shape=(t, d), seed=seed, qk_norm=norm))


@settings(max_examples=12, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
@given(seed=hs.integers(0, 2**16), n=hs.integers(2, 6), c=hs.integers(1, 3), ranks=hs.integers(1, 4))
def test_sync_batchnorm_random_cases(seed, n, c, ranks):
    _all_checked(step_through("sync_batchnorm", shape=(n, c), seed=seed, ranks=ranks))


@pytest.mark.parametrize("kwargs,error,match", [
    (dict(kind="qk_norm", shape=(6,)), ValueError, "rank 2 or 3 or 4"),
    (dict(kind="qk_norm", qk_norm="batchnorm"), ValueError, "qk_norm must be None, 'rmsnorm' or 'layernorm'"),
    (dict(kind="qk_norm", qk_norm=1), TypeError, "qk_norm must be"),
    (dict(kind="qk_norm", ranks=2), ValueError, "ranks applies to the SyncBatchNorm step-through only"),
    (dict(kind="qk_norm", gamma=np.ones(4)), ValueError, "gamma and beta are drawn from the seed"),
    (dict(kind="qk_norm", dy=np.ones((3, 4))), ValueError, r"dy must have the output's shape \(3, 3\)"),
    (dict(kind="sync_batchnorm", ranks=0), ValueError, "ranks must be a whole number from 1 to 8"),
    (dict(kind="sync_batchnorm", ranks=9), ValueError, "ranks must be a whole number from 1 to 8"),
    (dict(kind="sync_batchnorm", ranks=2.5), ValueError, "got 2.5"),
    (dict(kind="sync_batchnorm", ranks=True), ValueError, "got True"),
    (dict(kind="sync_batchnorm", qk_norm="rmsnorm"), ValueError, "qk_norm applies to the QK-norm"),
    (dict(kind="sync_batchnorm", shape=(1, 3)), ValueError, "more than one value per channel"),
    (dict(kind="layernorm", ranks=2), ValueError, "ranks applies to the SyncBatchNorm"),
])
def test_bad_requests_raise_clear_errors(kwargs, error, match):
    with pytest.raises(error, match=match):
        step_through(**kwargs)


# --- the command line ------------------------------------------------------------------------
CLI_CASES = [["qk_norm"], ["qk_norm", "--qk-norm", "layernorm", "--shape", "2x3x4"],
             ["sync_batchnorm"], ["sync_batchnorm", "--ranks", "3", "--shape", "5x2x2"]]


@pytest.mark.parametrize("args", CLI_CASES)
def test_explain_text_summary_and_exports(args):
    status, text = _run(["explain", *args])
    assert status == 0 and "checks are exact or close" in text.splitlines()[-1]
    assert max(display_width(line) for line in text.splitlines()) <= 80
    status, summary = _run(["explain", *args, "--summary"])
    assert status == 0 and max(display_width(line) for line in summary.splitlines()) <= 80
    assert "rule" in summary and not re.search(r"\d\.\d{4}", summary)  # rules, no values
    status, md = _run(["explain", *args, "--format", "md"])
    assert status == 0 and md.startswith("# ") and md.count("$$") % 2 == 0
    status, tex = _run(["explain", *args, "--format", "tex"])
    assert status == 0 and tex.count(r"\begin{align*}") == tex.count(r"\end{align*}") > 10


@pytest.mark.parametrize("args", CLI_CASES[::3])
def test_explain_step_is_paced_by_enter(args, monkeypatch):
    monkeypatch.setattr("sys.stdin", io.StringIO("\n\nb\n"))  # two Enters, back, then the end of input
    status, text = _run(["explain", *args, "--step", "--no-latex"])
    shown = [line.split("]")[0] for line in text.splitlines() if line[:1] == "[" and line[3:4] == "]"]
    assert status == 0 and shown[1] == shown[3] and shown[2] == shown[4]  # back one node, again
    assert text.count("[node ") == 4 and "checks are exact or close" in text.splitlines()[-1]
    assert max(display_width(line) for line in text.splitlines()) <= 80


@pytest.mark.parametrize("args", CLI_CASES[1:3])
def test_explain_graph_svg(args, tmp_path):
    path = tmp_path / "graph.svg"
    status, text = _run(["explain", *args, "--graph", str(path)])
    assert status == 0 and text.splitlines()[0] == f"wrote {path}"
    assert ET.parse(path).getroot().tag == "{http://www.w3.org/2000/svg}svg"
    assert max(display_width(line) for line in text.splitlines()[1:]) <= 80


@pytest.mark.parametrize("args,option", [(["qk_norm", "--ranks", "2"], "--ranks"),
                                         (["sync_batchnorm", "--qk-norm", "rmsnorm"], "--qk-norm"),
                                         (["sync_batchnorm", "--ranks", "0"], "--ranks"),
                                         (["layernorm", "--qk-norm", "layernorm"], "--qk-norm"),
                                         (["sync_batchnorm", "--shape", "1x3"], "--shape")])
def test_explain_names_the_option_at_fault(args, option, capsys):
    try:  # argparse refuses --ranks 0 itself (SystemExit 2); explain the others (status 2)
        status = main(["explain", *args])
    except SystemExit as done:
        status = done.code
    assert status == 2
    captured = capsys.readouterr()
    assert f"argument {option}:" in captured.err and not captured.out
    assert "Traceback" not in captured.err
