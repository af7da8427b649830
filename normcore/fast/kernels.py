"""The fast tier's kernels: the reference tier's formulas, blocked and in place.

Each kernel computes exactly what a reference norm computes (``normcore/norms``), on arrays
laid out so that the reduction axes are contiguous:

    rows        (S, G, n)   G rows of n values per sample, each row standardised on its own
                            LayerNorm (G = 1), GroupNorm (G groups), InstanceNorm (G = C);
                            gamma and beta are a (G, n) *pattern* repeated for every sample
    rms rows    (S, 1, n)   RMSNorm
    channels    (N, C, L)   BatchNorm (and InstanceNorm in evaluation): one statistic per
                            channel, over the N samples and the L positions

Speed comes from four things, none of which changes a formula:

* **blocks**: every array is processed a block of about ``BLOCK_BYTES`` at a time (whole
  samples), so the five to ten NumPy passes a formula needs hit the CPU cache instead of
  main memory; each block is read from memory once and written once;
* **in place**: every elementwise step writes into a preallocated block (``out=``), so no
  temporaries are created; per-column vectors (gamma, beta, per-channel constants) are tiled
  once to a block's shape, which makes their products plain elementwise passes;
* **BLAS reductions**: row sums are matrix-vector products with a ones vector (or gamma),
  row sums of products are ``np.vecdot``, column sums are ``ones @ block``;
* **BatchNorm's backward with gamma folded in**: the sums dgamma and dbeta are the sums the
  input gradient needs, so it makes two passes over the data, not four.

Accuracy (float32 as good as PyTorch's or better, also far from zero):

* a mean is taken in two steps, m1 = sum(x) / n in the compute dtype, then the correction
  m2 = sum(x - m1) / n of the (small) centred values, so ``x - mean`` is as accurate as if
  the mean had been summed exactly; a constant row gives x - mean = 0 exactly, so y = beta;
* the variance is the mean square of the centred values (never E[x**2] - E[x]**2 of x);
* float32 sums of squares add partial sums of at most ``CHUNK`` values in float64, and
  column sums add each block's partial sums in float64 (the error grows like the block, not
  the batch);
* a row or channel whose float32 sum of squares overflows (|x| ~ 1e20) or underflows is
  recomputed in float64, as the reference tier computes every statistic.

Arguments are C-contiguous arrays in the compute dtype (float32 or float64), which the
classes in ``normcore.fast.norms`` make sure of; outputs are fresh C-contiguous arrays, so
every ``reshape`` of them below is a view (``_view`` checks it), and inputs are only read.
"""

import numpy as np

BLOCK_BYTES = 2 ** 18  # about a quarter of a MiB: a block and its scratch stay in the L2 cache
CHUNK = 256  # float32 partial sums of squares run over at most this many values
SUM_ROWS = 128  # column sums add at most this many rows in the compute dtype


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


def _tile(pattern, reps):
    """``pattern`` repeated ``reps`` times along a new first axis, as its own contiguous array.

    Multiplying a block by a tile is a plain elementwise pass; multiplying it by a broadcast
    vector makes NumPy run one short inner loop per row, which is markedly slower."""
    return np.ascontiguousarray(np.broadcast_to(pattern, (reps,) + pattern.shape))


def _row_dots(a, b):
    """sum_j a[i, j] * b[i, j] per row of the 2-D blocks a and b, in float64.

    In float32, partial sums of at most CHUNK values are added in float64: the rounding error
    of a long float32 dot product grows with its length, and the variance must not carry it."""
    rows, n = a.shape
    if a.dtype == np.float64 or n <= CHUNK:
        return np.vecdot(a, b).astype(np.float64)
    total = np.zeros(rows)
    for j in range(0, n, CHUNK):
        total += np.vecdot(a[:, j:j + CHUNK], b[:, j:j + CHUNK])
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


def _needs_float64(var, eps, dtype):
    """Which variances (or mean squares) computed in ``dtype`` cannot be trusted: the sum of
    squares overflowed (inf or NaN; |x| ~ 1e20 in float32), or var + eps is so small that
    squares below the normal range (underflow) matter. float64 is the reference tier's own
    precision: there is nothing better to recompute in."""
    if dtype == np.float64:
        return np.zeros(var.shape, bool)
    tiny = float(np.finfo(dtype).tiny) * 2 ** 24
    with np.errstate(invalid="ignore"):
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
def standardize_rows(x, eps, gamma=None, beta=None, out_dtype=None):
    """The forward of LayerNorm over rows: x (S, G, n) -> y, x_hat, rstd, mean, var.

        mean = mean_n(x),  var = mean_n((x - mean)**2),  rstd = 1 / sqrt(var + eps)
        x_hat = (x - mean) * rstd,  y = x_hat * gamma + beta

    gamma, beta: (G, n) patterns (or None), the same for every sample. y is (S, G, n) in
    ``out_dtype`` (default x's), x_hat (S, G, n) and rstd (S, G) in x's dtype, mean and var
    (S, G) in float64. Per block of rows, with t the block of x_hat::

        m1 = (x @ 1) / n                  the mean, rounded
        t  = x - m1                       centred, up to the rounding of m1
        m2 = (t @ 1) / n                  that rounding, measured on the small centred values
        t -= m2                           x - mean, accurately (a constant row gives 0)
        var = row_dots(t, t) / n          float64 partial sums
        t *= rstd                         x_hat
    """
    S, G, n = x.shape
    dt = x.dtype
    y = np.empty(x.shape, out_dtype or dt)
    x_hat = np.empty(x.shape, dt)
    rstd = np.empty(S * G, dt)
    mean, var = np.zeros(S * G), np.zeros(S * G)
    if x.size == 0:
        with np.errstate(divide="ignore"):
            rstd[...] = 1.0 / np.sqrt(eps)
        return y, x_hat, rstd.reshape(S, G), mean.reshape(S, G), var.reshape(S, G)
    k = min(S, _block_len(G * n, dt.itemsize))            # samples per block
    X, T = _view(x, (S * G, n)), _view(x_hat, (S * G, n))
    ones = np.ones(n, dt)
    g_tile = None if gamma is None else _view(_tile(gamma, k), (k * G, n))
    b_tile = None if beta is None else _view(_tile(beta, k), (k * G, n))
    Y, work = _view(y, (S * G, n)), _scratch(y, (k * G, n), dt)
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        for blk in _blocks(S * G, k * G):
            rows, t = X[blk], T[blk]                       # (k G, n)
            m1 = (rows @ ones) / n                         # (k G,)
            np.subtract(rows, m1[:, None], out=t)
            m2 = (t @ ones) / n                            # (k G,)
            np.subtract(t, m2[:, None], out=t)
            v = _row_dots(t, t) / n                        # (k G,)  float64
            r = 1.0 / np.sqrt(v + eps)                     # (k G,)  float64
            np.multiply(t, r.astype(dt)[:, None], out=t)   # x_hat
            m = m1 + m2.astype(np.float64)
            bad = _needs_float64(v, eps, dt)
            if bad.any():                                  # |x| ~ 1e20 and the like
                m[bad], v[bad], r[bad], t[bad] = _standardize_float64(rows[bad], eps)
            mean[blk], var[blk], rstd[blk] = m, v, r
            _affine(t, g_tile, b_tile, Y[blk], work)
    return y, x_hat, rstd.reshape(S, G), mean.reshape(S, G), var.reshape(S, G)


def _standardize_float64(rows, eps):
    """The reference tier's arithmetic for a few rows, in float64: (mean, var, rstd, x_hat)."""
    r64 = rows.astype(np.float64)
    mean = r64.mean(axis=1)
    d = r64 - mean[:, None]
    var = np.mean(d * d, axis=1)
    with np.errstate(divide="ignore"):
        rstd = 1.0 / np.sqrt(var + eps)
    return mean, var, rstd, d * rstd[:, None]


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


def standardize_rows_backward(dy, x_hat, rstd, gamma=None, out_dtype=None):
    """The backward of ``standardize_rows``: (dx, dgamma, dbeta).

        dgamma = sum_S(dy * x_hat),  dbeta = sum_S(dy)                     (G, n), float64
        dx_hat = dy * gamma
        dx = rstd * (dx_hat - mean_n(dx_hat) - x_hat * mean_n(dx_hat * x_hat))

    The two row means are dot products with gamma, mean_n(dy * gamma) and
    mean_n((dy * x_hat) * gamma), so dx_hat is only formed in the last step::

        P  = dy * x_hat                                  (scratch; its column sums are dgamma)
        a  = rstd * (dy @ gamma) / n,   c = rstd * (P @ gamma) / n     per row
        dx = (dy * gamma) * rstd - (x_hat * c + a)
    """
    S, G, n = x_hat.shape
    dt = x_hat.dtype
    dx = np.empty(x_hat.shape, out_dtype or dt)
    dgamma, dbeta = np.zeros(G * n), np.zeros(G * n)
    if x_hat.size == 0:
        return dx, dgamma.reshape(G, n), dbeta.reshape(G, n)
    k = min(S, _block_len(G * n, dt.itemsize))            # samples per block
    D, XH, DX = (_view(a, (S * G, n)) for a in (dy, x_hat, dx))
    R = _view(rstd, (S * G,))
    ones_n = np.ones(n, dt)
    g_tile = None if gamma is None else _view(_tile(gamma, k), (k * G, n))
    P = np.empty((k * G, n), dt)
    work = _scratch(dx, (k * G, n), dt)
    for blk in _blocks(S * G, k * G):
        d, xh, r = D[blk], XH[blk], R[blk]
        m = len(d)
        p = P[:m]
        np.multiply(d, xh, out=p)                          # dy * x_hat
        _column_sums(_view(p, (m // G, G * n)), dgamma)
        _column_sums(_view(d, (m // G, G * n)), dbeta)
        if gamma is None:
            a, c = d @ ones_n, p @ ones_n                  # (k G,)
        elif G == 1:
            a, c = d @ gamma[0], p @ gamma[0]
        else:
            a, c = np.vecdot(d, g_tile[:m]), np.vecdot(p, g_tile[:m])
        a *= r / n                                         # rstd * mean_n(dx_hat)
        c *= r / n                                         # rstd * mean_n(dx_hat * x_hat)
        o = DX[blk] if work is None else work[:m]
        if gamma is None:
            np.multiply(d, r[:, None], out=o)
        else:
            np.multiply(d, g_tile[:m], out=o)
            np.multiply(o, r[:, None], out=o)
        np.multiply(xh, c[:, None], out=p)
        np.add(p, a[:, None], out=p)
        np.subtract(o, p, out=o)
        _finish(o, DX[blk])
    return dx, dgamma.reshape(G, n), dbeta.reshape(G, n)


# --- RMSNorm ------------------------------------------------------------------------------------
def rms_rows(x, eps, gamma=None, out_dtype=None):
    """The forward of RMSNorm over rows: x (S, 1, n) -> y, x_hat, rrms (S, 1).

        rrms = 1 / sqrt(mean_n(x**2) + eps),  x_hat = x * rrms,  y = x_hat * gamma
    """
    S, G, n = x.shape
    dt = x.dtype
    y = np.empty(x.shape, out_dtype or dt)
    x_hat = np.empty(x.shape, dt)
    rrms = np.empty(S * G, dt)
    if x.size == 0:
        return y, x_hat, rrms.reshape(S, G)
    k = min(S, _block_len(G * n, dt.itemsize))
    X, XH, Y = (_view(a, (S * G, n)) for a in (x, x_hat, y))
    g_tile = None if gamma is None else _view(_tile(gamma, k), (k * G, n))
    work = _scratch(y, (k * G, n), dt)
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        for blk in _blocks(S * G, k * G):
            rows, xh = X[blk], XH[blk]
            ms = _row_dots(rows, rows) / n                 # (k G,)  float64
            r = 1.0 / np.sqrt(ms + eps)
            np.multiply(rows, r.astype(dt)[:, None], out=xh)
            bad = _needs_float64(ms, eps, dt)
            if bad.any():                                  # x**2 overflows float32
                r64 = rows[bad].astype(np.float64)
                r[bad] = 1.0 / np.sqrt(np.mean(r64 * r64, axis=1) + eps)
                xh[bad] = r64 * r[bad][:, None]
            rrms[blk] = r
            _affine(xh, g_tile, None, Y[blk], work)
    return y, x_hat, rrms.reshape(S, G)


def rms_rows_backward(dy, x_hat, rrms, gamma=None, out_dtype=None):
    """The backward of ``rms_rows``: (dx, dgamma), dgamma (1, n) in float64.

        dx = rrms * (dx_hat - x_hat * mean_n(dx_hat * x_hat)),   dx_hat = dy * gamma
    """
    S, G, n = x_hat.shape
    dt = x_hat.dtype
    dx = np.empty(x_hat.shape, out_dtype or dt)
    dgamma = np.zeros(G * n)
    if x_hat.size == 0:
        return dx, dgamma.reshape(G, n)
    k = min(S, _block_len(G * n, dt.itemsize))
    D, XH, DX = (_view(a, (S * G, n)) for a in (dy, x_hat, dx))
    R = _view(rrms, (S * G,))
    w = np.ones(n, dt) if gamma is None else gamma[0]
    g_tile = None if gamma is None else _view(_tile(gamma, k), (k * G, n))
    P = np.empty((k * G, n), dt)
    work = _scratch(dx, (k * G, n), dt)
    for blk in _blocks(S * G, k * G):
        d, xh, r = D[blk], XH[blk], R[blk]
        m = len(d)
        p = P[:m]
        np.multiply(d, xh, out=p)
        _column_sums(_view(p, (m // G, G * n)), dgamma)
        c = (p @ w) * (r / n)                              # rrms * mean_n(dx_hat * x_hat)
        o = DX[blk] if work is None else work[:m]
        if gamma is None:
            np.multiply(d, r[:, None], out=o)
        else:
            np.multiply(d, g_tile[:m], out=o)
            np.multiply(o, r[:, None], out=o)
        np.multiply(xh, c[:, None], out=p)
        np.subtract(o, p, out=o)
        _finish(o, DX[blk])
    return dx, dgamma.reshape(G, n)


# --- BatchNorm (and InstanceNorm in evaluation): one statistic per channel ------------------------
def _per_channel(acc, C):
    """(C L,) float64 per-position sums -> (C,) per-channel sums."""
    return acc.reshape(C, -1).sum(axis=1)


def _channel_tile(v, k, L, dtype):
    """A per-channel vector (C,) tiled to a block's shape (k, C, L), in ``dtype``."""
    v = np.asarray(v).astype(dtype)
    return np.ascontiguousarray(np.broadcast_to(v[:, None], (k, len(v), L)))


def standardize_channels(x, eps, gamma=None, beta=None, out_dtype=None):
    """BatchNorm's forward with the batch's statistics: x (N, C, L) -> (y, x_hat, rstd, mean,
    var); rstd (C,) in x's dtype, mean and var (C,) in float64.

    Two passes over x, plus one block::

        p = the mean of the first block, per channel, rounded to x's dtype   (a pivot)
        pass 1:  t = x - p (into x_hat);   s = sum(t),  q = sum(t * t)       per channel
                 shift = s / n,  mean = p + shift,  var = q / n - shift**2
        pass 2:  x_hat = t * rstd - shift * rstd;   y = x_hat * gamma + beta

    ``q / n - shift**2`` is the one-pass variance of the *shifted* values t, safe while
    shift**2 is small against var (here: at most var / 16), since the pivot is near the mean.
    When it is not (the first block was not typical of the batch, or a channel is constant),
    one more pass centres t on the mean and measures q again, so the variance is never the
    difference of two large numbers.
    """
    N, C, L = x.shape
    dt = x.dtype
    n = N * L
    y = np.empty(x.shape, out_dtype or dt)
    x_hat = np.empty(x.shape, dt)
    if n == 0:
        with np.errstate(divide="ignore"):
            rstd = np.full(C, 1.0 / np.sqrt(eps), dt)
        return y, x_hat, rstd, np.zeros(C), np.zeros(C)
    k = min(N, _block_len(C * L, dt.itemsize))
    blocks = _blocks(N, k)
    scratch = np.empty((k, C, L), dt)

    def shift_and_sum(src, sub):
        """t = src - sub per block, into x_hat; returns the per-channel sums of t and t * t."""
        s, q = np.zeros(C * L), np.zeros(C * L)
        for blk in blocks:
            t = x_hat[blk]
            np.subtract(src[blk], sub[:len(t)], out=t)
            _column_sums(_view(t, (len(t), -1)), s)
            _column_sums(_view(np.multiply(t, t, out=scratch[:len(t)]), (len(t), -1)), q)
        return _per_channel(s, C), _per_channel(q, C)

    first = np.zeros(C * L)
    _column_sums(_view(x[blocks[0]], (k, -1)), first)
    pivot = (_per_channel(first, C) / (k * L)).astype(dt).astype(np.float64)
    with np.errstate(over="ignore", invalid="ignore"):
        s, q = shift_and_sum(x, _channel_tile(pivot, k, L, dt))
        shift = s / n
        var = q / n - shift ** 2
        if not np.all(shift ** 2 <= var / 16):         # one more pass: centre t on the mean
            sub = shift.astype(dt)
            pivot = pivot + sub
            s, q = shift_and_sum(x_hat, _channel_tile(sub, k, L, dt))
            shift = s / n
            var = q / n - shift ** 2
    mean = pivot + shift
    var = np.maximum(var, 0.0)
    with np.errstate(divide="ignore"):
        rstd = 1.0 / np.sqrt(var + eps)
    bad = _needs_float64(var, eps, dt)
    if bad.any():                                      # x**2 overflowed: these channels in float64
        xb = x[:, bad].astype(np.float64)
        mean[bad] = xb.mean(axis=(0, 2))
        d = xb - mean[bad][:, None]
        var[bad] = np.mean(d * d, axis=(0, 2))
        with np.errstate(divide="ignore"):
            rstd[bad] = 1.0 / np.sqrt(var[bad] + eps)
        shift[bad] = 0
    scale = _channel_tile(rstd, k, L, dt)
    offset = _channel_tile(-shift * rstd, k, L, dt)
    g_tile = None if gamma is None else _channel_tile(gamma, k, L, dt)
    b_tile = None if beta is None else _channel_tile(beta, k, L, dt)
    work = _scratch(y, (k, C, L), dt)
    for blk in blocks:
        t = x_hat[blk]
        np.multiply(t, scale[:len(t)], out=t)
        np.add(t, offset[:len(t)], out=t)
        if bad.any():
            t[:, bad] = (x[blk][:, bad] - mean[bad][:, None]) * rstd[bad][:, None]
        _affine(t, g_tile, b_tile, y[blk], work)
    return y, x_hat, rstd.astype(dt), mean, var


def normalize_channels(x, mean, rstd, gamma=None, beta=None, out_dtype=None):
    """BatchNorm's forward with given statistics (the running ones, in evaluation):
    x_hat = (x - mean) * rstd per channel, y = x_hat * gamma + beta; x (N, C, L), mean and
    rstd (C,) in float64. Returns (y, x_hat).

    mean is split into its value in x's dtype and the rest, mean = hi + lo, so that a float64
    running mean is not rounded to float32 first: x_hat = (x - hi) * rstd - lo * rstd.
    """
    N, C, L = x.shape
    dt = x.dtype
    y = np.empty(x.shape, out_dtype or dt)
    x_hat = np.empty(x.shape, dt)
    if x.size == 0:
        return y, x_hat
    k = min(N, _block_len(C * L, dt.itemsize))
    hi = mean.astype(dt)
    lo = (mean - hi) * rstd
    hi_tile, scale = _channel_tile(hi, k, L, dt), _channel_tile(rstd, k, L, dt)
    lo_tile = _channel_tile(lo, k, L, dt) if np.any(lo) else None
    g_tile = None if gamma is None else _channel_tile(gamma, k, L, dt)
    b_tile = None if beta is None else _channel_tile(beta, k, L, dt)
    work = _scratch(y, (k, C, L), dt)
    for blk in _blocks(N, k):
        t = x_hat[blk]
        np.subtract(x[blk], hi_tile[:len(t)], out=t)
        np.multiply(t, scale[:len(t)], out=t)
        if lo_tile is not None:
            np.subtract(t, lo_tile[:len(t)], out=t)
        _affine(t, g_tile, b_tile, y[blk], work)
    return y, x_hat


def standardize_channels_backward(dy, x_hat, rstd, gamma=None, batch_stats=True, out_dtype=None):
    """BatchNorm's backward: (dx, dgamma, dbeta), the sums (C,) in float64.

        dgamma = sum(dy * x_hat),  dbeta = sum(dy)         per channel, over N and L
        batch statistics:  dx = gamma * rstd * (dy - dbeta / n - x_hat * dgamma / n)
        given statistics:  dx = gamma * rstd * dy

    The first line is the reference's backward with gamma folded in: gamma and rstd are
    constant over the axes the statistics run over, so mean(dx_hat) = gamma * dbeta / n and
    mean(dx_hat * x_hat) = gamma * dgamma / n. One pass for the two sums, one for dx.
    """
    N, C, L = x_hat.shape
    dt = x_hat.dtype
    n = N * L
    dx = np.empty(x_hat.shape, out_dtype or dt)
    if n == 0:
        return dx, np.zeros(C), np.zeros(C)
    k = min(N, _block_len(C * L, dt.itemsize))
    blocks = _blocks(N, k)
    P = np.empty((k, C, L), dt)
    dg, db = np.zeros(C * L), np.zeros(C * L)
    for blk in blocks:
        d = dy[blk]
        _column_sums(_view(np.multiply(d, x_hat[blk], out=P[:len(d)]), (len(d), -1)), dg)
        _column_sums(_view(d, (len(d), -1)), db)
    dgamma, dbeta = _per_channel(dg, C), _per_channel(db, C)
    K = rstd.astype(np.float64) * (1.0 if gamma is None else gamma.astype(np.float64))
    k_tile = _channel_tile(K, k, L, dt)
    if batch_stats:
        a_tile = _channel_tile(K * dgamma / n, k, L, dt)
        b_tile = _channel_tile(K * dbeta / n, k, L, dt)
    work = _scratch(dx, (k, C, L), dt)
    for blk in blocks:
        m = blk.stop - blk.start
        o = dx[blk] if work is None else work[:m]
        np.multiply(dy[blk], k_tile[:m], out=o)
        if batch_stats:
            p = P[:m]
            np.multiply(x_hat[blk], a_tile[:m], out=p)
            np.add(p, b_tile[:m], out=p)
            np.subtract(o, p, out=o)
        _finish(o, dx[blk])
    return dx, dgamma, dbeta
