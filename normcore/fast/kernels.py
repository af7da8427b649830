"""The fast tier's kernels: the reference tier's formulas, blocked and in place.

Each kernel computes what a reference norm computes (``normcore/norms``), on an input laid
out as (samples, channels, positions), S C L, C-contiguous, in the compute dtype:

    standardize_rows      LayerNorm (x as (R, n, 1)), GroupNorm (groups of channels) and
                          InstanceNorm in training (one channel per group): each sample's
                          values split into rows of n = C L / groups, each row standardised
    rms_rows              RMSNorm, on (R, n)
    standardize_channels  BatchNorm in training: one mean and variance per channel, over the
                          samples and positions (normalize_channels: with given statistics)

with a ``..._backward`` for each. Speed comes from four things, none of which changes a formula:

* **blocks**: the input is processed a block of about BLOCK_BYTES (whole samples) at a
  time, so that the five or six NumPy passes a formula needs find the block in the CPU cache
  instead of main memory;
* **in place**: every elementwise step writes into a preallocated block (``out=``), so no
  temporaries are created; per-channel vectors (gamma, beta, BatchNorm's constants) are tiled
  once to a block's shape, which makes their products plain elementwise passes (a broadcast
  vector makes NumPy run one short inner loop per row);
* **BLAS reductions**: row sums are matrix-vector products with a ones vector, row sums of
  products are ``np.vecdot``, column sums ``ones @ block``; per-channel sums give dgamma,
  dbeta and the two means of the backward at once;
* **BatchNorm's backward with gamma folded in**: dgamma and dbeta are, up to gamma / n, the
  two means the input gradient needs: one pass for the sums and one for dx.

Accuracy (float32 as good as PyTorch's or better, also far from zero):

* a mean is taken in two steps: m1 = sum(x) / n, then the correction sum(x - m1) / n of the
  small centred values (BatchNorm: around a pivot, the mean of a few samples), so x - mean is
  as accurate at a mean of 1e4 as at 0, and a constant row gives exactly 0 (y = beta);
* a variance is the mean square of centred values, never E[x**2] - E[x]**2 of x;
* float32 sums add partial sums of at most CHUNK values (along a row) or SUM_ROWS rows (down
  a column) in float64: the rounding error grows with those, not with the row or the batch;
* a row or channel whose float32 sum of squares overflows (|x| ~ 1e20) or underflows is
  recomputed in float64, which is how the reference tier computes every statistic, with
  its functions (``moments``, ``standardize``): so a float64 row or channel whose squares
  overflow float64 (|x| ~ 1e200) is rescaled by a power of two as there, not returned as beta;
* the per-row and per-channel constants of a backward are formed in float64 and hold rstd
  once, never rstd**2 or rstd / n in float32: at a spread of 1e22 those are below float32's
  range and dx loses digits silently.

Outputs are fresh C-contiguous arrays, so every reshape of them is a view (``_view``
checks it); inputs are only read.

One file of about 600 lines, on purpose: the three families share the block helpers and the
tuning constants below, which the tests vary in one place (``tests/test_fast_tier.py``
patches ``BLOCK_BYTES``, ``CHUNK``, ... here) to show that no result depends on them. It is
the fast tier, the one deliberate second copy: a reader learns the formulas in
``normcore/norms`` and comes here for the speed, one family (a ``# ---`` section) at a time.
"""
import numpy as np

from ..norms.standardization import moments, size_scale, standardize

BLOCK_BYTES = 2 ** 19  # half a MiB per block (L2 per core); bigger blocks cost fewer NumPy calls
CHUNK = 256  # float32 sums along a row run over at most this many values
SUM_ROWS = 256  # column sums add at most this many rows in the compute dtype
ROW_SUMS = 32  # per-channel sums of rows of at least this many positions run along the rows


# --- small helpers ----------------------------------------------------------------------------
def _view(a, shape):
    """``a.reshape(shape)`` for a C-contiguous ``a``: always a view, so writes land in ``a``.
    (The old GroupNorm wrote into a reshape that was a copy: a silent wrong answer.)"""
    if not a.flags.c_contiguous:
        raise AssertionError("internal error: the kernels take C-contiguous arrays")
    return a.reshape(shape)


def _block_len(item_values, itemsize):
    """How many items (samples) of ``item_values`` values go into one block (at least one)."""
    return max(1, BLOCK_BYTES // max(1, item_values * itemsize))


def _blocks(count, step):
    """Slices of ``range(count)`` of ``step`` items each (the last one shorter)."""
    return [slice(start, min(start + step, count)) for start in range(0, count, step)]


def _row_dots(a, b=None):
    """sum_j a[i, j] * b[i, j] per row of the 2-D block a, in float64; b a block of a's shape,
    or None for the row sums of a (a matrix-vector product with ones).

    In float32, partial sums of at most CHUNK values are added in float64: the rounding error
    of a long float32 sum grows with its length, and a mean or a variance must not carry it."""
    rows, n = a.shape

    def dots(a, b):
        return a @ np.ones(a.shape[-1], a.dtype) if b is None else np.vecdot(a, b)

    if a.dtype == np.float64 or n <= CHUNK:
        return dots(a, b).astype(np.float64)
    if n % CHUNK == 0:                                     # one call on (rows * n / CHUNK, CHUNK)
        parts = dots(a.reshape(-1, CHUNK), None if b is None else b.reshape(-1, CHUNK))
        return parts.reshape(rows, n // CHUNK).sum(axis=1, dtype=np.float64)
    total = np.zeros(rows)
    for j in range(0, n, CHUNK):
        total += dots(a[:, j:j + CHUNK], None if b is None else b[:, j:j + CHUNK])
    return total


def _column_sums(a, acc):
    """acc += the column sums of the 2-D block a (k, P), acc (P,) in float64.

    Each matrix-vector product ``ones @ a[i:i + SUM_ROWS]`` adds at most SUM_ROWS rows in the
    compute dtype; those partial sums are added in float64. The float32 rounding error then
    grows with SUM_ROWS, not with the batch (adding 16384 rows one after the other, as
    ``np.sum`` over axis 0 does, is ten times less accurate)."""
    ones = np.ones(min(len(a), SUM_ROWS), a.dtype)
    for i in range(0, len(a), SUM_ROWS):
        part = a[i:i + SUM_ROWS]
        acc += ones[:len(part)] @ part


def _channel_sums(a, b=None, scratch=None):
    """Per-channel sums of a * b (of a when b is None) over a block's samples and positions:
    a (k, C, L) -> (C,) float64.

    Long rows (L >= ROW_SUMS) are summed along L first, with ``_row_dots``; short ones (BatchNorm1d
    on (N, C): L = 1) across the samples first, with ``_column_sums`` (the product a * b is
    then formed in ``scratch``)."""
    k, C, L = a.shape
    if L >= ROW_SUMS:
        rows = a.reshape(k * C, L)
        return _row_dots(rows, None if b is None else b.reshape(k * C, L)).reshape(k, C).sum(axis=0)
    if b is not None:
        a = np.multiply(a, b, out=scratch[:k])
    acc = np.zeros(C * L)
    _column_sums(_view(a, (k, C * L)), acc)
    return acc.reshape(C, L).sum(axis=1)


def _channel_tile(v, k, L, dtype):
    """A per-channel vector (C,) tiled to a block's shape (k, C, L), in ``dtype``.

    Multiplying a block by a tile is a plain elementwise pass; multiplying it by a broadcast
    vector makes NumPy run one short inner loop per row, which is markedly slower."""
    v = np.asarray(v).astype(dtype)
    return np.ascontiguousarray(np.broadcast_to(v[:, None], (k, len(v), L)))


def _needs_float64(var, eps, dtype):
    """Which variances (or mean squares) to recompute with the reference tier's arithmetic, in
    float64: those that are not finite (a NaN or inf in x, or, in float32, squares that
    overflowed: |x| ~ 1e20), and in float32 those so small beside eps that squares below the
    normal range (underflow) matter."""
    with np.errstate(invalid="ignore"):
        if dtype == np.float64:
            return ~np.isfinite(var)
        tiny = float(np.finfo(dtype).tiny) * 2 ** 24
        return ~(np.isfinite(var) & (var + eps >= tiny))


def _scratch(out, shape, dtype):
    """A compute-dtype scratch block when ``out`` has another dtype (float16 results are
    computed in float32 and cast once), else None: the kernel writes straight into out."""
    return None if out.dtype == dtype else np.empty(shape, dtype)


def _finish(result, out):
    """Cast a block computed in float32 scratch into the float16 output (nothing to do when
    the block was computed in out itself)."""
    if result.dtype != out.dtype:
        np.copyto(out, result, casting="same_kind")


# --- LayerNorm, GroupNorm, InstanceNorm: rows standardised on their own ---------------------------
def standardize_rows(x, groups, eps, gamma=None, beta=None, out_dtype=None):
    """The forward of LayerNorm over rows: x (S, C, L) -> (y, x_hat, rstd, mean, var).

    Each sample's C channels of L positions are split into ``groups`` rows of n = C L / groups
    values (LayerNorm: x (R, n, 1), one group; GroupNorm: G groups; InstanceNorm: C groups),
    and each row is standardised on its own, with a per-channel affine::

        mean = mean_row(x),  var = mean_row((x - mean)**2),  rstd = 1 / sqrt(var + eps)
        x_hat = (x - mean) * rstd,  y = x_hat * gamma + beta          gamma, beta: (C,) or None

    y (S, C, L) in ``out_dtype`` (default x's), x_hat (S, C, L) and rstd (S, groups) in x's
    dtype, mean and var (S, groups) in float64. Per block of rows, t the block of x_hat::

        m1 = (x @ 1) / n                  the mean, up to the rounding of a float32 sum
        t  = x - m1                       centred, up to that rounding
        m2 = (t @ 1) / n                  the rounding, measured on the small centred values
        t -= m2                           x - mean, accurately
        var = row_dots(t, t) / n          float64 partial sums
        t *= rstd                         x_hat

    m2 is what makes a mean of 1e4 with unit spread as accurate as one of 0 (a float32 sum of
    768 values near 1e4 is off by about 1e-3), and makes a constant row give x - mean = 0 exactly,
    so y = beta, as in PyTorch.
    """
    S, C, L = x.shape
    G, n = groups, C * L // groups
    dt = x.dtype
    y = np.empty(x.shape, out_dtype or dt)
    x_hat = np.empty(x.shape, dt)
    rstd = np.empty(S * G, dt)
    mean, var = np.zeros(S * G), np.zeros(S * G)
    if x.size == 0:
        with np.errstate(divide="ignore"):
            rstd[...] = 1.0 / np.sqrt(eps)
        return y, x_hat, rstd.reshape(S, G), mean.reshape(S, G), var.reshape(S, G)
    k = min(S, _block_len(C * L, dt.itemsize))            # samples per block
    X, T, Y = (_view(a, (S * G, n)) for a in (x, x_hat, y))
    ones = np.ones(n, dt)
    g_tile = None if gamma is None else _view(_channel_tile(gamma, k, L, dt), (k * G, n))
    b_tile = None if beta is None else _view(_channel_tile(beta, k, L, dt), (k * G, n))
    work = _scratch(y, (k * G, n), dt)
    m1, m2 = np.empty(S * G, dt), np.empty(S * G, dt)
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        for blk in _blocks(S * G, k * G):
            rows, t = X[blk], T[blk]                       # (k G, n)
            a = np.matmul(rows, ones, out=m1[blk])
            a /= n                                         # (k G,)  the mean, up to rounding
            np.subtract(rows, a[:, None], out=t)
            b = np.matmul(t, ones, out=m2[blk])
            b /= n                                         # (k G,)  the rest of the mean
            np.subtract(t, b[:, None], out=t)              # x - mean
            v = np.divide(_row_dots(t, t), n, out=var[blk])  # (k G,)  float64
            r = np.divide(1.0, np.sqrt(v + eps), out=rstd[blk], casting="same_kind")
            np.multiply(t, r[:, None], out=t)              # x_hat
            _affine(t, g_tile, b_tile, Y[blk], work)
    mean += m1
    mean += m2
    bad = np.flatnonzero(_needs_float64(var, eps, dt))
    if bad.size:                                           # |x| ~ 1e20 and the like: in float64
        mean[bad], var[bad], rstd[bad], T[bad] = _standardize_float64(X[bad], eps)
        for i in bad:                                      # y for these rows (channels of sample i // G)
            channels = slice(i % G * C // G, (i % G + 1) * C // G)
            g = 1.0 if gamma is None else gamma[channels, None]
            b = 0.0 if beta is None else beta[channels, None]
            y[i // G, channels] = x_hat[i // G, channels] * g + b
    return y, x_hat, rstd.reshape(S, G), mean.reshape(S, G), var.reshape(S, G)


def _standardize_float64(rows, eps):
    """The reference tier's arithmetic for a few rows (R, n), in float64: (mean, var, rstd,
    x_hat), the first three (R,). The variance is carried in units of scale**2 (``moments``),
    so rows near 1e200, whose squares overflow float64, are standardised too; var itself is
    then inf, as the true variance is beyond float64."""
    r64 = rows.astype(np.float64)
    with np.errstate(divide="ignore", over="ignore", invalid="ignore"):
        mean, var, scale = moments(r64, (1,))
        x_hat, rstd = standardize(r64, mean, var, eps, scale)
        var = var * scale ** 2
    return mean[:, 0], var[:, 0], rstd[:, 0], x_hat


def _affine(x_hat, g_tile, b_tile, out, work):
    """y = x_hat * gamma + beta for one block (gamma, beta tiled to at least its shape), into
    ``out``; computed in ``work`` first when out is float16."""
    m = len(x_hat)
    y = out if work is None else work[:m]
    if g_tile is not None:
        np.multiply(x_hat, g_tile[:m], out=y)
    else:
        np.copyto(y, x_hat)
    if b_tile is not None:
        np.add(y, b_tile[:m], out=y)
    _finish(y, out)


def _sample_channel_sums(d, xh, P):
    """For a block of k samples, d and x_hat (k, C, L): the sums over each channel's L
    positions of dy * x_hat and of dy, as two (k, C) arrays. Long rows: dot products along
    L; otherwise P = dy * x_hat is formed (scratch) and summed."""
    k, C, L = d.shape
    if L >= ROW_SUMS:
        rows, xrows = d.reshape(k * C, L), xh.reshape(k * C, L)
        return _row_dots(rows, xrows).reshape(k, C), _row_dots(rows).reshape(k, C)
    p = np.multiply(d, xh, out=P[:k])
    if L == 1:
        return p.reshape(k, C), d.reshape(k, C)
    return p.sum(axis=2), d.sum(axis=2)


def _group_dot(a, w, groups):
    """sum over each group's channels of a (k, C) weighted by w (C,): (k * groups,)."""
    k, C = a.shape
    if groups == 1:
        return a @ w
    return (a * w).reshape(k * groups, C // groups).sum(axis=1)


def standardize_rows_backward(dy, x_hat, rstd, groups, gamma=None, out_dtype=None):
    """The backward of ``standardize_rows``: (dx, dgamma, dbeta), the sums (C,) in float64.

        dgamma = sum(dy * x_hat),  dbeta = sum(dy)         per channel, over samples and positions
        dx_hat = dy * gamma
        dx = rstd * (dx_hat - mean_row(dx_hat) - x_hat * mean_row(dx_hat * x_hat))

    The per-channel sums give both the parameters' gradients and the two row means, which
    are their gamma-weighted sums over a row's channels; dx_hat is only formed in the last step::

        sp, sd = per (sample, channel): sum(dy * x_hat), sum(dy)
        a = rstd * (sd @ gamma) / n,  c = rstd * (sp @ gamma) / n          per row
        dx = (dy * gamma) * rstd - (x_hat * c + a)
    """
    S, C, L = x_hat.shape
    G, n = groups, C * L // groups
    dt = x_hat.dtype
    dx = np.empty(x_hat.shape, out_dtype or dt)
    dgamma, dbeta = np.zeros(C), np.zeros(C)
    if x_hat.size == 0:
        return dx, dgamma, dbeta
    k = min(S, _block_len(C * L, dt.itemsize))            # samples per block
    D, XH, DX = (_view(a, (S * G, n)) for a in (dy, x_hat, dx))
    R = _view(rstd, (S * G,))
    w = np.ones(C, dt) if gamma is None else gamma
    g_tile = None if gamma is None else _view(_channel_tile(gamma, k, L, dt), (k * G, n))
    P = np.empty((k, C, L), dt)
    work = _scratch(dx, (k * G, n), dt)
    for blk in _blocks(S, k):
        sp, sd = _sample_channel_sums(dy[blk], x_hat[blk], P)     # (k, C) each
        _column_sums(sp, dgamma)
        _column_sums(sd, dbeta)
        rows = slice(blk.start * G, blk.stop * G)
        d, xh, r = D[rows], XH[rows], R[rows]
        m = len(d)
        r_n = r.astype(np.float64) / n                     # float64: r / n is below float32's range when rstd ~ 1e-37
        a = (_group_dot(sd, w, G) * r_n).astype(dt, copy=False)  # rstd * mean_row(dx_hat)
        c = (_group_dot(sp, w, G) * r_n).astype(dt, copy=False)  # rstd * mean_row(dx_hat * x_hat)
        o = DX[rows] if work is None else work[:m]
        if gamma is None:
            np.multiply(d, r[:, None], out=o)
        else:
            np.multiply(d, g_tile[:m], out=o)
            np.multiply(o, r[:, None], out=o)
        p = _view(P[:blk.stop - blk.start], (m, n))
        np.multiply(xh, c[:, None], out=p)
        np.add(p, a[:, None], out=p)
        np.subtract(o, p, out=o)
        _finish(o, DX[rows])
    return dx, dgamma, dbeta


# --- RMSNorm ------------------------------------------------------------------------------------
def rms_rows(x, eps, gamma=None, out_dtype=None):
    """The forward of RMSNorm over rows: x (R, n) -> (y, x_hat, rrms (R,)).

        rrms = 1 / sqrt(mean_n(x**2) + eps),  x_hat = x * rrms,  y = x_hat * gamma
    """
    R, n = x.shape
    dt = x.dtype
    y = np.empty(x.shape, out_dtype or dt)
    x_hat = np.empty(x.shape, dt)
    rrms = np.empty(R, dt)
    if x.size == 0:
        return y, x_hat, rrms
    k = min(R, _block_len(n, dt.itemsize))
    g_tile = None if gamma is None else _view(_channel_tile(gamma, k, 1, dt), (k, n))
    work = _scratch(y, (k, n), dt)
    ms = np.empty(R)
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        for blk in _blocks(R, k):
            rows, xh = x[blk], x_hat[blk]
            ms[blk] = _row_dots(rows, rows) / n            # (k,)  float64
            r = 1.0 / np.sqrt(ms[blk] + eps)
            np.multiply(rows, r.astype(dt)[:, None], out=xh)
            rrms[blk] = r
            _affine(xh, g_tile, None, y[blk], work)
    bad = np.flatnonzero(_needs_float64(ms, eps, dt))
    if bad.size:                                           # x**2 overflowed: in float64, rescaled
        r64 = x[bad].astype(np.float64)
        scale = size_scale(r64, (1,))                      # (b, 1)  as the reference tier's RMSNorm
        r = 1.0 / (scale[:, 0] * np.sqrt(np.mean((r64 / scale) ** 2, axis=1) + eps / scale[:, 0] ** 2))
        rrms[bad], x_hat[bad] = r, r64 * r[:, None]
        y[bad] = x_hat[bad] * (1.0 if gamma is None else gamma)
    return y, x_hat, rrms


def rms_rows_backward(dy, x_hat, rrms, gamma=None, out_dtype=None):
    """The backward of ``rms_rows``: (dx, dgamma), dgamma (n,) in float64.

        dx = rrms * (dx_hat - x_hat * mean_n(dx_hat * x_hat)),   dx_hat = dy * gamma
    """
    R, n = x_hat.shape
    dt = x_hat.dtype
    dx = np.empty(x_hat.shape, out_dtype or dt)
    dgamma = np.zeros(n)
    if x_hat.size == 0:
        return dx, dgamma
    k = min(R, _block_len(n, dt.itemsize))
    w = np.ones(n, dt) if gamma is None else gamma
    g_tile = None if gamma is None else _view(_channel_tile(gamma, k, 1, dt), (k, n))
    P = np.empty((k, n), dt)
    work = _scratch(dx, (k, n), dt)
    for blk in _blocks(R, k):
        d, xh, r = dy[blk], x_hat[blk], rrms[blk]
        m = len(d)
        p = P[:m]
        np.multiply(d, xh, out=p)
        _column_sums(p, dgamma)
        c = (p @ w) * (r.astype(np.float64) / n)           # rrms * mean_n(dx_hat * x_hat), float64 (see above)
        c = c.astype(dt, copy=False)
        o = dx[blk] if work is None else work[:m]
        if gamma is None:
            np.multiply(d, r[:, None], out=o)
        else:
            np.multiply(d, g_tile[:m], out=o)
            np.multiply(o, r[:, None], out=o)
        np.multiply(xh, c[:, None], out=p)
        np.subtract(o, p, out=o)
        _finish(o, dx[blk])
    return dx, dgamma


# --- BatchNorm (and InstanceNorm in evaluation): one statistic per channel ------------------------
#
# These kernels keep xc = x - p, the input shifted by a per-channel value p close to the mean,
# instead of x_hat: with ``shift`` = mean - p (small), x_hat = (xc - shift) * rstd. gamma, rstd
# and shift are all per channel, so y = x_hat * gamma + beta is a single pass over xc,
#     y = xc * (rstd * gamma) + (beta - shift * rstd * gamma),
# and the backward folds them into its per-channel factors the same way. The cache (xc, shift,
# rstd) has x_hat's size; two elementwise passes of the forward are saved.

def _shifted_affine(xc, shift, rstd, gamma, beta, y, blocks, k, L):
    """y = (xc - shift) * rstd * gamma + beta, one multiply and one add per block."""
    dt = xc.dtype
    scale = rstd * (1.0 if gamma is None else gamma.astype(np.float64))          # (C,)
    offset = (0.0 if beta is None else beta.astype(np.float64)) - shift * scale   # (C,)
    scale_tile, offset_tile = _channel_tile(scale, k, L, dt), _channel_tile(offset, k, L, dt)
    work = _scratch(y, scale_tile.shape, dt)
    for blk in blocks:
        m = blk.stop - blk.start
        out = y[blk] if work is None else work[:m]
        np.multiply(xc[blk], scale_tile[:m], out=out)
        np.add(out, offset_tile[:m], out=out)
        _finish(out, y[blk])


def standardize_channels(x, eps, gamma=None, beta=None, out_dtype=None):
    """BatchNorm's forward with the batch's statistics: x (N, C, L) -> (y, xc, shift, rstd,
    mean, var); xc = x - p in x's dtype, the rest (C,) in float64 (x_hat = (xc - shift) * rstd).

    Two passes over x, plus one block::

        p = the mean of a block of samples spread over the batch, per channel,
            rounded to x's dtype (the pivot)
        pass 1:  xc = x - p;   s = sum(xc),  q = sum(xc * xc)                per channel
                 shift = s / n,  mean = p + shift,  var = q / n - shift**2
        pass 2:  y = xc * (rstd * gamma) + (beta - shift * rstd * gamma)

    ``q / n - shift**2`` is the variance of the *shifted* values xc, safe while shift**2 is
    small against var (here: at most var / 16), as it is when the pivot is near the mean.
    When it is not (the sample was not typical of the batch, or a channel is constant),
    one more pass centres xc on the mean and measures q again: the variance is never the
    difference of two large numbers, and a constant channel gives exactly y = beta.
    """
    N, C, L = x.shape
    dt = x.dtype
    n = N * L
    y = np.empty(x.shape, out_dtype or dt)
    xc = np.empty(x.shape, dt)
    zeros = np.zeros(C)
    if n == 0:
        with np.errstate(divide="ignore"):
            return y, xc, zeros, np.full(C, 1.0 / np.sqrt(eps)), zeros, zeros
    k = min(N, _block_len(C * L, dt.itemsize))
    blocks = _blocks(N, k)
    scratch = np.empty((k, C, L), dt)

    def shift_and_sum(src, sub):
        """xc = src - sub per block; the per-channel sums of xc and of xc * xc."""
        s, q = np.zeros(C), np.zeros(C)
        tile = _channel_tile(sub, k, L, dt)
        for blk in blocks:
            t = xc[blk]
            np.subtract(src[blk], tile[:len(t)], out=t)
            s += _channel_sums(t)
            q += _channel_sums(t, t, scratch)
        return s, q

    sample = np.ascontiguousarray(x[::max(1, N // k)][:k])  # k samples spread over the batch
    with np.errstate(over="ignore", invalid="ignore"):  # sums that overflow float32: see bad below
        pivot = (_channel_sums(sample) / (len(sample) * L)).astype(dt).astype(np.float64)
        s, q = shift_and_sum(x, pivot)
        shift = s / n
        var = q / n - shift ** 2
        if not np.all(shift ** 2 <= var / 16):         # one more pass: centre xc on the mean
            sub = shift.astype(dt).astype(np.float64)
            pivot = pivot + sub
            s, q = shift_and_sum(xc, sub)
            shift = s / n
            var = q / n - shift ** 2
        mean = pivot + shift
    var = np.maximum(var, 0.0)
    bad = _needs_float64(var, eps, dt)
    with np.errstate(divide="ignore", over="ignore"):
        rstd = 1.0 / np.sqrt(var + eps)
    if bad.any():                                      # x**2 overflowed: these channels in float64
        xb = x[:, bad].astype(np.float64)              # (N, b, L)
        with np.errstate(divide="ignore", over="ignore"):
            m, v, scale = moments(xb, (0, 2))          # (1, b, 1)  v in units of scale**2 (1e200 in float64)
            _, r = standardize(xb, m, v, eps, scale)      # rstd (1, b, 1)
            mean[bad], var[bad], rstd[bad] = m.ravel(), (v * scale ** 2).ravel(), r.ravel()
        pivot[bad] = mean[bad].astype(dt)              # the pivot's sums may have overflowed too
        xc[:, bad] = xb - pivot[bad][:, None]
        shift[bad] = mean[bad] - pivot[bad]
    _shifted_affine(xc, shift, rstd, gamma, beta, y, blocks, k, L)
    return y, xc, shift, rstd, mean, var


def normalize_channels(x, mean, rstd, gamma=None, beta=None, out_dtype=None):
    """BatchNorm's forward with given statistics (the running ones, in evaluation):
    x_hat = (x - mean) * rstd per channel, y = x_hat * gamma + beta; x (N, C, L), mean and
    rstd (C,) in float64. Returns (y, xc, shift) as ``standardize_channels`` does: the pivot
    is mean rounded to x's dtype (so a float64 running mean is not rounded to float32) and
    shift what the rounding left.
    """
    N, C, L = x.shape
    dt = x.dtype
    y = np.empty(x.shape, out_dtype or dt)
    xc = np.empty(x.shape, dt)
    pivot = mean.astype(dt)
    shift = mean - pivot
    if x.size == 0:
        return y, xc, shift
    k = min(N, _block_len(C * L, dt.itemsize))
    blocks = _blocks(N, k)
    tile = _channel_tile(pivot, k, L, dt)
    for blk in blocks:
        np.subtract(x[blk], tile[:blk.stop - blk.start], out=xc[blk])
    _shifted_affine(xc, shift, rstd, gamma, beta, y, blocks, k, L)
    return y, xc, shift


def standardize_channels_backward(dy, xc, shift, rstd, gamma=None, batch_stats=True, out_dtype=None):
    """BatchNorm's backward from the forward's (xc, shift, rstd): (dx, dgamma, dbeta), the
    sums (C,) in float64.

        dgamma = sum(dy * x_hat) = rstd * (sum(dy * xc) - shift * sum(dy))    per channel
        dbeta  = sum(dy)
        batch statistics:  dx = gamma * rstd * (dy - dbeta / n - x_hat * dgamma / n)
        given statistics:  dx = gamma * rstd * dy

    The batch-statistics line is the reference's backward with gamma folded in: gamma and
    rstd are constant over the axes the statistics run over, so mean(dx_hat) = gamma * dbeta / n
    and mean(dx_hat * x_hat) = gamma * dgamma / n. One pass for the sums, one for dx::

        dx = K * (dy - xc * A + B),   K = gamma * rstd,  A = rstd * dgamma / n,
                                      B = A * shift - dbeta / n

    Each per-channel constant holds rstd at most once: a product such as rstd**2 (about
    1e-44 for a channel of spread 1e22) is below float32's range and rounds to 0 or to a
    subnormal with few digits left. A channel whose A still falls below the normal range of
    x's dtype (spreads near its largest values) has its dx computed in float64.
    """
    N, C, L = xc.shape
    dt = xc.dtype
    n = N * L
    dx = np.empty(xc.shape, out_dtype or dt)
    if n == 0:
        return dx, np.zeros(C), np.zeros(C)
    k = min(N, _block_len(C * L, dt.itemsize))
    blocks = _blocks(N, k)
    P = np.empty((k, C, L), dt)
    sum_dy_xc, dbeta = np.zeros(C), np.zeros(C)
    with np.errstate(over="ignore", invalid="ignore"):     # float32 sums that overflow: redone below
        for blk in blocks:
            sum_dy_xc += _channel_sums(dy[blk], xc[blk], P)
            dbeta += _channel_sums(dy[blk])
    overflowed = np.flatnonzero(~np.isfinite(sum_dy_xc))  # dy * xc beyond float32's range (xc ~ 1e38)
    if overflowed.size:
        sum_dy_xc[overflowed] = np.sum(dy[:, overflowed].astype(np.float64) * xc[:, overflowed], axis=(0, 2))
    dgamma = rstd * (sum_dy_xc - shift * dbeta)
    K = rstd * (1.0 if gamma is None else gamma.astype(np.float64))
    k_tile = _channel_tile(K, k, L, dt)
    if batch_stats:
        A = rstd * dgamma / n
        B = A * shift - dbeta / n
        a_tile, b_tile = _channel_tile(A, k, L, dt), _channel_tile(B, k, L, dt)
    work = _scratch(dx, (k, C, L), dt)
    for blk in blocks:
        m = blk.stop - blk.start
        o = dx[blk] if work is None else work[:m]
        if batch_stats:
            p = P[:m]
            np.multiply(xc[blk], a_tile[:m], out=p)
            np.subtract(dy[blk], p, out=o)
            np.add(o, b_tile[:m], out=o)
            np.multiply(o, k_tile[:m], out=o)
        else:
            np.multiply(dy[blk], k_tile[:m], out=o)
        _finish(o, dx[blk])
    if batch_stats:
        with np.errstate(invalid="ignore"):
            bad = np.flatnonzero((A != 0) & ~(np.abs(A) >= np.finfo(dt).tiny))
        if bad.size:                                   # A subnormal in x's dtype: these channels in float64
            x_hat = (xc[:, bad].astype(np.float64) - shift[bad, None]) * rstd[bad, None]
            dx[:, bad] = K[bad, None] * (dy[:, bad] - dbeta[bad, None] / n - x_hat * dgamma[bad, None] / n)
    return dx, dgamma, dbeta
