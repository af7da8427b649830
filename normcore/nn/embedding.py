"""``Embedding`` (a lookup table for integer ids) and the learned ``PositionalEmbedding``."""

import numbers

import numpy as np
from numpy.typing import ArrayLike, DTypeLike

from .._array import (RngLike, as_array, check_upstream, float_input, make_rng, positive_int, real_number,
                      sum_to_shape)
from ..module import Module, Parameter


def index_input(idx: ArrayLike, size: int, who: str, what: str = "index",
                allowed: int | None = None, among: str = "a vocabulary") -> np.ndarray:
    """Return ``idx`` as an integer array, or raise if it is not integer or not in [0, size).

    ``allowed`` is one extra value that may appear (a loss's ``ignore_index``); ``among`` names
    what the indices pick from, for the message ("a vocabulary", "the logits' classes").
    """
    idx = as_array(idx, who, f"{what}s")
    if not np.issubdtype(idx.dtype, np.integer):
        raise TypeError(f"{who}: expected integer {what}s, got dtype {idx.dtype}")
    bad = (idx < 0) | (idx >= size)
    if allowed is not None:
        bad &= idx != allowed
    if np.any(bad):
        raise ValueError(
            f"{who}: expected every {what} in [0, {size}) for {among} of size {size}"
            + ("" if allowed is None else f", or {allowed} (ignored)") + f", got {idx[bad].ravel()[0]}"
        )
    return idx


def learned_table(rows: int, dim: int, rng: RngLike, dtype: DTypeLike, std: float, who: str,
                  rows_name: str) -> Parameter:
    """A (rows, dim) Parameter drawn N(0, std**2), after checking both sizes are positive ints."""
    shape = (positive_int(rows, rows_name, who), positive_int(dim, "dim", who))
    return Parameter(make_rng(rng).normal(0.0, real_number(std, "std", who, low=0.0), shape), dtype=dtype)


def padding_index(value: object, num_embeddings: int, who: str) -> int | None:
    """``padding_idx`` as a row in [0, num_embeddings), negative values counting from the end as
    in PyTorch, or None; ``TypeError`` for a non-integer, ``ValueError`` out of range."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{who}: expected padding_idx to be an int or None, got {value!r} ({type(value).__name__})")
    index = int(value)
    if not -num_embeddings <= index < num_embeddings:
        raise ValueError(f"{who}: expected padding_idx in [{-num_embeddings}, {num_embeddings}) (a row of the "
                         f"{num_embeddings} embeddings, negative counting from the end), got {index}")
    return index % num_embeddings


class Embedding(Module):
    r"""A learned lookup table: row ``i`` of ``weight`` is the vector of token id ``i``.

    Shapes: idx integer (*), weight (num_embeddings, dim), y (*, dim)::

        y[...] = weight[idx[...]]
        dweight[i] = sum of dy[...] over every position where idx[...] == i   (i != padding_idx)
        dweight[padding_idx] = 0

    The backward is a scatter-add, ``np.add.at(dweight, idx, dy)``: a token that appears twice
    receives both gradients. (``dweight[idx] += dy`` would be wrong: with repeated indices
    NumPy's buffered fancy assignment keeps only one of them.) The integer input has no
    gradient; ``backward`` returns None. ``weight`` starts N(0, std**2), std=1 as in
    PyTorch. Cache: a copy of idx.

    ``padding_idx`` (None by default), as in PyTorch: that row starts at zeros and never
    receives a gradient, so training leaves it as it is (a padding token's vector). A negative
    value counts from the end and is stored as the row it names. The forward still looks the
    row up as it is: a state dict may load any values into it. The state dict is ``weight``.
    """

    def __init__(self, num_embeddings: int, dim: int, rng: RngLike = None, dtype: DTypeLike = np.float64,
                 std: float = 1.0, padding_idx: int | None = None) -> None:
        rows = positive_int(num_embeddings, "num_embeddings", "Embedding")
        padding_idx = padding_index(padding_idx, rows, "Embedding")
        self.weight = learned_table(num_embeddings, dim, rng, dtype, std, "Embedding", "num_embeddings")
        self.num_embeddings, self.dim = self.weight.shape
        self.padding_idx = padding_idx
        if padding_idx is not None:
            self.weight.data[padding_idx] = 0.0  # (dim,)

    def extra_repr(self) -> str:
        return f"{self.num_embeddings}, {self.dim}" + (
            "" if self.padding_idx is None else f", padding_idx={self.padding_idx}")

    def forward(self, idx: ArrayLike) -> np.ndarray:
        idx = index_input(idx, self.num_embeddings, "Embedding", "id")
        self._cache = idx.copy()  # private: the caller may overwrite its ids before backward
        return self.weight.data[idx]  # (*, dim)

    def backward(self, dy: ArrayLike) -> None:
        idx = self._cached()
        dy = check_upstream(dy, idx.shape + (self.dim,), "Embedding")
        if self.padding_idx is not None:
            dy = np.where((idx == self.padding_idx)[..., None], 0.0, dy)  # (*, dim): padding positions give 0
        np.add.at(self.weight.grad, idx, dy)  # (num_embeddings, dim); repeated ids accumulate
        return None


class PositionalEmbedding(Module):
    r"""Learned absolute positions: add row t of ``weight`` to the vector at position t.

    Shapes: x (*, T, dim) with T <= max_len, weight (max_len, dim), y like x::

        y[..., t, :] = x[..., t, :] + weight[t]
        dx = dy
        dweight[t] = sum over the leading axes of dy[..., t, :]    (rows t >= T get nothing)

    It is what ``torch.nn.Embedding(max_len, dim)`` applied to ``arange(T)`` and added to x
    computes. ``weight`` starts N(0, std**2). Cache: the input's shape and dtype.
    """

    def __init__(self, max_len: int, dim: int, rng: RngLike = None, dtype: DTypeLike = np.float64,
                 std: float = 1.0) -> None:
        self.weight = learned_table(max_len, dim, rng, dtype, std, "PositionalEmbedding", "max_len")
        self.max_len, self.dim = self.weight.shape

    def extra_repr(self) -> str:
        return f"{self.max_len}, {self.dim}"

    def forward(self, x: ArrayLike) -> np.ndarray:
        x = float_input(x, "PositionalEmbedding")
        if x.ndim < 2 or x.shape[-1] != self.dim:
            raise ValueError(f"PositionalEmbedding: expected input of shape (*, T, {self.dim}), got {x.shape}")
        T = x.shape[-2]
        if T > self.max_len:
            raise ValueError(f"PositionalEmbedding: expected a sequence length T <= max_len={self.max_len}, "
                             f"got T={T}")
        self._cache = (x.shape, x.dtype)
        return x + self.weight.data[:T].astype(x.dtype, copy=False)  # (*, T, dim)

    def backward(self, dy: ArrayLike) -> np.ndarray:
        shape, in_dtype = self._cached()
        dy = check_upstream(dy, shape, "PositionalEmbedding")
        T = shape[-2]
        self.weight.grad[:T] += sum_to_shape(dy, (T, self.dim))  # (T, dim)
        return dy.astype(in_dtype, copy=False)  # (*, T, dim)
