"""MultiheadAttention's options as a PyTorch user passes them: ``batch_first``, unbatched (T, E)
inputs, ``need_weights`` / ``average_attn_weights`` (the weights returned, and their gradient
taken back), ``is_causal`` and an ``attn_mask`` in torch's (B * H, Tq, Tk) layout.

The oracle is ``torch.nn.MultiheadAttention`` with the same options and the weights copied by
hand (``test_cross_attention._torch_twin``); the output, the weights, the gradients of query,
key and value and of every parameter agree to 1e-10 in float64. The upstream gradients of the
output and of the weights are random.
"""

import numpy as np
import pytest

import normcore as nc

from test_cross_attention import E, H, _close, _mha, _torch_grads, _torch_twin, _x

try:
    import torch
except ImportError:  # the parity tests skip; the rest still run
    torch = None
needs_torch = pytest.mark.skipif(torch is None, reason="PyTorch (the oracle) is not installed")

B, TQ, TK = 2, 3, 4
Q, K = _x(B, TQ, E, seed=1), _x(B, TK, E, seed=2)


def _layout(x, layout):
    """A (B, T, C) array in the caller's layout."""
    return x[0] if layout == "unbatched" else x if layout == "batch_first" else x.swapaxes(0, 1).copy()


def _masks(kpm, am, layout, tq=TQ, tk=TK):
    """The key padding mask (B, Tk) or (Tk,), and the attention mask in torch's (B * H, Tq, Tk)
    layout ((H, Tq, Tk) unbatched) or (Tq, Tk); key 0 stays open for every query."""
    b = 1 if layout == "unbatched" else B
    rng = np.random.default_rng(11)
    padding = None
    if kpm:
        padding = np.zeros((b, tk), dtype=bool)
        padding[-1, -1] = True
        padding = padding[0] if layout == "unbatched" else padding
    mask = None
    if am is not None:
        shape = (tq, tk) if am.endswith("2d") else (b * H, tq, tk)
        masked = rng.random(shape) < 0.4
        masked[..., 0] = False
        mask = masked if am.startswith("bool") else np.where(masked, -np.inf, rng.standard_normal(shape))
    return padding, mask


def _causal(kind, tq=TQ, tk=TK):
    future = np.triu(np.ones((tq, tk), dtype=bool), k=1)
    return future if kind == "bool" else np.where(future, -np.inf, 0.0)


# (constructor options, caller's layout, forward options, key padding mask?, attention mask kind)
CASES = [
    ({"batch_first": False, "add_bias_kv": True, "add_zero_attn": True, "kdim": 5},
     "sequence_first", {"need_weights": True}, True, "float3d"),
    ({}, "batch_first", {"need_weights": True, "average_attn_weights": False}, False, "bool3d"),
    ({"add_zero_attn": True, "vdim": 3}, "unbatched", {"need_weights": True, "average_attn_weights": False},
     True, "float3d"),
    ({"causal": True, "batch_first": False}, "unbatched", {"need_weights": False}, True, "bool2d"),
    ({"batch_first": False}, "sequence_first", {"need_weights": False}, False, None),
    ({"bias": False}, "batch_first", {}, True, "float3d"),
]
CASE_IDS = ["seq-first-weights-added-keys", "per-head-weights-BH-bool", "unbatched-per-head-weights",
            "unbatched-causal-layer-no-weights", "seq-first-no-weights", "omitted-need_weights"]


def _run_both(m, layout, options, kpm, am, tq=TQ, tk=TK):
    """normcore and torch on the same inputs, upstream gradients and options: (ours, torch's),
    each {name: array}: output, weights, dquery, dkey, dvalue and every parameter gradient."""
    query, key, value = (_layout(a, layout) for a in (_x(B, tq, E, seed=1), _x(B, tk, m.kdim, seed=2),
                                                      _x(B, tk, m.vdim, seed=3)))
    m.zero_grad()
    got = m(query, key, value, kpm, am, **options)
    y, w = got if isinstance(got, tuple) else (got, None)
    dy = _x(*y.shape, seed=9)
    dw = None if w is None else _x(*w.shape, seed=10)
    ours = dict(zip(("dquery", "dkey", "dvalue"), m.backward(dy, dw)), output=y, weights=w)
    ours.update({f"{n} grad": p.grad for n, p in m.named_parameters()})

    t = _torch_twin(m)
    t.batch_first = m.batch_first
    tq_, tk_, tv_ = (torch.tensor(a, requires_grad=True) for a in (query, key, value))
    tmask = None if am is None else torch.from_numpy(am)
    if m.causal:  # normcore's causal layer: torch gets the causal mask merged into attn_mask
        future = torch.from_numpy(_causal("bool", tq, tk))
        tmask = future if tmask is None else tmask | future
    tkpm = None if kpm is None else torch.from_numpy(kpm)
    topts = {"need_weights": True, **options}  # an omitted need_weights: torch's default
    ty, tw = t(tq_, tk_, tv_, key_padding_mask=tkpm, attn_mask=tmask, **topts)
    assert (tw is None) == (w is None) or "need_weights" not in options
    outputs, grads = [ty], [torch.from_numpy(dy)]
    if dw is not None:
        outputs.append(tw)
        grads.append(torch.from_numpy(dw))
    torch.autograd.backward(outputs, grads)
    theirs = {"output": ty.detach().numpy(), "weights": None if w is None else tw.detach().numpy(),
              "dquery": tq_.grad.numpy(), "dkey": tk_.grad.numpy(), "dvalue": tv_.grad.numpy()}
    theirs.update({f"{n} grad": g for n, g in _torch_grads(m, t).items()})
    return ours, theirs


def _assert_same(ours, theirs):
    assert set(ours) == set(theirs)
    for name, value in ours.items():
        if theirs[name] is None:
            assert value is None, name
        else:
            assert value.shape == theirs[name].shape, name
            _close(value, theirs[name], name)


@needs_torch
@pytest.mark.parametrize("config, layout, options, kpm, am", CASES, ids=CASE_IDS)
def test_options_match_torch(config, layout, options, kpm, am):
    m = _mha(**config)
    _assert_same(*_run_both(m, layout, options, *_masks(kpm, am, layout)))


@needs_torch
@pytest.mark.parametrize("kind, need_weights, kpm, layout, tq, tk", [
    ("bool", False, False, "sequence_first", 3, 3),  # torch's fused path: its own causal mask
    ("float", True, True, "batch_first", 3, 5),  # torch's math path: the mask given, Tq != Tk
    ("bool", None, False, "unbatched", 4, 2),
])
def test_is_causal_with_the_causal_mask_matches_torch(kind, need_weights, kpm, layout, tq, tk):
    m = _mha(batch_first=layout != "sequence_first", kdim=5)
    padding, _ = _masks(kpm, None, layout, tq, tk)
    options = {"is_causal": True} if need_weights is None else {"is_causal": True, "need_weights": need_weights}
    ours, theirs = _run_both(m, layout, options, padding, _causal(kind, tq, tk), tq, tk)
    _assert_same(ours, theirs)
    m2 = _mha(batch_first=layout != "sequence_first", kdim=5, causal=True)  # the same as causal=True
    omitted = {k: v for k, v in options.items() if k != "is_causal"}
    ours2, _ = _run_both(m2, layout, omitted, padding, None, tq, tk)
    for name in ("output", "dquery", "dkey", "dvalue"):
        np.testing.assert_allclose(ours[name], ours2[name], rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("added", ["add_bias_kv", "add_zero_attn"])
def test_is_causal_with_added_keys_is_refused(added):
    """torch's fused path masks the added keys with its causal mask, its math path does not."""
    m = _mha(**{added: True})
    with pytest.raises(ValueError, match="is_causal=True with add_bias_kv or add_zero_attn"):
        m(Q, K, K, attn_mask=_causal("bool"), is_causal=True)


def test_omitting_need_weights_keeps_the_plain_output_and_false_gives_torchs_pair():
    m = _mha()
    q, k = _x(B, TQ, E, seed=1), _x(B, TK, E, seed=2)
    y = m(q, k, k)
    assert isinstance(y, np.ndarray) and y.shape == (B, TQ, E)
    y2, none = m(q, k, k, need_weights=False)
    assert none is None
    np.testing.assert_array_equal(y, y2)
    y3, w = m(q, k, k, need_weights=True)
    np.testing.assert_array_equal(y, y3)
    assert w.shape == (B, TQ, TK)
    np.testing.assert_allclose(w.sum(-1), 1.0, rtol=1e-12)


def test_the_three_layouts_give_the_same_numbers():
    """Sequence first and unbatched are batch first transposed or cut: the same values exactly."""
    first, seq = _mha(), _mha(batch_first=False)
    q, k = _x(B, TQ, E, seed=1), _x(B, TK, E, seed=2)
    y = first(q, k, k)
    np.testing.assert_array_equal(seq(q.swapaxes(0, 1), k.swapaxes(0, 1), k.swapaxes(0, 1)), y.swapaxes(0, 1))
    dy = _x(B, TQ, E, seed=3)
    for a, b in zip(seq.backward(dy.swapaxes(0, 1)), first.backward(dy)):
        np.testing.assert_array_equal(a, b.swapaxes(0, 1))
    one = first(q[:1], k[:1], k[:1])
    np.testing.assert_array_equal(first(q[0], k[0], k[0]), one[0])



@pytest.mark.parametrize("args, kwargs, error, words", [
    ((Q, K, K), {"is_causal": True}, ValueError, "is_causal=True is a hint that attn_mask is the causal mask"),
    ((Q, K, K), {"is_causal": True, "attn_mask": np.zeros((TQ, TK), dtype=bool)}, ValueError,
     "but this attn_mask is not"),
    ((Q, K, K), {"is_causal": True, "attn_mask": np.where(_causal("bool"), -1e9, 0.0)}, ValueError,
     "but this attn_mask is not"),
    ((Q, K, K), {"is_causal": True, "attn_mask": _causal("bool", TK, TQ)}, ValueError,
     "attn_mask must have shape (3, 4)"),
    ((Q, K, K), {"need_weights": "yes"}, TypeError, "need_weights must be True or False"),
    ((Q, K, K), {"average_attn_weights": None}, TypeError, "average_attn_weights must be True or False"),
    ((Q, K, K), {"is_causal": 1}, TypeError, "is_causal must be True or False"),
    ((Q[0], K[0], K[0]), {"key_padding_mask": np.zeros((1, TK), dtype=bool)}, ValueError,
     "with an unbatched query, key_padding_mask must have shape (Tk,) = (4,), got (1, 4)"),
    ((Q[0], K[0], K[0]), {"attn_mask": np.zeros((1, H, TQ, TK), dtype=bool)}, ValueError,
     "or (H, Tq, Tk) = (2, 3, 4), got (1, 2, 3, 4)"),
    ((Q, K, K), {"attn_mask": np.zeros((H, TQ, TK), dtype=bool)}, ValueError, "(3, 4) or (4, 3, 4) or"),
    ((Q[0], K, K), {}, ValueError, "key of shape (Tk, 8) (all three unbatched, as the query), got (2, 4, 8)"),
])
def test_bad_option_combinations_say_what_was_expected_and_change_nothing(args, kwargs, error, words):
    m = _mha()
    m(Q, K, K)
    dy = _x(B, TQ, E, seed=4)
    with pytest.raises(error) as info:
        m(*args, **kwargs)
    assert words in str(info.value)
    grads = m.backward(dy)  # still the backward of the first forward
    m2 = _mha()
    m2(Q, K, K)
    for a, b in zip(grads, m2.backward(dy)):
        np.testing.assert_array_equal(a, b)


def test_sequence_first_inputs_are_checked_in_their_layout():
    m = _mha(batch_first=False)
    with pytest.raises(ValueError, match=r"query of shape \(Tq, B, 8\) \(batch_first=False\)"):
        m(Q[..., :4], K, K)
    with pytest.raises(ValueError, match=r"query, key and value of shapes \(Tq, B, 8\), \(Tk, B, 8\)"):
        m(Q, K[:1], K[:1])


def test_backward_checks_the_weights_gradient():
    m = _mha()
    y = m(Q, K, K)
    with pytest.raises(ValueError, match="returned no attention weights"):
        m.backward(np.ones_like(y), np.ones((B, TQ, TK)))
    y, w = m(Q, K, K, need_weights=True, average_attn_weights=False)
    with pytest.raises(ValueError, match=r"dweights of the weights' shape \(2, 2, 3, 4\)"):
        m.backward(np.ones_like(y), np.ones((B, TQ, TK)))
    with pytest.raises(ValueError, match=r"upstream gradient of the output's shape \(2, 3, 8\)"):
        m.backward(np.ones((TQ, B, E)))
    with pytest.raises(TypeError, match="floating-point dweights"):
        m.backward(np.ones_like(y), np.ones(w.shape, dtype=int))
    m.backward(np.ones_like(y), np.ones_like(w))  # and then it works


def test_the_weights_gradient_reaches_every_parameter_as_central_differences_say():
    """The loss sum(dy * y) + sum(dw * weights): its analytic gradient of q.weight against
    central differences (the weights' share alone can fail here, without torch)."""
    m = _mha(add_zero_attn=True)
    dy, dw = _x(B, TQ, E, seed=5), _x(B, TQ, TK + 1, seed=6)

    def loss():
        y, w = m(Q, K, K, need_weights=True)
        return float(np.sum(dy * y) + np.sum(dw * w))
    m.zero_grad()
    loss()
    m.backward(dy, dw)
    W, h = m.q.weight.data, 1e-6
    numeric = np.zeros_like(W)
    for i in np.ndindex(*W.shape):
        old = W[i]
        W[i] = old + h
        up = loss()
        W[i] = old - h
        numeric[i] = (up - loss()) / (2 * h)
        W[i] = old
    np.testing.assert_allclose(m.q.weight.grad, numeric, rtol=1e-6, atol=1e-8)


def test_works_without_torch_in_every_layout():
    m = nc.MultiheadAttention(4, 2, batch_first=False, rng=0)
    y, w = m(np.ones((3, 2, 4)), np.ones((5, 2, 4)), np.ones((5, 2, 4)), need_weights=True,
             average_attn_weights=False)
    assert y.shape == (3, 2, 4) and w.shape == (2, 2, 3, 5)
    assert "batch_first=False" in repr(m) or "batch_first=False" in m.extra_repr()


@needs_torch
@pytest.mark.parametrize("config, shapes, options, mask", [
    ({"batch_first": False, "qk_norm": "layernorm", "add_zero_attn": True}, ((3, 2, E), (4, 2, 5)),
     {"need_weights": True, "average_attn_weights": False}, (2 * H, 3, 4)),
    ({"qk_norm": "rmsnorm", "add_bias_kv": True}, ((3, E), (4, 5)), {"need_weights": True}, (H, 3, 4)),
    ({"batch_first": False}, ((3, 2, E), (4, 2, 5)), {"need_weights": False}, (3, 4)),
])
def test_the_bridge_compares_every_option(config, shapes, options, mask):
    """``torch_bridge.compare`` with the forward's options: torch's own layer, and the QK-norm
    twin, in the same layout, the weights and their gradient compared too."""
    from normcore import torch_bridge
    from normcore.layer_cases import perturb_parameters
    rng = np.random.default_rng(3)
    m = perturb_parameters(nc.MultiheadAttention(E, H, kdim=5, rng=0, **config), rng)
    (sq, sk), am = shapes, rng.standard_normal(mask)
    report = torch_bridge.compare(m, rng.standard_normal(sq), rng.standard_normal(sk),
                                  rng.standard_normal(sk[:-1] + (E,)), None, am, options=options, out=None)
    assert report.passed, "\n".join(report.lines())
    assert ("attention weights" in [r.name for r in report.rows]) == options["need_weights"]


@needs_torch
def test_a_causal_layer_takes_the_hint_without_a_mask_as_its_torch_twin_does():
    """causal=True is the mask the hint describes: the same numbers as without the hint, and
    the bridge's twin (torch, given the causal mask and the hint) agrees."""
    from normcore import torch_bridge
    m = _mha(causal=True, batch_first=False)
    q, k = Q.swapaxes(0, 1).copy(), K.swapaxes(0, 1).copy()
    np.testing.assert_array_equal(m(q, k, k, is_causal=True), m(q, k, k))
    report = torch_bridge.compare(m, q, k, k, options={"is_causal": True, "need_weights": False}, out=None)
    assert report.passed, "\n".join(report.lines())
    with pytest.raises(ValueError, match="needs that mask"):
        _mha()(Q, K, K, is_causal=True)
