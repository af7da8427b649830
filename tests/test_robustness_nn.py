"""Robustness of the Transformer stack (normcore.nn), of load_state_dict and of gradcheck.

Caches never share memory with the caller's arrays, a state dict loads whole or not at all,
zero-size inputs give empty results as in PyTorch, ReLU handles inf and NaN as PyTorch does,
Dropout keeps the input's dtype, gradcheck divides by the step it actually took, and every
bad argument raises an error of the fitting type that says what was expected.
"""

import warnings

import numpy as np
import pytest

import normcore as nc
from normcore import optim

V = 7  # vocabulary size / number of classes of every integer input below


def _x(*shape):
    return np.random.default_rng(list(shape)).standard_normal(shape)


def _tokens(*shape):
    return np.random.default_rng(list(shape)).integers(0, V, shape)


def _arrays(obj):
    """Every ndarray inside a cache (nested tuples, lists and dicts)."""
    if isinstance(obj, np.ndarray):
        yield obj
    elif isinstance(obj, (tuple, list)):
        for o in obj:
            yield from _arrays(o)
    elif isinstance(obj, dict):
        for o in obj.values():
            yield from _arrays(o)


# --- 1. nothing the caller holds aliases a cache -----------------------------------------------

def _block(position, dropout=0.2):
    return lambda: nc.TransformerBlock(4, 2, d_ff=8, position=position, dropout=dropout, n_layers=2, rng=0)


def _model(position):
    return lambda: nc.TinyTransformer(V, 4, 2, 2, 6, position=position, dropout=0.1, rng=0)


# name: (make a fresh module, its inputs). Every make() builds the same module each time.
CASES = {
    "Linear": (lambda: nc.Linear(5, 3, rng=0), (_x(4, 5),)),
    "Linear (B,T,C)": (lambda: nc.Linear(5, 3, rng=0), (_x(2, 3, 5),)),
    "WeightNorm": (lambda: nc.WeightNorm(nc.Linear(5, 3, rng=0), dim=0), (_x(2, 3, 5),)),
    "WSLinear": (lambda: nc.WSLinear(5, 3, rng=0), (_x(4, 5),)),
    "LayerScale": (lambda: nc.LayerScale(5, init=0.5), (_x(2, 3, 5),)),
    "ReZero": (lambda: nc.ReZero(init=0.5), (_x(4, 5),)),
    # the batch-statistics variants of BatchNorm (normcore.norms), r and d clipped / in chunks
    "BatchRenorm1d": (lambda: nc.BatchRenorm1d(5, r_max=1.2, d_max=0.1), (_x(4, 5, 2) * 3,)),
    "BatchRenorm1d eval": (lambda: nc.BatchRenorm1d(5).eval(), (_x(4, 5),)),
    "GhostBatchNorm1d": (lambda: nc.GhostBatchNorm1d(5, virtual_batch_size=3), (_x(8, 5),)),
    "GhostBatchNorm1d eval": (lambda: nc.GhostBatchNorm1d(5, virtual_batch_size=3).eval(), (_x(8, 5),)),
    "ReLU": (nc.ReLU, (_x(4, 5),)),
    "GELU": (nc.GELU, (_x(4, 5),)),
    "GELU tanh": (lambda: nc.GELU(approximate="tanh"), (_x(4, 5),)),
    "LogSoftmax": (nc.LogSoftmax, (_x(4, 5),)),
    "Sigmoid": (nc.Sigmoid, (_x(4, 5),)),
    "Tanh": (nc.Tanh, (_x(4, 5),)),
    "Softmax": (nc.Softmax, (_x(4, 5),)),
    "Softmax axis 0": (lambda: nc.Softmax(0), (_x(4, 5),)),
    "Dropout train": (lambda: nc.Dropout(0.3, rng=0), (_x(4, 5),)),
    "Dropout eval": (lambda: nc.Dropout(0.3, rng=0).eval(), (_x(4, 5),)),
    "Embedding": (lambda: nc.Embedding(V, 4, rng=0), (_tokens(3, 5),)),
    "PositionalEmbedding": (lambda: nc.PositionalEmbedding(6, 4, rng=0), (_x(2, 5, 4),)),
    "CausalSelfAttention": (lambda: nc.CausalSelfAttention(4, 2, rng=0), (_x(2, 5, 4),)),
    "MultiheadSelfAttention": (lambda: nc.MultiheadSelfAttention(4, 2, rng=0), (_x(2, 5, 4),)),
    "MultiheadSelfAttention masked": (lambda: nc.MultiheadSelfAttention(4, 2, causal=True, rng=0),
                                      (_x(2, 5, 4), np.array([[False] * 5, [False] * 3 + [True] * 2]),
                                       _x(5, 5))),
    "MultiheadAttention": (lambda: nc.MultiheadAttention(4, 2, kdim=3, vdim=5, rng=0),
                           (_x(2, 3, 4), _x(2, 5, 3), _x(2, 5, 5))),
    "MultiheadAttention added keys, masked": (lambda: nc.MultiheadAttention(4, 2, add_bias_kv=True, add_zero_attn=True,
                                                                            causal=True, rng=0),
                                              (_x(2, 3, 4), _x(2, 5, 4), _x(2, 5, 4)[::-1],
                                               np.array([[False] * 5, [True] * 5]), _x(2, 2, 3, 5))),
    "MultiheadSelfAttention qk_norm, masked": (lambda: nc.MultiheadSelfAttention(6, 2, qk_norm="layernorm", rng=0),
                                               (_x(2, 5, 6), np.array([[False] * 5, [False] * 3 + [True] * 2]),
                                                _x(5, 5))),
    "MultiheadAttention qk_norm, added keys": (lambda: nc.MultiheadAttention(4, 2, add_bias_kv=True, add_zero_attn=True,
                                                                             qk_norm="rmsnorm", rng=0),
                                               (_x(2, 3, 4), _x(2, 5, 4), _x(2, 5, 4)[::-1])),
    "SoftCap": (lambda: nc.SoftCap(1.5), (_x(4, 5),)),
    "MultiheadAttention qk_norm over the projection, soft-capped": (
        lambda: nc.MultiheadAttention(4, 2, add_bias_kv=True, qk_norm="rmsnorm", qk_norm_scope="projection",
                                      attn_softcap=2.0, rng=0), (_x(2, 3, 4), _x(2, 5, 4), _x(2, 5, 4)[::-1])),
    "FeedForward": (lambda: nc.FeedForward(4, 8, rng=0), (_x(2, 5, 4),)),
    "FeedForward sigmoid": (lambda: nc.FeedForward(4, 8, activation="sigmoid", rng=0), (_x(2, 5, 4),)),
    **{f"TransformerBlock {p}": (_block(p), (_x(2, 5, 4),)) for p in ("pre", "post", "deepnorm", "none", "peri")},
    "TransformerBlock peri, qk_norm, no dropout": (
        lambda: nc.TransformerBlock(4, 2, d_ff=8, position="peri", qk_norm="rmsnorm", rng=0), (_x(2, 5, 4),)),
    "TransformerBlock post, no dropout": (_block("post", dropout=0.0), (_x(2, 5, 4),)),
    "TransformerBlock reordered": (_block("reordered"), (_x(2, 5, 4),)),
    "TransformerBlock pre, LayerNorm Scaling": (
        lambda: nc.TransformerBlock(4, 2, d_ff=8, norm_scale="depth", layer_index=3, dropout=0.2, rng=0),
        (_x(2, 5, 4),)),
    "TinyTransformer mix, soft-capped logits": (
        lambda: nc.TinyTransformer(V, 4, 2, 2, 6, position="mix", mix_post_fraction=0.5, logit_softcap=2.0,
                                   dropout=0.1, rng=0), (_tokens(2, 5),)),
    "TransformerBlock encoder, masked": (lambda: nc.TransformerBlock(4, 2, d_ff=8, causal=False, bias=False, rng=0),
                                         (_x(2, 5, 4), np.array([[False] * 5, [False] * 3 + [True] * 2]))),
    **{f"TinyTransformer {p}": (_model(p), (_tokens(2, 5),)) for p in ("pre", "post", "peri")},
    **{f"TransformerDecoderBlock {p}": (
        lambda p=p: nc.TransformerDecoderBlock(4, 2, d_ff=8, position=p, dropout=0.2, n_layers=2, rng=0),
        (_x(2, 5, 4), _x(2, 6, 4))) for p in ("pre", "post", "deepnorm", "none", "peri", "reordered")},
    "TransformerDecoderBlock masked": (lambda: nc.TransformerDecoderBlock(4, 2, d_ff=8, position="post", rng=0),
                                       (_x(2, 5, 4), _x(2, 6, 4), np.array([[False] * 5, [False] * 3 + [True] * 2]),
                                        np.array([[False] * 6, [False] * 2 + [True] * 4]), _x(5, 5), _x(5, 6))),
    **{f"TinySeq2Seq {p}": (lambda p=p: nc.TinySeq2Seq(V, V, 4, 2, 2, 6, 5, position=p, dropout=0.1, rng=0),
                            (_tokens(2, 6), _tokens(2, 5), np.array([[False] * 6, [False] * 4 + [True] * 2])))
       for p in ("pre", "post")},
    "CrossEntropyLoss": (nc.CrossEntropyLoss, (_x(3, V, 5), _tokens(3, 5))),
    "CrossEntropyLoss weighted, smoothed": (lambda: nc.CrossEntropyLoss(weight=np.linspace(0.5, 2.0, V),
                                                                        label_smoothing=0.1),
                                            (_x(15, V), _tokens(15))),
    "MSELoss": (nc.MSELoss, (_x(3, 4), _x(4, 4)[:3])),
    "Sequential": (lambda: nc.Sequential(nc.Linear(5, 6, rng=0), nc.Tanh(), nc.Dropout(0.2, rng=1),
                                         nc.Linear(6, 3, rng=2), nc.Softmax()), (_x(4, 5),)),
}


def _as_dtype(inputs, dtype):
    return [a.astype(dtype) if np.issubdtype(a.dtype, np.floating) else a.copy() for a in inputs]


def _upstream(y):
    """A random upstream gradient of y's shape and dtype (a random scalar for a loss)."""
    return np.random.default_rng(1).standard_normal(np.shape(y)).astype(np.asarray(y).dtype)


def _scramble(a):
    """Overwrite the caller's array in place, as a caller reusing its buffer would."""
    if np.issubdtype(a.dtype, np.integer):
        a[...] = (a + 1) % V
    else:
        a[...] = np.random.default_rng(2).standard_normal(a.shape) * 3 + 1


def _forward_backward(make, inputs, scramble):
    """Forward and backward, optionally overwriting the inputs and the output in between;
    returns (module, inputs, y, dx, {parameter name: grad})."""
    module = make()
    y = module(*inputs)
    dy = _upstream(y)
    dy_held = dy.copy()
    if scramble:
        for a in inputs:
            _scramble(a)
        _scramble(y)
    dx = module.backward(dy)
    np.testing.assert_array_equal(dy, dy_held, err_msg="backward wrote into the upstream gradient dy")
    return module, inputs, y, dx, {n: p.grad.copy() for n, p in module.named_parameters()}


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("name", CASES)
def test_overwriting_the_input_or_the_output_after_forward_does_not_change_backward(name, dtype):
    make, inputs = CASES[name]
    _, _, _, dx, grads = _forward_backward(make, _as_dtype(inputs, dtype), scramble=False)
    _, _, _, dx2, grads2 = _forward_backward(make, _as_dtype(inputs, dtype), scramble=True)
    if dx is None:
        assert dx2 is None
    else:  # one input gradient, or a tuple of them (attention: dquery, dkey, dvalue)
        for i, (a, b) in enumerate(zip(_gradients(dx2), _gradients(dx))):
            _assert_same(a, b, dtype, f"input gradient {i}")
    assert grads2.keys() == grads.keys()
    for n in grads:
        _assert_same(grads2[n], grads[n], dtype, n)


def _gradients(dx):
    """The input gradients backward returned: a list of one array, or of each in a tuple."""
    return [] if dx is None else list(dx) if isinstance(dx, tuple) else [dx]


def _assert_same(a, b, dtype, what):
    """Equal up to rounding (the same arithmetic on fresh arrays); an overwritten cache is off by O(1)."""
    tol = 1e-12 if dtype == np.float64 else 1e-5
    np.testing.assert_allclose(a, b, rtol=tol, atol=tol * float(np.max(np.abs(b), initial=0.0)), err_msg=what)


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.float16])
@pytest.mark.parametrize("name", CASES)
def test_no_cache_shares_memory_with_the_input_the_output_or_the_returned_gradient(name, dtype):
    make, inputs = CASES[name]
    module, inputs, y, dx, _ = _forward_backward(make, _as_dtype(inputs, dtype), scramble=False)
    held = {"input": inputs, "output": [y], "returned dx": _gradients(dx)}
    for mod_name, mod in module.named_modules():
        for cached in _arrays(mod.__dict__.get("_cache")):
            for what, arrays in held.items():
                for a in arrays:
                    assert not np.shares_memory(cached, a), \
                        f"{type(mod).__name__} {mod_name!r} caches an array that shares memory with the {what}"


def test_the_cases_above_cover_every_layer_in_normcore_nn():
    layers = {name for name in nc.nn.__all__
              if isinstance(getattr(nc.nn, name), type) and issubclass(getattr(nc.nn, name), nc.Module)}
    covered = {type(make()).__name__ for make, _ in CASES.values()}
    assert layers <= covered, f"add a case for {sorted(layers - covered)}"


@pytest.mark.parametrize("in_dtype, dy_dtype", [(np.float32, np.float64), (np.float64, np.float32)])
@pytest.mark.parametrize("name", CASES)
def test_the_input_gradient_has_the_input_dtype_whatever_the_dtype_of_dy(name, in_dtype, dy_dtype):
    make, inputs = CASES[name]
    module = make()
    y = module(*_as_dtype(inputs, in_dtype))
    dx = module.backward(_upstream(y).astype(dy_dtype))
    assert all(g.dtype == in_dtype for g in _gradients(dx))


def test_linear_example_from_the_issue():
    lin = nc.Linear(3, 2, rng=0)
    x = np.ones((4, 3))
    lin(x)
    x[:] = 0
    lin.backward(np.ones((4, 2)))
    np.testing.assert_array_equal(lin.weight.grad, np.full((2, 3), 4.0))


# --- 2. load_state_dict loads everything or nothing ----------------------------------------------

def _batchnorm(seed):
    """A BatchNorm1d(3) whose every state entry differs from a fresh one's (and from other seeds')."""
    rng = np.random.default_rng(seed)
    bn = nc.BatchNorm1d(3)
    for _ in range(seed + 1):
        bn(rng.standard_normal((5, 3)) * 2 + 1)
    bn.weight.data[...] = rng.standard_normal(3)
    bn.bias.data[...] = rng.standard_normal(3)
    return bn


def _assert_same_state(a, b):
    assert list(a) == list(b)
    for k in a:
        assert a[k].dtype == b[k].dtype and a[k].shape == b[k].shape, k
        np.testing.assert_array_equal(a[k], b[k], err_msg=k)


BAD_BATCHNORM_ENTRIES = [
    ("num_batches_tracked", None, TypeError, r"'num_batches_tracked'.*array of numbers.*NoneType"),
    ("num_batches_tracked", 2.5, TypeError, r"'num_batches_tracked'.*int64"),
    ("num_batches_tracked", np.array([3]), ValueError, r"'num_batches_tracked'.*expected shape \(\), got \(1,\)"),
    ("running_var", "abc", TypeError, r"'running_var'.*array of numbers"),
    ("running_var", np.array([1 + 1j, 2, 3]), TypeError, r"'running_var'.*real numbers.*complex128"),
    ("running_mean", np.ones(4), ValueError, r"'running_mean' expected shape \(3,\), got \(4,\)"),
    ("bias", [[1.0, 2.0], [3.0]], TypeError, r"'bias'.*array of numbers"),
    ("bias", np.array([True, False, True]), TypeError, r"'bias'.*real numbers.*bool"),
    ("weight", np.array(["1", "2", "3"]), TypeError, r"'weight'.*array of numbers"),
]


@pytest.mark.parametrize("key, bad, error, message", BAD_BATCHNORM_ENTRIES, ids=lambda v: repr(v)[:30])
def test_a_bad_entry_loads_nothing(key, bad, error, message):
    bn = _batchnorm(0)
    sd = _batchnorm(1).state_dict()  # every other entry is valid and differs from bn's
    sd[key] = bad
    before = bn.state_dict()
    with pytest.raises(error, match=message):
        bn.load_state_dict(sd)
    _assert_same_state(bn.state_dict(), before)


@pytest.mark.parametrize("bad", [None, [("weight", np.ones(3))], "weight", 3])
def test_load_state_dict_needs_a_mapping(bad):
    bn = _batchnorm(0)
    before = bn.state_dict()
    with pytest.raises(TypeError, match=r"BatchNorm1d.load_state_dict expects a mapping"):
        bn.load_state_dict(bad)
    _assert_same_state(bn.state_dict(), before)


def test_load_state_dict_converts_to_the_dtype_of_the_model():
    bn = nc.BatchNorm1d(3, dtype=np.float32)
    sd = _batchnorm(2).state_dict()  # float64 arrays
    sd["num_batches_tracked"] = np.int32(5)
    sd["bias"] = [1, 2, 3]  # integers are real numbers
    bn.load_state_dict(sd)
    loaded = bn.state_dict()
    assert loaded["weight"].dtype == np.float32 and loaded["running_var"].dtype == np.float32
    assert loaded["num_batches_tracked"].dtype == np.int64 and loaded["num_batches_tracked"] == 5
    np.testing.assert_array_equal(loaded["bias"], [1, 2, 3])
    np.testing.assert_array_equal(loaded["running_mean"], sd["running_mean"].astype(np.float32))
    sd["weight"][...] = 7.0  # the model holds its own copy, not the caller's array
    assert not np.any(bn.weight.data == 7.0)


@pytest.mark.parametrize("key, bad, error", [
    ("head.bias", np.array(["a"] * V), TypeError),
    ("head.bias", np.ones(V) * 1j, TypeError),
    ("head.bias", None, TypeError),
    ("blocks.1.ffn.fc2.bias", np.ones(5), ValueError),
])
def test_a_bad_entry_in_a_model_loads_nothing(key, bad, error):
    model = nc.TinyTransformer(V, 4, 2, 2, 6, rng=0)
    sd = nc.TinyTransformer(V, 4, 2, 2, 6, rng=1).state_dict()
    sd[key] = bad
    before = model.state_dict()
    with pytest.raises(error, match=key.replace(".", r"\.")):
        model.load_state_dict(sd)
    _assert_same_state(model.state_dict(), before)


# --- 3. zero-size inputs ----------------------------------------------------------------------------

ZERO_SIZE = [
    ("Linear", lambda: nc.Linear(3, 2, rng=0), (0, 3), (0, 2)),
    ("Linear", lambda: nc.Linear(3, 2, rng=0), (2, 0, 3), (2, 0, 2)),
    *[(n, m, s, s) for n, m in [("ReLU", nc.ReLU), ("GELU", nc.GELU), ("LogSoftmax", nc.LogSoftmax),
                                ("Sigmoid", nc.Sigmoid), ("Tanh", nc.Tanh), ("Softmax", nc.Softmax),
                                ("Softmax axis 0", lambda: nc.Softmax(0)),
                                ("Dropout", lambda: nc.Dropout(0.5, rng=0))]
      for s in [(0, 3), (2, 0), (0,)]],
    *[(n, m, s, s[:-1] + (2,)) for n, m in [("WeightNorm", lambda: nc.WeightNorm(nc.Linear(3, 2, rng=0))),
                                             ("WSLinear", lambda: nc.WSLinear(3, 2, rng=0))]
      for s in [(0, 3), (2, 0, 3)]],
    *[(n, m, s, s) for n, m in [("LayerScale", lambda: nc.LayerScale(3, init=0.5)),
                                ("ReZero", lambda: nc.ReZero(init=0.5)), ("SoftCap", lambda: nc.SoftCap(1.5))]
      for s in [(0, 3), (2, 0, 3)]],
    # an empty batch or sequence, in training: one more batch counted, as BatchNorm in PyTorch
    *[(n, m, s, s) for n, m in [("BatchRenorm1d", lambda: nc.BatchRenorm1d(3)),
                                ("GhostBatchNorm1d", lambda: nc.GhostBatchNorm1d(3, virtual_batch_size=2))]
      for s in [(0, 3), (0, 3, 4), (2, 3, 0)]],
    ("PositionalEmbedding", lambda: nc.PositionalEmbedding(5, 4, rng=0), (2, 0, 4), (2, 0, 4)),
    ("PositionalEmbedding", lambda: nc.PositionalEmbedding(5, 4, rng=0), (0, 3, 4), (0, 3, 4)),
    ("CausalSelfAttention", lambda: nc.CausalSelfAttention(4, 2, rng=0), (2, 0, 4), (2, 0, 4)),
    ("CausalSelfAttention", lambda: nc.CausalSelfAttention(4, 2, rng=0), (0, 3, 4), (0, 3, 4)),
    ("MultiheadSelfAttention", lambda: nc.MultiheadSelfAttention(4, 2, rng=0), (2, 0, 4), (2, 0, 4)),
    ("MultiheadSelfAttention", lambda: nc.MultiheadSelfAttention(4, 2, rng=0), (0, 3, 4), (0, 3, 4)),
    *[("MultiheadSelfAttention qk_norm", lambda q=q: nc.MultiheadSelfAttention(4, 2, qk_norm=q, rng=0), s, s)
      for q in ("rmsnorm", "layernorm") for s in [(2, 0, 4), (0, 3, 4)]],
    ("FeedForward", lambda: nc.FeedForward(4, 8, rng=0), (0, 4), (0, 4)),
    ("FeedForward", lambda: nc.FeedForward(4, 8, rng=0), (2, 0, 4), (2, 0, 4)),
    *[(f"TransformerBlock {p}", _block(p), s, s) for p in ("none", "pre", "post", "deepnorm", "peri")
      for s in [(2, 0, 4), (0, 3, 4)]],
    *[("TransformerBlock encoder", lambda: nc.TransformerBlock(4, 2, d_ff=8, causal=False, rng=0), s, s)
      for s in [(2, 0, 4), (0, 3, 4)]],
]


@pytest.mark.parametrize("name, make, shape, out_shape", ZERO_SIZE,
                         ids=lambda v: str(v) if isinstance(v, (str, tuple)) else "")
def test_zero_size_input_gives_empty_output_and_gradients(name, make, shape, out_shape):
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no "empty slice" or "invalid value" RuntimeWarning either
        module = make()
        x = np.zeros(shape, dtype=np.float32)
        y = module(x)
        assert y.shape == out_shape and y.dtype == np.float32
        dx = module.backward(np.zeros(out_shape))
        assert dx.shape == shape and dx.dtype == np.float32
    for n, p in module.named_parameters():  # nothing to learn from no data, as in PyTorch
        assert not p.grad.any(), n
    if hasattr(module, "num_batches_tracked"):  # counted once, the running statistics kept
        assert module.num_batches_tracked == 1
        assert not module.running_mean.any() and (module.running_var == 1).all()


@pytest.mark.parametrize("shape", [(0,), (2, 0)])
def test_embedding_of_no_ids(shape):
    emb = nc.Embedding(V, 4, rng=0)
    y = emb(np.zeros(shape, dtype=np.int64))
    assert y.shape == shape + (4,)
    assert emb.backward(np.zeros(shape + (4,))) is None
    assert not emb.weight.grad.any()


@pytest.mark.parametrize("position", ["none", "pre", "post", "deepnorm", "peri"])
@pytest.mark.parametrize("shape", [(2, 0), (0, 3)])
def test_model_on_an_empty_batch_or_empty_sequences(position, shape):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        model = nc.TinyTransformer(V, 4, 2, 2, 6, position=position, rng=0)
        logits = model(np.zeros(shape, dtype=np.int64))
        assert logits.shape == shape + (V,)
        assert model.backward(np.zeros(shape + (V,))) is None
    assert not any(p.grad.any() for p in model.parameters())


@pytest.mark.parametrize("logits_shape", [(0, V), (2, V, 0), (0, 0)])
def test_cross_entropy_over_no_targets_is_nan_with_an_empty_gradient(logits_shape):
    loss = nc.CrossEntropyLoss()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        targets = np.zeros(logits_shape[:1] + logits_shape[2:], dtype=np.int64)  # the class axis is 1
        value = loss(np.zeros(logits_shape, dtype=np.float32), targets)
        assert value.shape == () and value.dtype == np.float32 and np.isnan(value)
        dlogits = loss.backward()
    assert dlogits.shape == logits_shape and dlogits.dtype == np.float32


@pytest.mark.parametrize("shape", [(0, 3), (3, 0), (0,)])
def test_mse_over_no_elements_is_nan_with_an_empty_gradient(shape):
    loss = nc.MSELoss()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        value = loss(np.zeros(shape, dtype=np.float32), np.zeros(shape, dtype=np.float32))
        assert value.shape == () and value.dtype == np.float32 and np.isnan(value)
        dpred = loss.backward(2.0)
    assert dpred.shape == shape and dpred.dtype == np.float32


def test_zero_size_losses_match_torch():
    torch = pytest.importorskip("torch", reason="PyTorch is the oracle for this test")
    for logits_shape in [(0, V), (0, 0)]:
        t = torch.zeros(logits_shape, dtype=torch.float64, requires_grad=True)
        expected = torch.nn.CrossEntropyLoss()(t, torch.zeros(logits_shape[:-1], dtype=torch.long))
        expected.backward()
        loss = nc.CrossEntropyLoss()
        got = loss(np.zeros(logits_shape), np.zeros(logits_shape[:-1], dtype=np.int64))
        assert np.isnan(got) and torch.isnan(expected)
        assert loss.backward().shape == tuple(t.grad.shape)
    t = torch.zeros((0, 3), dtype=torch.float64, requires_grad=True)
    expected = torch.nn.MSELoss()(t, torch.zeros((0, 3), dtype=torch.float64))
    expected.backward()
    loss = nc.MSELoss()
    assert np.isnan(loss(np.zeros((0, 3)), np.zeros((0, 3)))) and torch.isnan(expected)
    assert loss.backward().shape == tuple(t.grad.shape)


# --- 4. ReLU of inf, -inf and NaN ------------------------------------------------------------------

SPECIAL = np.array([np.inf, -np.inf, np.nan, -1.0, -0.0, 0.0, 2.0])


def test_relu_of_inf_and_nan():
    relu = nc.ReLU()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        y = relu(SPECIAL)
        dx = relu.backward(np.array([1.0, np.inf, 3.0, np.inf, np.nan, 6.0, 7.0]))
    np.testing.assert_array_equal(y, [np.inf, 0.0, np.nan, 0.0, 0.0, 0.0, 2.0])  # NaN propagates
    # PyTorch's threshold_backward: dy where x > 0 and where x is NaN, exactly 0 where x <= 0
    np.testing.assert_array_equal(dx, [1.0, 0.0, 3.0, 0.0, 0.0, 0.0, 7.0])


@pytest.mark.parametrize("name", ["ReLU", "GELU", "GELU tanh", "Sigmoid", "Tanh"])
def test_activations_of_inf_and_nan_match_torch(name):
    torch = pytest.importorskip("torch", reason="PyTorch is the oracle for this test")
    torch_layer = {"ReLU": torch.nn.ReLU(), "GELU": torch.nn.GELU(), "GELU tanh": torch.nn.GELU(approximate="tanh"),
                   "Sigmoid": torch.nn.Sigmoid(), "Tanh": torch.nn.Tanh()}[name]
    ours = {"GELU tanh": lambda: nc.GELU(approximate="tanh")}.get(name, getattr(nc, name, None))
    with np.errstate(all="ignore"):
        y = ours()(SPECIAL)
    np.testing.assert_allclose(y, torch_layer(torch.tensor(SPECIAL)).numpy(), rtol=1e-14, atol=0)


def test_relu_gradient_matches_torch_at_inf_and_nan():
    torch = pytest.importorskip("torch", reason="PyTorch is the oracle for this test")
    dy = np.array([1.0, np.inf, 3.0, np.inf, np.nan, 6.0, 7.0])
    t = torch.tensor(SPECIAL, requires_grad=True)
    torch.relu(t).backward(torch.tensor(dy))
    relu = nc.ReLU()
    relu(SPECIAL)
    np.testing.assert_array_equal(relu.backward(dy), t.grad.numpy())


# --- 5. Dropout -------------------------------------------------------------------------------------

def test_dropout_lives_in_nn():
    assert nc.Dropout is nc.nn.Dropout
    assert nc.Dropout.__module__ == "normcore.nn.dropout"
    assert not hasattr(nc.norms, "Dropout")


@pytest.mark.parametrize("in_dtype, dy_dtype", [(np.float32, np.float64), (np.float64, np.float32),
                                                (np.float16, np.float64), (np.float16, np.float32)])
@pytest.mark.parametrize("mode", ["train", "eval", "p=0", "p=1"])
def test_dropout_gradient_has_the_input_dtype(in_dtype, dy_dtype, mode):
    drop = nc.Dropout({"p=0": 0.0, "p=1": 1.0}.get(mode, 0.4), rng=0)
    if mode == "eval":
        drop.eval()
    x = _x(6, 5).astype(in_dtype)
    y = drop(x)
    assert y.dtype == in_dtype
    dy = _x(5, 6).T.astype(dy_dtype)
    dx = drop.backward(dy)
    assert dx.dtype == in_dtype
    kept = (y != 0) | (x == 0)
    scale = {"train": 1 / 0.6, "p=1": 0.0}.get(mode, 1.0)
    expected = np.where(kept, dy.astype(np.float64) * scale, 0.0) if mode != "p=1" else np.zeros_like(dy)
    np.testing.assert_allclose(dx, expected, rtol=2e-3 if in_dtype == np.float16 else 1e-6)


@pytest.mark.parametrize("p", ["0.5", None, True, [0.5]])
def test_dropout_p_must_be_a_number(p):
    with pytest.raises(TypeError, match=r"Dropout: p must be a number"):
        nc.Dropout(p)


@pytest.mark.parametrize("p", [1.5, -0.1])
def test_dropout_p_out_of_range_keeps_pytorchs_message(p):
    with pytest.raises(ValueError, match=rf"^dropout probability has to be between 0 and 1, but got {p}$"):
        nc.Dropout(p)


def test_dropout_in_eval_returns_its_input_as_pytorch_does_and_caches_none_of_it():
    x = _x(3, 4)
    for drop in (nc.Dropout(0.5, rng=0).eval(), nc.Dropout(0.0)):
        y = drop(x)
        assert y is x  # the identity, without a copy, as torch.nn.Dropout in eval
        assert not any(np.shares_memory(c, x) for c in _arrays(drop._cache))


# --- 6. gradcheck at large offsets ------------------------------------------------------------------

def _bn_eval_at(offset):
    """BatchNorm1d in eval with running_mean near the input: x - running_mean is exact in float64,
    so the finite differences are exact up to the step, and only the step's rounding is tested."""
    bn = nc.BatchNorm1d(8).eval()
    rng = np.random.default_rng(3)
    bn.running_mean[...] = offset + rng.standard_normal(8)
    bn.running_var[...] = rng.uniform(0.5, 2.0, 8)
    bn.weight.data[...] = rng.standard_normal(8)
    bn.bias.data[...] = rng.standard_normal(8)
    return bn


class _BrokenLayerNorm(nc.LayerNorm):
    """A LayerNorm whose input gradient is 0.1 % too large."""

    def backward(self, dy):
        return 1.001 * super().backward(dy)


class _BrokenBatchNorm(nc.BatchNorm1d):
    """A BatchNorm1d whose input gradient is 0.1 % too large."""

    def backward(self, dy):
        return 1.001 * super().backward(dy)


@pytest.mark.parametrize("offset", [1e4, -1e4, 3e5])
def test_gradcheck_divides_by_the_step_actually_taken(offset):
    """x + h and x - h are rounded to the float64 grid around x (spacing 1.8e-12 at 1e4); dividing
    by the nominal 2h instead of their actual difference errs by up to 1e-6 relative."""
    x = offset + np.random.default_rng(4).standard_normal((5, 8))
    report = nc.gradcheck(_bn_eval_at(offset), x)
    assert report.passed, report.table()
    assert report["x"].rel_error < 1e-8  # about 1e-10; dividing by 2h gave 1.7e-7 at 1e4


def test_layernorm_at_a_large_offset_passes_with_the_larger_step_the_docstring_advises():
    """LayerNorm's x - mean at x ~ 1e4 rounds at 1.8e-12, which the default h = 1e-6 turns into
    relative errors around 4e-7 whatever the denominator; h = 1e-4 brings them to about 1e-8."""
    rng = np.random.default_rng(6)
    ln = nc.LayerNorm(8)
    ln.weight.data[...] = rng.standard_normal(8)
    ln.bias.data[...] = rng.standard_normal(8)
    report = nc.gradcheck(ln, 1e4 + rng.standard_normal((3, 8)), h=1e-4)
    assert report.passed, report.table()


def test_gradcheck_still_fails_a_broken_backward_at_large_offsets():
    x = 1e4 + np.random.default_rng(5).standard_normal((3, 8))
    broken = _BrokenBatchNorm(8).eval()
    broken.load_state_dict(_bn_eval_at(1e4).state_dict())
    assert not nc.gradcheck(broken, x).passed
    report = nc.gradcheck(_BrokenLayerNorm(8), x)
    assert not report["x"].passed and report["x"].rel_error > 1e-4
    assert report["weight"].passed and report["bias"].passed


# --- 7. argument and input validation ---------------------------------------------------------------

@pytest.mark.parametrize("make, name", [
    (lambda: nc.Linear(2.0, 3), "in_features"),
    (lambda: nc.Linear(2, 3.5), "out_features"),
    (lambda: nc.Linear(True, 3), "in_features"),
    (lambda: nc.Embedding(2.5, 3), "num_embeddings"),
    (lambda: nc.Embedding(5, "3"), "dim"),
    (lambda: nc.PositionalEmbedding(6.0, 4), "max_len"),
    (lambda: nc.PositionalEmbedding(6, 4.0), "dim"),
    (lambda: nc.CausalSelfAttention(4.0, 2), "d_model"),
    (lambda: nc.CausalSelfAttention(4, 2.0), "n_heads"),
    (lambda: nc.FeedForward(4.0, 8), "d_model"),
    (lambda: nc.FeedForward(4, 8.5), "d_ff"),
    (lambda: nc.TransformerBlock(4.0, 2), "d_model"),
    (lambda: nc.TransformerBlock(4, 2, d_ff=8.7), "d_ff"),
    (lambda: nc.TransformerBlock(4, 2, position="deepnorm", n_layers=2.5), "n_layers"),
    (lambda: nc.TinyTransformer(5.5, 4, 1, 2, 8), "vocab_size"),
    (lambda: nc.TinyTransformer(5, 4.0, 1, 2, 8), "d_model"),
    (lambda: nc.TinyTransformer(5, 4, 1.0, 2, 8), "n_layers"),
    (lambda: nc.TinyTransformer(5, 4, 1, "2", 8), "n_heads"),
    (lambda: nc.TinyTransformer(5, 4, 1, 2, 8.5), "max_len"),
    (lambda: nc.TinyTransformer(5, 4, 1, 2, 8, d_ff=16.0), "d_ff"),
    (lambda: nc.Softmax("1"), "axis"),
    (lambda: nc.Softmax(1.0), "axis"),
    (lambda: nc.CrossEntropyLoss(ignore_index=-100.5), "ignore_index"),
    (lambda: optim.linear_warmup(1.0, 2.5), "warmup"),
    (lambda: optim.warmup_cosine(1.0, 2, 10.5), "total"),
    (lambda: nc.nn.deepnorm_constants(2.0), "n_layers"),
])
def test_sizes_must_be_integers(make, name):
    with pytest.raises(TypeError, match=rf"{name} must be an int, got"):
        make()


@pytest.mark.parametrize("make, name", [
    (lambda: nc.Linear(0, 3), "in_features"),
    (lambda: nc.Embedding(0, 3), "num_embeddings"),
    (lambda: nc.PositionalEmbedding(4, 0), "dim"),
    (lambda: nc.CausalSelfAttention(4, 0), "n_heads"),
    (lambda: nc.FeedForward(4, 0), "d_ff"),
    (lambda: nc.TinyTransformer(5, 4, 0, 2, 8), "n_layers"),
    (lambda: nc.TinyTransformer(5, 4, 1, 2, -3), "max_len"),
])
def test_sizes_must_be_positive(make, name):
    with pytest.raises(ValueError, match=rf"{name} must be a positive int, got"):
        make()


LIN = nc.Linear(2, 3).parameters()


@pytest.mark.parametrize("make, name", [
    (lambda: nc.TransformerBlock(4, 2, dropout="0.1"), "dropout"),
    (lambda: nc.TinyTransformer(5, 4, 1, 2, 8, dropout=None), "dropout"),
    (lambda: nc.Linear(2, 3, gain="1"), "gain"),
    (lambda: nc.Embedding(5, 3, std="1"), "std"),
    (lambda: nc.SGD(LIN, lr="0.1"), "lr"),
    (lambda: nc.SGD(LIN, lr=0.1, momentum=None), "momentum"),
    (lambda: nc.AdamW(LIN, weight_decay="0.01"), "weight_decay"),
    (lambda: nc.Adam(LIN, eps="1e-8"), "eps"),
    (lambda: nc.Adam(LIN, betas=("0.9", 0.999)), "betas"),
    (lambda: nc.clip_grad_norm(LIN, "1.0"), "max_norm"),
    (lambda: optim.constant("0.1"), "lr"),
    (lambda: optim.warmup_cosine(1.0, 2, 10, min_lr="0"), "min_lr"),
])
def test_rates_and_probabilities_must_be_numbers(make, name):
    with pytest.raises(TypeError, match=rf"{name}.* must be a number"):
        make()


@pytest.mark.parametrize("make, match", [
    (lambda: nc.TransformerBlock(4, 2, dropout=1.5), r"dropout must be in \[0, 1\]"),
    (lambda: nc.SGD(LIN, lr=-0.1), r"lr must be >= 0"),
    (lambda: nc.SGD(LIN, lr=float("nan")), r"lr must be >= 0, got nan"),
    (lambda: nc.Adam(LIN, betas=(0.9, 1.0)), r"betas must lie in \[0, 1\)"),
    (lambda: nc.Adam(LIN, betas=(0.9,)), r"betas must be a pair"),
    (lambda: nc.Embedding(5, 3, std=-1.0), r"std must be >= 0"),
])
def test_rates_out_of_range(make, match):
    with pytest.raises(ValueError, match=match):
        make()


RAGGED = [[1.0, 2.0], [3.0]]
RAGGED_IDS = [[1, 2], [3]]


@pytest.mark.parametrize("make, inputs", [
    (lambda: nc.Linear(2, 3), (RAGGED,)),
    (nc.ReLU, (RAGGED,)),
    (nc.Softmax, (RAGGED,)),
    (lambda: nc.Dropout(0.5), (RAGGED,)),
    (lambda: nc.Embedding(5, 3), (RAGGED_IDS,)),
    (lambda: nc.PositionalEmbedding(5, 2), (RAGGED,)),
    (lambda: nc.CausalSelfAttention(2, 1), (RAGGED,)),
    (lambda: nc.FeedForward(2, 4), (RAGGED,)),
    (lambda: nc.TransformerBlock(2, 1), (RAGGED,)),
    (lambda: nc.TinyTransformer(5, 2, 1, 1, 4), (RAGGED_IDS,)),
    (nc.CrossEntropyLoss, (RAGGED, [0, 1])),
    (nc.CrossEntropyLoss, (np.zeros((2, 5)), RAGGED_IDS)),
    (nc.MSELoss, (RAGGED, np.zeros((2, 2)))),
    (nc.MSELoss, (np.zeros((2, 2)), RAGGED)),
])
def test_ragged_lists_raise_a_clear_type_error(make, inputs):
    with pytest.raises(TypeError, match=r"expects its (input|index|id|token id|target)s? as an array of numbers"):
        make()(*inputs)


def test_ragged_upstream_gradient_raises_a_clear_type_error():
    lin = nc.Linear(2, 2)
    lin(np.zeros((2, 2)))
    with pytest.raises(TypeError, match=r"Linear.backward expects its upstream gradient as an array of numbers"):
        lin.backward(RAGGED)
    loss = nc.MSELoss()
    loss(np.zeros(2), np.ones(2))
    with pytest.raises(TypeError, match=r"MSELoss.backward expects its upstream gradient as an array of numbers"):
        loss.backward([[1.0], []])
