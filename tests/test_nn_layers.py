"""Gradient checks and properties of every layer of the Transformer stack (float64, tiny sizes);
each layer class's smallest case is gradchecked in test_smoke.py, every other case here."""

import numpy as np
import pytest

import normcore as nc
from normcore import nn
from normcore.layer_cases import transformer_cases, weight_cases
from test_smoke import ONE_PER_CLASS

# Each layer class's smallest case is gradchecked by tests/test_smoke.py (the same case, seed 0);
# every other case here, so that the suite gradchecks each case once.
OTHER_CASES = [c for c in transformer_cases(seed=0) + weight_cases(seed=0) if c.label not in ONE_PER_CLASS]


@pytest.mark.parametrize("case", OTHER_CASES, ids=lambda c: c.label)
def test_gradcheck_every_layer(case):
    report = nc.gradcheck(case.module, *case.inputs, seed=1)
    assert report.passed, report.table()


@pytest.mark.parametrize("case", transformer_cases(seed=7)[:13], ids=lambda c: c.label)
def test_gradcheck_layers_other_seed(case):
    report = nc.gradcheck(case.module, *case.inputs, seed=8)
    assert report.passed, report.table()


def test_linear_matches_formula_and_shapes():
    rng = np.random.default_rng(0)
    lin = nn.Linear(4, 3, rng=0)
    lin.bias.data[...] = rng.standard_normal(3)
    x = rng.standard_normal((2, 5, 4))
    y = lin(x)
    assert y.shape == (2, 5, 3)
    np.testing.assert_allclose(y, np.einsum("bti,oi->bto", x, lin.weight.data) + lin.bias.data, rtol=1e-12)
    assert list(lin.state_dict()) == ["weight", "bias"] and lin.weight.shape == (3, 4)
    with pytest.raises(ValueError, match=r"\(\*, 4\)"):
        lin(rng.standard_normal((2, 5)))


@pytest.mark.parametrize("init,expected_var", [
    ("xavier", lambda i, o, g: g * g * 2 / (i + o)),
    ("xavier_normal", lambda i, o, g: g * g * 2 / (i + o)),
    ("kaiming", lambda i, o, g: g * g * 2 / i),
    ("kaiming_uniform", lambda i, o, g: g * g * 2 / i),
    ("torch", lambda i, o, g: g * g / (3 * i)),
])
def test_linear_init_variance(init, expected_var):
    fan_in, fan_out, gain = 200, 300, 0.7
    w = nn.Linear(fan_in, fan_out, init=init, gain=gain, rng=0).weight.data
    assert abs(w.var() / expected_var(fan_in, fan_out, gain) - 1) < 0.03
    assert abs(w.mean()) < 0.01 * w.std()


def test_linear_rejects_unknown_init():
    with pytest.raises(ValueError, match="init must be one of"):
        nn.Linear(2, 2, init="glorot")


def test_gelu_tanh_is_torch_tanh_approximation_at_known_points():
    # 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))), evaluated independently with math
    import math
    xs = np.array([-3.0, -1.0, -0.1, 0.0, 0.5, 1.0, 2.5])
    expect = [0.5 * v * (1 + math.tanh(math.sqrt(2 / math.pi) * (v + 0.044715 * v ** 3))) for v in xs]
    np.testing.assert_allclose(nn.GELU(approximate="tanh")(xs), expect, rtol=1e-14, atol=1e-16)
    assert abs(nn.GELU(approximate="tanh")(np.array([1.0]))[0] - 0.8411919906082768) < 1e-12  # torch's value


def test_gelu_default_is_exact_erf_form_at_known_points():
    # 0.5 x (1 + erf(x / sqrt(2))), evaluated independently with math.erf
    import math
    xs = np.array([-3.0, -1.0, -0.1, 0.0, 0.5, 1.0, 2.5])
    expect = [0.5 * v * (1 + math.erf(v / math.sqrt(2))) for v in xs]
    np.testing.assert_allclose(nn.GELU()(xs), expect, rtol=1e-14, atol=1e-16)
    assert abs(nn.GELU()(np.array([1.0]))[0] - 0.8413447460685429) < 1e-15  # torch's value


def test_sigmoid_and_softmax_stay_finite_for_huge_inputs():
    x = np.array([[-1e4, 0.0, 1e4], [1e300, 1e300, -1e300]])
    s = nn.Sigmoid()(x)
    assert np.all(np.isfinite(s)) and s[0, 0] == 0.0 and s[0, 2] == 1.0
    p = nn.Softmax()(x)
    assert np.all(np.isfinite(p))
    np.testing.assert_allclose(p.sum(-1), 1.0)
    np.testing.assert_allclose(p[1], [0.5, 0.5, 0.0])


def test_softmax_gradient_sums_to_zero_along_axis():
    rng = np.random.default_rng(0)
    sm = nn.Softmax(axis=1)
    sm(rng.standard_normal((3, 4, 2)))
    dx = sm.backward(rng.standard_normal((3, 4, 2)))
    np.testing.assert_allclose(dx.sum(axis=1), 0.0, atol=1e-14)


def test_embedding_repeated_ids_accumulate():
    emb = nn.Embedding(4, 2, rng=0)
    ids = np.array([[1, 1, 3], [1, 0, 3]])
    emb(ids)
    dy = np.arange(12.0).reshape(2, 3, 2) + 1
    assert emb.backward(dy) is None
    expect = np.zeros((4, 2))
    for (b, t), i in np.ndenumerate(ids):
        expect[i] += dy[b, t]
    np.testing.assert_array_equal(emb.weight.grad, expect)
    assert np.all(emb.weight.grad[1] == dy[0, 0] + dy[0, 1] + dy[1, 0])


def test_embedding_rejects_out_of_range_and_float_ids():
    emb = nn.Embedding(5, 2)
    with pytest.raises(ValueError, match="vocabulary of size 5"):
        emb(np.array([0, 5]))
    with pytest.raises(ValueError, match=r"\[0, 5\)"):
        emb(np.array([-1]))
    with pytest.raises(TypeError, match="integer"):
        emb(np.array([0.0, 1.0]))


def test_positional_embedding_adds_rows_and_rejects_long_sequences():
    pe = nn.PositionalEmbedding(4, 3, rng=0)
    x = np.zeros((2, 3, 3))
    np.testing.assert_array_equal(pe(x), np.broadcast_to(pe.weight.data[:3], (2, 3, 3)))
    dy = np.random.default_rng(0).standard_normal((2, 3, 3))
    np.testing.assert_array_equal(pe.backward(dy), dy)
    np.testing.assert_allclose(pe.weight.grad[:3], dy.sum(0))
    assert np.all(pe.weight.grad[3] == 0)
    with pytest.raises(ValueError, match="max_len=4"):
        pe(np.zeros((1, 5, 3)))


def test_attention_is_causal_and_its_gradient_does_not_flow_backwards_in_time():
    rng = np.random.default_rng(0)
    attn = nn.CausalSelfAttention(6, 3, rng=0)
    x = rng.standard_normal((2, 5, 6))
    y = attn(x)
    x2 = x.copy()
    x2[:, 3:] += rng.standard_normal((2, 2, 6))  # change only the future of positions 0..2
    np.testing.assert_allclose(attn(x2)[:, :3], y[:, :3], rtol=1e-13)
    attn(x)
    dy = np.zeros_like(y)
    dy[:, 2] = rng.standard_normal((2, 6))  # a loss on position 2 only
    dx = attn.backward(dy)
    assert np.all(dx[:, 3:] == 0) and np.all(np.abs(dx[:, :3]) > 0)
    P = attn._cache[3]  # the cache is (q, k, v, P, input dtype)
    np.testing.assert_allclose(P.sum(-1), 1.0)
    assert np.all(P[..., np.triu_indices(5, 1)[0], np.triu_indices(5, 1)[1]] == 0)


def test_attention_key_projection_has_no_bias():
    attn = nn.CausalSelfAttention(4, 2)
    assert attn.k.bias is None and attn.q.bias is not None
    assert "k.bias" not in attn.state_dict()


def test_attention_errors():
    with pytest.raises(ValueError, match=r"d_model \(6\) must be divisible by n_heads \(4\)"):
        nn.CausalSelfAttention(6, 4)
    with pytest.raises(ValueError, match=r"\(B, T, 4\)"):
        nn.CausalSelfAttention(4, 2)(np.zeros((3, 4)))


def test_cross_entropy_matches_log_softmax_and_ignores_positions():
    rng = np.random.default_rng(0)
    logits = rng.standard_normal((2, 5, 3)) * 3  # (N, C, d): the classes on axis 1, as in PyTorch
    targets = np.array([[4, -100, 0], [1, 2, -100]])
    ce = nn.CrossEntropyLoss()
    loss = ce(logits, targets)
    logp = logits - np.log(np.exp(logits).sum(1, keepdims=True))
    kept = [(0, 0), (0, 2), (1, 0), (1, 1)]
    assert np.isclose(loss, -np.mean([logp[b, targets[b, t], t] for b, t in kept]), rtol=1e-13)
    d = ce.backward()
    assert np.all(d[0, :, 1] == 0) and np.all(d[1, :, 2] == 0)
    np.testing.assert_allclose(d.sum(1), 0.0, atol=1e-15)
    big = ce(np.array([[1e4, 0.0]]), np.array([1]))
    assert np.isclose(big, 1e4)


def test_cross_entropy_errors_name_the_class_count():
    ce = nn.CrossEntropyLoss()
    with pytest.raises(ValueError, match=r"\[0, 5\)"):
        ce(np.zeros((2, 5)), np.array([0, 5]))
    with pytest.raises(ValueError, match=r"shape \(2,\)"):
        ce(np.zeros((2, 5)), np.array([[0, 1]]))
    ce(np.zeros((2, 5)), np.array([0, 1]))
    with pytest.raises(ValueError, match="scalar"):
        ce.backward(np.ones(2))


def test_mse_loss_value_and_gradient():
    rng = np.random.default_rng(0)
    pred, target = rng.standard_normal((3, 4)), rng.standard_normal((3, 4))
    mse = nn.MSELoss()
    assert np.isclose(mse(pred, target), np.mean((pred - target) ** 2))
    np.testing.assert_allclose(mse.backward(2.0), 2.0 * 2 * (pred - target) / 12)
    with pytest.raises(ValueError, match="same shape"):
        mse(pred, target[:2])
