"""What every norm layer shares: input checks, dtypes, and the affine step y = x_hat * gamma + beta.

A norm is two steps. The *normalisation* x -> x_hat differs per layer and lives in the layer's
own file (``_normalize`` / ``_normalize_backward``). The *affine* step is the same everywhere:

    forward:   y = x_hat * gamma + beta
    backward:  dgamma = sum(dy * x_hat),  dbeta = sum(dy)   (over every axis gamma is broadcast on)
               dx_hat = dy * gamma

so it is written once, here. The forward caches ``x_hat`` (one array of the input's size) and
whatever small statistics the layer's backward needs (e.g. ``rstd``), nothing else.

Speed: a norm whose rows are normalised independently (LayerNorm, RMSNorm, GroupNorm) runs on
blocks of rows small enough to stay in the CPU cache while each formula makes its pass over
them; the normalisation writes straight into the output arrays (``out=``), so no per-block
copies are made.

Dtypes: the output has the input's dtype; float16 inputs are computed in float32 and cast back
once at the end; parameters are cast to the compute dtype; gradients are accumulated (``+=``)
into ``Parameter.grad`` in the parameter's own dtype.
"""

import numpy as np

from .._array import check_upstream, compute_dtype, float_input, sum_to_shape
from ..module import Module, Parameter

# Row-wise norms (LayerNorm, RMSNorm, GroupNorm) run forward and backward on blocks of rows of
# about this many values, so that the several passes over a block hit the CPU cache instead
# of main memory. BatchNorm's statistics span all rows: it runs on the whole array at once.
BLOCK_VALUES = 2 ** 18


class _Norm(Module):
    """Bookkeeping for a norm layer; subclasses supply the normalisation and its backward."""

    weight = None  # gamma, a Parameter or None
    bias = None  # beta, a Parameter or None

    @property
    def gamma(self):
        """The scale gamma (the ``weight`` Parameter), or None when the layer has no affine."""
        return self.weight

    @property
    def beta(self):
        """The shift beta (the ``bias`` Parameter), or None."""
        return self.bias

    def _make_affine(self, shape, scale, shift, dtype):
        if scale:
            self.weight = Parameter(np.ones(shape), dtype=dtype)
        if shift:
            self.bias = Parameter(np.zeros(shape), dtype=dtype)

    # --- subclass hooks ------------------------------------------------------------------------
    def _check_shape(self, x):
        """Raise ValueError if x's shape does not fit the layer."""

    def _param_view(self, x):
        """The shape gamma and beta take to broadcast against x (e.g. (1, C, 1) for BatchNorm1d)."""
        raise NotImplementedError

    def _rows(self, x):
        """x as an array of rows (axis 0) normalised independently of each other, e.g. LayerNorm's
        (N, normalized_shape), or None when the statistics tie all of x together (BatchNorm).
        Row-wise norms run in blocks of rows; gamma and beta must broadcast against the rows."""
        return None

    def _normalize(self, x, out):
        """x -> x_hat, written into ``out``; returns stats, what _normalize_backward needs besides x_hat."""
        raise NotImplementedError

    def _normalize_backward(self, dx_hat, x_hat, stats, out):
        """dL/dx_hat -> dL/dx, written into ``out``."""
        raise NotImplementedError

    # --- forward and backward ------------------------------------------------------------------
    def _gamma_beta(self, ctype, view):
        """gamma and beta (or None) in the compute dtype, cast once, shaped to broadcast."""
        return tuple(None if p is None else p.data.astype(ctype, copy=False).reshape(view)
                     for p in (self.weight, self.bias))

    def forward(self, x):
        name = type(self).__name__
        x = float_input(x, name)
        self._check_shape(x)
        ctype = compute_dtype(x.dtype)
        xc = x.astype(ctype, copy=False)
        rows = self._rows(xc)
        blocks = [slice(None)] if rows is None else row_blocks(rows)
        rows = xc if rows is None else rows  # (R, ...)
        view = self._param_view(x)
        gamma, beta = self._gamma_beta(ctype, view)
        x_hat, y = np.empty_like(rows), np.empty_like(rows)
        stats = []
        for blk in blocks:  # each block's passes stay in the CPU cache
            stats.append(self._normalize(rows[blk], out=x_hat[blk]))
            x_hat_blk, y_blk = x_hat[blk], y[blk]
            for sub in row_blocks(x_hat_blk):  # one block, or (BatchNorm) the whole array in blocks
                # y = x_hat * gamma + beta, in its own array (the cached x_hat stays private)
                if gamma is not None:
                    np.multiply(x_hat_blk[sub], gamma, out=y_blk[sub])
                else:
                    y_blk[sub] = x_hat_blk[sub]
                if beta is not None:
                    y_blk[sub] += beta
        self._cache = (x_hat.reshape(x.shape), blocks, stats, x.dtype, view)
        return y.reshape(x.shape).astype(x.dtype, copy=False)

    def backward(self, dy):
        x_hat, blocks, stats, in_dtype, view = self._cached()
        dy = self._upstream(dy, x_hat)
        self._affine_backward(dy, x_hat, view)
        gamma, _ = self._gamma_beta(x_hat.dtype, view)
        rows = self._rows(x_hat)
        x_hat_rows, dy_rows = (x_hat, dy) if rows is None else (rows, self._rows(dy))  # (R, ...)
        dx = np.empty_like(x_hat_rows)
        scratch = None if gamma is None else np.empty_like(x_hat_rows[blocks[0]])
        for blk, block_stats in zip(blocks, stats):
            dy_blk = dy_rows[blk]
            dx_hat = dy_blk if gamma is None else np.multiply(dy_blk, gamma, out=scratch[:len(dy_blk)])
            self._normalize_backward(dx_hat, x_hat_rows[blk], block_stats, out=dx[blk])
        return dx.reshape(x_hat.shape).astype(in_dtype, copy=False)

    def _upstream(self, dy, x_hat):
        """dy checked against the output's shape (x_hat's), in the compute dtype."""
        return check_upstream(dy, x_hat.shape, type(self).__name__).astype(x_hat.dtype, copy=False)

    def _affine_backward(self, dy, x_hat, view):
        """dbeta = sum(dy), dgamma = sum(dy * x_hat) over the axes gamma is broadcast on, added
        (+=) to the parameters' grads; returns both sums with ``view``'s shape (None if absent)."""
        dbeta = None if self.bias is None else sum_to_shape(dy, view)
        dgamma = None if self.weight is None else sum_to_shape(dy, view, times=x_hat)
        if dbeta is not None:
            self.bias.grad += dbeta.reshape(self.bias.shape)
        if dgamma is not None:
            self.weight.grad += dgamma.reshape(self.weight.shape)
        return dbeta, dgamma


def row_blocks(rows):
    """Slices of axis 0 of ``rows``, each holding about BLOCK_VALUES values (at least one row)."""
    step = max(1, BLOCK_VALUES // max(1, rows[0].size))
    return [slice(start, start + step) for start in range(0, rows.shape[0], step)]


def channel_view(num_channels, ndim):
    """The shape a per-channel array takes to broadcast against (N, C, *spatial): (1, C, 1, ...)."""
    return (1, num_channels) + (1,) * (ndim - 2)


class _TrailingAxesNorm(_Norm):
    """A norm over the last ``len(normalized_shape)`` axes, with parameters of that shape."""

    def _set_normalized_shape(self, normalized_shape):
        if isinstance(normalized_shape, (int, np.integer)):
            normalized_shape = (int(normalized_shape),)
        self.normalized_shape = tuple(int(n) for n in normalized_shape)
        if not self.normalized_shape or min(self.normalized_shape) < 1:
            raise ValueError(
                f"normalized_shape must be a positive int or a non-empty tuple of them, got {normalized_shape}"
            )

    def extra_repr(self):
        return f"{self.normalized_shape}, eps={self.eps}, elementwise_affine={self.elementwise_affine}"

    @property
    def _axes(self):
        """The normalised axes D: the last len(normalized_shape) ones."""
        return tuple(range(-len(self.normalized_shape), 0))

    def _check_shape(self, x):
        k = len(self.normalized_shape)
        if x.ndim < k or x.shape[-k:] != self.normalized_shape:
            raise ValueError(
                f"Given normalized_shape={list(self.normalized_shape)}, expected input with shape "
                f"[*, {', '.join(map(str, self.normalized_shape))}], but got input of size {list(x.shape)}"
            )

    def _param_view(self, x):
        return self.normalized_shape

    def _rows(self, x):
        return x.reshape((-1,) + self.normalized_shape)  # (N, *normalized_shape)
