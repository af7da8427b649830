"""The step-throughs of soft-capping and of cross-entropy with the z-loss
(normcore/derivations/logits.py): their tapes, their checks against normcore's own layers and
against central differences, the mistakes they catch, and ``normcore explain`` on them."""

import contextlib
import io

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as hs
from norm_tiers import suite_settings

import normcore as nc
from normcore.cli import main
from normcore.derivations import step_through
from normcore.derivations.logits import CAP, Z_LOSS
from normcore.i18n.width import display_width


def written_out(kind, st):
    """The compact gradient, written out here with NumPy alone (no normcore layer), from the
    tape's input and upstream gradient."""
    x, dy = st.tape.nodes[0].value, st.dy
    if kind == "softcap":  # y = c tanh(x / c): dx = dy sech(x / c)**2
        return {"x": dy / np.cosh(x / CAP) ** 2}
    n = len(x)  # z_loss: CE + z_loss * mean_N(logZ**2)
    log_z = np.log(np.exp(x).sum(axis=1, keepdims=True))  # (N, 1), small logits: no shift needed
    p = np.exp(x - log_z)  # (N, C)
    onehot = np.eye(x.shape[1])[st.target]
    return {"s": dy.item() * (p - onehot + 2 * Z_LOSS * log_z * p) / n}


@suite_settings(max_examples=20)
@given(kind=hs.sampled_from(["softcap", "z_loss"]), seed=hs.integers(0, 2 ** 16),
       shape=hs.sampled_from([(2, 3), (4, 2), (1, 5), (3, 3)]))
def test_the_staged_gradient_is_the_written_out_one_and_the_central_differences(kind, seed, shape):
    st = step_through(kind, shape=shape, seed=seed)
    assert st.passed, [c for c in st.checks if c.verdict == "DIFFERS"]
    assert {c.node for c in st.checks if c.against == "numerical"} == {n.name for n in st.tape}
    for name, grad in written_out(kind, st).items():
        assert nc.rel_error(st.tape[name].grad, grad) < 1e-12, name
    for description, value in st.properties:
        assert value < 1e-12, description


def test_the_softcap_tape_divides_takes_tanh_and_multiplies_and_stays_below_the_cap():
    st = step_through("softcap", x=np.array([[-30.0, -1.0, 0.5, 4.0, 100.0]]), seed=0)
    assert [(n.name, str(n.step)) for n in st.tape] == [("x", "input"), ("u", "divide by c"), ("t", "tanh"),
                                                         ("y", "scale by c")]
    y = st.tape["y"].value
    assert np.all(np.abs(y) <= CAP) and np.abs(y[0, 1:4]).max() < CAP  # tanh(50) rounds to 1 in float64
    assert y[0, 2] == pytest.approx(0.5, rel=0.03)  # y ~ x where |x| << c
    np.testing.assert_allclose(st.tape["x"].grad, st.dy * (1 - (y / CAP) ** 2), rtol=1e-12)


def test_a_softcap_whose_slope_is_one_minus_y_squared_is_caught(monkeypatch):
    """The mistake to avoid: the slope of a plain tanh, 1 - y**2, where y = c * tanh(x / c)."""
    import normcore.nn.softcap as softcap_module

    def wrong(x, cap):
        y = cap * np.tanh(x / cap)
        return y, 1.0 - y * y

    monkeypatch.setattr(softcap_module, "softcap", wrong)
    st = step_through("softcap", shape=(3, 4), seed=0)
    assert not st.passed and st.check("x", "compact").verdict == "DIFFERS"
    assert st.check("x", "numerical").verdict in ("exact", "close")  # the tape itself is right


def test_the_z_loss_tape_adds_log_z_squared_to_the_cross_entropy():
    st = step_through("z_loss", shape=(4, 3), seed=2)
    s = st.tape["s"].value
    log_z = np.log(np.exp(s).sum(axis=1))
    np.testing.assert_allclose(st.tape["logZ"].value[:, 0], log_z, rtol=1e-14)
    ce = nc.CrossEntropyLoss()(s, st.target)
    assert st.tape["loss"].value.item() == pytest.approx(ce + Z_LOSS * np.mean(log_z ** 2), rel=1e-14)
    # the z-loss's share of each row sums to 2 z_loss logZ / N: not 0, so a missing softmax factor shows
    row_sums = st.tape["s"].grad.sum(axis=1)
    assert np.abs(row_sums).max() > 1e-3
    np.testing.assert_allclose(row_sums, st.dy.item() * 2 * Z_LOSS * log_z / 4, rtol=1e-10)


def test_the_z_loss_refuses_targets_out_of_range_and_gamma():
    with pytest.raises(ValueError, match="class index"):
        step_through("z_loss", shape=(2, 3), target=np.array([0, 3]))
    with pytest.raises(ValueError, match="gamma"):
        step_through("softcap", gamma=np.ones(4))


@pytest.mark.parametrize("argv", [["softcap", "--summary"], ["z_loss", "--shape", "3x4"],
                                  ["z-loss", "--format", "md"]])
def test_explain_steps_through_them_within_80_columns(argv):
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert main(["explain", *argv]) == 0
    text = out.getvalue()
    assert ("tanh" if argv[0] == "softcap" else "logZ") in text
    if "--format" not in argv:
        assert all(display_width(line) <= 80 for line in text.splitlines())
