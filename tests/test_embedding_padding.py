"""Embedding(padding_idx=...): as PyTorch 2.13, the padding row starts at zeros and never receives
a gradient; a negative index counts from the end; the state dict stays ``weight``. Parity with
PyTorch to 1e-10 in float64 (skipped without it), central differences with a random upstream
gradient on every other row, memory layouts and zero-size ids; and the messages of
normcore/nn/embedding.py, each saying what was expected."""

import numpy as np
import pytest

import normcore as nc

V, D = 6, 3
IDS = np.array([[1, 0, 4, 1], [0, 5, 0, 2]])  # repeated ids, the padding rows 0 and 5 among them


def _dy(shape, seed=1):
    return np.random.default_rng(seed).standard_normal(shape + (D,))


@pytest.mark.parametrize("padding_idx, row", [(0, 0), (2, 2), (5, 5), (-1, 5), (-6, 0)])
def test_padding_row_starts_at_zeros_and_a_negative_index_counts_from_the_end(padding_idx, row):
    emb = nc.Embedding(V, D, rng=0, padding_idx=padding_idx)
    assert emb.padding_idx == row
    np.testing.assert_array_equal(emb.weight.data[row], 0.0)
    others = np.delete(emb.weight.data, row, axis=0)
    np.testing.assert_array_equal(others, np.delete(nc.Embedding(V, D, rng=0).weight.data, row, axis=0))
    assert repr(emb).endswith(f"({V}, {D}, padding_idx={row})")
    assert list(emb.state_dict()) == ["weight"]


@pytest.mark.parametrize("padding_idx", [0, 5, -1])
def test_padding_row_gets_no_gradient_and_the_others_their_sums(padding_idx):
    emb = nc.Embedding(V, D, rng=0, padding_idx=padding_idx)
    dy = _dy(IDS.shape)
    emb(IDS)
    emb.backward(dy)
    expect = np.zeros((V, D))
    for (b, t), i in np.ndenumerate(IDS):
        if i != emb.padding_idx:
            expect[i] += dy[b, t]
    np.testing.assert_array_equal(emb.weight.grad, expect)


def test_padding_row_gradient_stays_exactly_zero_across_backwards():
    emb = nc.Embedding(V, D, rng=0, padding_idx=0)
    opt = nc.SGD(emb.parameters(), lr=0.5, momentum=0.9)
    for seed in range(4):
        dy = _dy(IDS.shape, seed)
        dy[IDS == 0] = [np.inf, -np.inf, np.nan]  # even a non-finite upstream gradient there
        emb(IDS)
        emb.backward(dy)
        emb.backward(_dy(IDS.shape, seed + 10))  # accumulates
        assert np.array_equal(emb.weight.grad[0], np.zeros(D)) and not np.signbit(emb.weight.grad[0]).any()
        assert np.isfinite(emb.weight.grad).all()
        opt.step()
        emb.zero_grad()
    np.testing.assert_array_equal(emb.weight.data[0], 0.0)  # training leaves the padding vector as it is


def test_central_differences_on_every_row_but_the_padding_row():
    """The padding row's gradient is 0 by definition (not the derivative, which is dy's sum
    there); every other row's is the derivative, to 1e-8 in float64 with a random dy."""
    emb = nc.Embedding(V, D, rng=0, padding_idx=4)
    emb.weight.data[4] = np.random.default_rng(2).standard_normal(D)  # the forward uses the row as it is
    dy = _dy(IDS.shape, 3)
    emb.zero_grad()
    emb(IDS)
    emb.backward(dy)
    w, h = emb.weight.data, 1e-6
    num = np.zeros_like(w)
    for i in np.ndindex(w.shape):
        old = w[i]
        w[i] = old + h
        fp = np.sum(emb(IDS) * dy)
        w[i] = old - h
        fm = np.sum(emb(IDS) * dy)
        w[i] = old
        num[i] = (fp - fm) / (2 * h)
    rows = np.arange(V) != 4
    a, b = emb.weight.grad[rows], num[rows]
    assert np.max(np.abs(a - b)) / max(1e-8, np.max(np.abs(a) + np.abs(b))) < 1e-8
    assert np.abs(num[4]).max() > 0.1  # the derivative there is not 0: the 0 is padding_idx's rule
    np.testing.assert_array_equal(emb.weight.grad[4], 0.0)


@pytest.mark.parametrize("layout", ["F", "transposed", "stepped"])
def test_ids_and_upstream_gradient_in_any_layout(layout):
    ids = np.array([[1, 0, 4], [0, 5, 0], [2, 2, 3]])
    dy = _dy(ids.shape, 4)
    if layout == "F":
        ids_l, dy_l = np.asfortranarray(ids), np.asfortranarray(dy)
    elif layout == "transposed":
        ids_l, dy_l = np.ascontiguousarray(ids.T).T, np.ascontiguousarray(dy.transpose(2, 1, 0)).transpose(2, 1, 0)
    else:
        big_ids, big_dy = np.zeros((6, 6), ids.dtype), np.zeros((6, 6, 2 * D))
        big_ids[::2, ::2], big_dy[::2, ::2, ::2] = ids, dy
        ids_l, dy_l = big_ids[::2, ::2], big_dy[::2, ::2, ::2]
    a, b = nc.Embedding(V, D, rng=0, padding_idx=0), nc.Embedding(V, D, rng=0, padding_idx=0)
    np.testing.assert_array_equal(a(ids_l), b(ids))
    a.backward(dy_l)
    b.backward(dy)
    np.testing.assert_array_equal(a.weight.grad, b.weight.grad)
    np.testing.assert_array_equal(a.weight.grad[0], 0.0)


@pytest.mark.parametrize("shape", [(0,), (2, 0), (0, 3)])
def test_no_ids(shape):
    emb = nc.Embedding(V, D, rng=0, padding_idx=1)
    y = emb(np.zeros(shape, dtype=np.int64))
    assert y.shape == shape + (D,)
    assert emb.backward(np.zeros(shape + (D,))) is None
    assert not emb.weight.grad.any()


@pytest.mark.parametrize("dtype", [np.float32, np.float16])
def test_padding_in_lower_precision(dtype):
    emb = nc.Embedding(V, D, rng=0, dtype=dtype, padding_idx=-2)
    np.testing.assert_array_equal(emb.weight.data[4], 0.0)
    y = emb(IDS)
    assert y.dtype == dtype
    emb.backward(_dy(IDS.shape).astype(dtype))
    assert emb.weight.grad.dtype == dtype
    np.testing.assert_array_equal(emb.weight.grad[4], 0.0)


@pytest.mark.parametrize("padding_idx, error, match", [
    (6, ValueError, r"expected padding_idx in \[-6, 6\) \(a row of the 6 embeddings, negative counting "
                    r"from the end\), got 6"),
    (-7, ValueError, r"expected padding_idx in \[-6, 6\).*got -7"),
    (2.0, TypeError, r"expected padding_idx to be an int or None, got 2.0 \(float\)"),
    (True, TypeError, "expected padding_idx to be an int or None, got True"),
    ("1", TypeError, "expected padding_idx to be an int or None"),
    (np.array([1]), TypeError, "expected padding_idx to be an int or None"),
])
def test_bad_padding_idx_is_refused(padding_idx, error, match):
    with pytest.raises(error, match=match):
        nc.Embedding(V, D, padding_idx=padding_idx)


def test_numpy_integer_padding_idx_is_an_int():
    emb = nc.Embedding(V, D, padding_idx=np.int64(-1))
    assert emb.padding_idx == 5 and type(emb.padding_idx) is int


def test_a_loaded_state_dict_is_used_as_it_is():
    emb = nc.Embedding(V, D, rng=0, padding_idx=0)
    sd = {"weight": np.arange(V * D, dtype=np.float64).reshape(V, D) + 1.0}
    emb.load_state_dict(sd)
    np.testing.assert_array_equal(emb(np.array([0, 3])), sd["weight"][[0, 3]])  # as torch: not re-zeroed
    emb.backward(np.ones((2, D)))
    np.testing.assert_array_equal(emb.weight.grad[0], 0.0)


@pytest.mark.parametrize("padding_idx", [None, 0, 3, -1])
def test_matches_torch(padding_idx):
    torch = pytest.importorskip("torch", reason="PyTorch is the oracle for this test")
    t = torch.nn.Embedding(V, D, padding_idx=padding_idx).double()
    np.testing.assert_array_equal(t.weight.detach().numpy()[t.padding_idx or 0] == 0, padding_idx is not None)
    emb = nc.Embedding(V, D, rng=0, padding_idx=padding_idx)
    assert emb.padding_idx == t.padding_idx
    emb.weight.data[...] = np.random.default_rng(5).standard_normal((V, D))  # the padding row too
    t.load_state_dict({k: torch.from_numpy(v.copy()) for k, v in emb.state_dict().items()})
    dy = _dy(IDS.shape, 6)
    y = emb(IDS)
    emb.backward(dy)
    ty = t(torch.from_numpy(IDS))
    ty.backward(torch.from_numpy(dy))
    np.testing.assert_allclose(y, ty.detach().numpy(), rtol=1e-10, atol=0)
    np.testing.assert_allclose(emb.weight.grad, t.weight.grad.numpy(), rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("padding_idx", [None, 2, -1])
def test_torch_bridge_carries_padding_idx(padding_idx):
    pytest.importorskip("torch", reason="PyTorch is the oracle for this test")
    from normcore.torch_bridge import compare, to_torch
    emb = nc.Embedding(V, D, rng=0, padding_idx=padding_idx)
    assert to_torch(emb).padding_idx == emb.padding_idx
    report = compare(emb, IDS, out=None)
    assert report.passed, "\n".join(report.lines())


def test_embedding_messages_say_what_was_expected():
    with pytest.raises(ValueError, match=r"Embedding: expected every id in \[0, 6\) for a vocabulary of size 6, "
                                         r"got 6"):
        nc.Embedding(V, D)(np.array([0, 6]))
    with pytest.raises(TypeError, match=r"Embedding: expected integer ids, got dtype float64"):
        nc.Embedding(V, D)(np.array([0.0]))
    pe = nc.PositionalEmbedding(4, D, rng=0)
    with pytest.raises(ValueError, match=r"PositionalEmbedding: expected a sequence length T <= max_len=4, "
                                         r"got T=5"):
        pe(np.zeros((2, 5, D)))
    with pytest.raises(ValueError, match=r"PositionalEmbedding: expected input of shape \(\*, T, 3\), "
                                         r"got \(2, 5, 4\)"):
        pe(np.zeros((2, 5, 4)))
