"""The Batch Renorm, WeightNorm, LayerScale and ReZero step-throughs (normcore/derivations/
weights.py): the tape's stop-gradient node, r and d held constant, what central differences of
the forward itself say, dv's projection, the gradient reaching a scale that starts near 0, their
pictures and ``normcore explain batch_renorm|weight_norm``."""

import contextlib
import io

import numpy as np
import pytest

from normcore.cli import main
from normcore.derivations import step_through
from normcore.derivations import steps as steps_module
from normcore.derivations.tape import Tape, english


def written_out(kind, st):
    """The compact gradients, written out here with NumPy alone from the values on the tape."""
    t, dy = st.tape, st.dy
    if kind == "batch_renorm":  # r, d held: BatchNorm's dx with dx_hat = dy * gamma * r
        x, gamma = t["x"].value, t["gamma"].value
        axes = (0,) + tuple(range(2, x.ndim))
        mean, var = x.mean(axis=axes, keepdims=True), x.var(axis=axes, keepdims=True)
        rstd = 1 / np.sqrt(var + st.eps)
        x_hat = (x - mean) * rstd
        run_mean, run_std = t["run_mean"].value, t["run_std"].value
        r = np.clip(np.sqrt(var + st.eps) / run_std, 1 / 3, 3)
        d = np.clip((mean - run_mean) / run_std, -5, 5)
        dx_hat = dy * gamma * r
        mean_of = lambda a: a.mean(axis=axes, keepdims=True)  # noqa: E731
        dx = rstd * (dx_hat - mean_of(dx_hat) - x_hat * mean_of(dx_hat * x_hat))
        return {"x": dx, "gamma": (dy * (x_hat * r + d)).sum(axis=axes), "beta": dy.sum(axis=axes)}
    if kind in ("layer_scale", "rezero"):  # y = x + s * (x @ W + b)
        x, W, b = t["x"].value, t["W"].value, t["b"].value
        s = t["gamma" if kind == "layer_scale" else "alpha"].value
        f, df = x @ W + b, dy * s
        flat = lambda v: v.reshape(-1, v.shape[-1])  # noqa: E731
        ds = flat(dy * f).sum(axis=0) if kind == "layer_scale" else np.sum(dy * f, keepdims=True).reshape(1)
        return {"x": dy + df @ W.T, "W": flat(x).T @ flat(df), "b": flat(df).sum(axis=0),
                "gamma" if kind == "layer_scale" else "alpha": ds}
    # weight_norm: w = g v / ||v|| per row, y = x @ w^T + b
    v, g, x = t["v"].value, t["g"].value, t["x"].value
    norm = np.sqrt((v ** 2).sum(axis=1, keepdims=True))
    v_hat = v / norm
    rows, xs = dy.reshape(-1, dy.shape[-1]), x.reshape(-1, x.shape[-1])
    dw = rows.T @ xs
    dg = (dw * v_hat).sum(axis=1, keepdims=True)
    return {"x": dy @ (g * v_hat), "v": g / norm * (dw - dg * v_hat), "g": dg, "b": rows.sum(axis=0)}


def _run(argv):
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        status = main(argv)
    return status, out.getvalue()


# --- the stop-gradient node ------------------------------------------------------------------
def test_a_stop_gradient_sends_nothing_back_and_is_held_in_the_replay():
    """y = sg(a**2) * a: the backward gives dy * a**2 (the held factor a constant), which the
    held replay measures; the forward itself has 3 a**2 dy."""
    t = Tape()
    a = t.leaf("a", np.array([0.5, -2.0, 3.0]))
    held = t.stop_gradient(t.square(a, "q", "square", "q"), "s", "stop-grad", "s")
    t.mul(held, a, "y", "scale", "y")
    dy = np.array([1.0, -0.5, 2.0])
    grads = t.backward(dy)
    assert held.held and not t["q"].held
    np.testing.assert_allclose(grads["a"], dy * a.value ** 2, rtol=1e-15)
    assert np.all(t["q"].grad == 0)
    np.testing.assert_allclose(t.numerical_grad(a, dy), grads["a"], rtol=1e-8)
    np.testing.assert_allclose(t.numerical_grad(a, dy, hold=False), 3 * dy * a.value ** 2, rtol=1e-8)
    edge = held.edges[0]
    assert "backward: 0 (held constant)" in english(edge.rule) and ":= 0" in edge.local


def test_clip_passes_the_gradient_inside_its_bounds_only():
    t = Tape()
    a = t.leaf("a", np.array([-3.0, 0.2, 4.0]))
    t.clip(a, -1.0, 2.0, "c", "clip", "c")
    grads = t.backward(np.array([1.0, 2.0, 3.0]))
    assert grads["a"].tolist() == [0.0, 2.0, 0.0]
    assert t.output.value.tolist() == [-1.0, 0.2, 2.0]


# --- Batch Renorm ----------------------------------------------------------------------------
def test_batch_renorm_holds_r_and_d_and_says_so():
    st = step_through("batch_renorm", shape=(4, 3), seed=0)
    assert st.passed
    t = st.tape
    assert [n.name for n in t if n.held] == ["d", "r"]
    for name in ("d_clip", "r_clip", "run_mean", "run_std", "dev", "std"):
        assert np.all(t[name].grad == 0), name  # nothing passes the stop-gradient
    assert np.abs(t["r"].grad).max() > 1e-3 and np.abs(t["d"].grad).max() > 1e-3  # r and d get one
    assert all(value < 1e-4 for _description, value in st.properties), st.properties
    text = st.text(width=80)
    assert "backward: 0 (held constant)" in text and "keep their values when the tape is replayed" in text
    assert "r = stop_gradient(r_clip)" in text and "**stop-grad**" in st.markdown()


def _x_from_running_statistics(shape, seed, scale, shift):
    """An x whose batch statistics are the step-through's running ones, rescaled by ``scale``
    and moved by ``shift`` running sigmas, per channel (the running statistics are drawn first
    from the seed when x is given, so a first x of the same shape shows them)."""
    first = step_through("batch_renorm", np.arange(np.prod(shape), dtype=float).reshape(shape), seed=seed)
    run_mean, run_std = first.tape["run_mean"].value, first.tape["run_std"].value
    z = np.random.default_rng(99).standard_normal(shape)
    z = (z - z.mean(axis=0)) / z.std(axis=0)
    return run_mean + run_std * (scale * z + shift)


def test_where_r_and_d_are_clipped_the_forward_differences_agree():
    x = _x_from_running_statistics((4, 3), 1, scale=10.0, shift=8.0)  # r at 3, d at 5
    st = step_through("batch_renorm", x, seed=1)
    t = st.tape
    assert np.all(t["r"].value == 3.0) and np.all(t["d"].value == 5.0) and st.passed
    forward = t.numerical_grad(t["x"], st.dy, hold=False)
    np.testing.assert_allclose(forward, t["x"].grad, rtol=1e-6, atol=1e-8)
    notes = [english(n) for n in st.notes]
    assert any("both clipped" in n for n in notes) and not any("not clipped" in n for n in notes)


def test_where_r_and_d_are_not_clipped_the_forward_is_the_running_affine_map():
    """Unclipped, x_hat * r + d = (x - run_mean) / run_std: the forward's own derivative is
    dy * gamma / run_std, not the staged one, and the note says how far apart they are."""
    x = _x_from_running_statistics((4, 3), 2, scale=1.5, shift=0.5)
    st = step_through("batch_renorm", x, seed=2)
    t = st.tape
    assert np.all(t["r_raw"].value == t["r"].value) and np.all(t["d_raw"].value == t["d"].value)
    assert st.passed  # against the layer, and against differences with r and d held
    forward = t.numerical_grad(t["x"], st.dy, hold=False)
    np.testing.assert_allclose(forward, st.dy * t["gamma"].value / t["run_std"].value, rtol=1e-6)
    gap = np.abs(forward - t["x"].grad).max()
    assert gap > 0.1
    note = next(english(n) for n in st.notes if "not clipped" in english(n))
    assert f"up to {gap:.2g} in channels [0, 1, 2]" in note


def test_r_and_d_differentiated_through_are_caught(monkeypatch):
    """The mistake of the paper's readers: a stop-gradient that passes the gradient on."""
    original = steps_module.Tape.stop_gradient

    def leaky(self, *args, **kwargs):
        node = original(self, *args, **kwargs)
        node.edges[0].vjp = lambda g, out, v: g
        return node

    monkeypatch.setattr(steps_module.Tape, "stop_gradient", leaky)
    x = _x_from_running_statistics((4, 3), 2, scale=1.5, shift=0.5)  # unclipped: the leak shows
    st = step_through("batch_renorm", x, seed=2)
    assert not st.passed
    assert st.check("x", "compact").verdict == "DIFFERS"
    assert st.check("r_clip", "numerical").verdict == "DIFFERS"  # the held replay sees 0 there


def test_batch_renorm_graph_draws_the_stop_gradients_apart():
    graph = step_through("batch_renorm", shape=(3, 4)).graph()
    assert graph.held == ["d", "r"] and "held constant" in graph.stopped
    assert "backward: 0" in graph.labels["r"] and "running statistic" in graph.labels["run_std"]
    assert all(label.split("\n")[0] != "x" for label in graph.routes)  # the routes end at x_hat
    assert all(("mean", "dev") not in edges for edges in graph.routes.values())


def test_batch_renorm_refuses_one_value_per_channel():
    with pytest.raises(ValueError, match="more than one value per channel"):
        step_through("batch_renorm", shape=(1, 4))


# --- WeightNorm ------------------------------------------------------------------------------
def test_weight_norm_dv_is_the_projection_of_dw():
    st = step_through("weight_norm", shape=(3, 4), seed=0)
    assert st.passed
    t = st.tape
    assert t.nodes[0].name == "v" and t["v"].value.shape == (5, 4) and t["g"].value.shape == (5, 1)
    assert all(value < 1e-12 for _description, value in st.properties), st.properties
    # the two routes into v_hat: each alone is not orthogonal to v, their sum is
    straight, through_norm = t["v_hat"].share("v"), t["v2"].share("v")
    assert np.abs((straight * t["v"].value).sum(axis=1)).max() > 1e-3
    np.testing.assert_allclose(straight + through_norm, t["v"].grad, rtol=1e-13, atol=1e-15)
    graph = st.graph()
    assert list(graph.routes) == ["direct: v -> v_hat -> w", "through the norm: v -> v2 -> ss -> norm -> v_hat"]
    assert "parameter" in graph.labels["v"] and "input" in graph.labels["x"]


def test_the_projection_dropped_from_dv_is_caught(monkeypatch):
    """The route through ||v|| cut (d norm sends nothing back): dv is then (g/||v||) dw, which
    is not orthogonal to v, and the checks say so."""
    original = steps_module.Tape.sqrt

    def cut(self, *args, **kwargs):
        node = original(self, *args, **kwargs)
        node.edges[0].vjp = lambda g, out, v: np.zeros_like(v)
        return node

    monkeypatch.setattr(steps_module.Tape, "sqrt", cut)
    st = step_through("weight_norm", shape=(3, 4), seed=0)
    assert not st.passed and st.check("v", "compact").verdict == "DIFFERS"
    assert st.properties[0][1] > 1e-3  # sum_in(dv * v) is no longer 0


def test_weight_norm_bad_requests():
    with pytest.raises(ValueError, match="D >= 2"):
        step_through("weight_norm", shape=(3, 1))
    with pytest.raises(ValueError, match="no gamma or beta"):
        step_through("weight_norm", shape=(3, 4), gamma=np.ones(4))


# --- LayerScale and ReZero -------------------------------------------------------------------
@pytest.mark.parametrize("kind, scale", [("layer_scale", "gamma"), ("rezero", "alpha")])
def test_a_scale_near_0_gets_the_gradient_and_the_branch_almost_none(kind, scale):
    st = step_through(kind, shape=(3, 4), seed=0)
    assert st.passed
    t = st.tape
    start = 1e-5 if kind == "layer_scale" else 0.0
    assert np.all(t[scale].value == start)
    np.testing.assert_array_equal(t["f"].grad, start * st.dy)  # the branch gets dy times the scale
    assert np.abs(t["W"].grad).max() <= 1e-3 * np.abs(t[scale].grad).max()
    if kind == "rezero":
        assert np.all(t["W"].grad == 0) and np.all(t["x"].grad == st.dy)  # the block is the identity
    assert all(value < 1e-12 for _description, value in st.properties)
    assert list(st.graph().routes)[1].startswith("through the residual branch")


def test_layer_scale_takes_a_given_gamma():
    st = step_through("layer_scale", shape=(2, 3), gamma=[0.5, -1.0, 2.0])
    assert st.passed and st.tape["gamma"].value.tolist() == [0.5, -1.0, 2.0]
    assert np.abs(st.tape["W"].grad).max() > 1e-3


# --- the command line ------------------------------------------------------------------------
def test_explain_lists_and_steps_through_both():
    err = io.StringIO()
    with pytest.raises(SystemExit), contextlib.redirect_stdout(err):
        main(["explain", "--help"])
    listed = err.getvalue()
    assert "batch_renorm" in listed and "weight_norm" in listed
    status, text = _run(["explain", "BatchRenorm", "--summary"])
    assert status == 0 and "backward: 0 (held constant): d_r_clip += 0" in text
    assert max(len(line) for line in text.splitlines()) <= 80
    status, text = _run(["explain", "weight_norm", "--format", "md"])
    assert status == 0 and "`v_hat`" in text
