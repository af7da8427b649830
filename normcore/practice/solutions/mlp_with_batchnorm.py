"""A small MLP with BatchNorm and cross-entropy, every gradient by hand in NumPy: a reference answer.

Standalone (numpy only). Semantics as torch: nn.Linear(n_in, n_hidden), nn.BatchNorm1d(n_hidden)
in training mode (the batch's statistics, biased variance, eps=1e-5), nn.Tanh(),
nn.Linear(n_hidden, n_classes) and nn.CrossEntropyLoss() (the mean over the batch); the weights
laid out for ``x @ w`` (w1 is (n_in, n_hidden), torch's Linear weight transposed).

A name in brackets at the end of a line, such as ``[var]``, names that step for the catalog
of mistakes the grader recognises (``normcore practice list --mistakes``).
"""

import numpy as np


class Parameter:
    """A learnable array ``data`` and its gradient ``grad`` (same shape), accumulated with +=."""

    def __init__(self, data):
        self.data = data
        self.grad = np.zeros_like(data)


class MLPWithBatchNorm:
    """x -> Linear -> BatchNorm -> tanh -> Linear -> mean cross-entropy, forward and backward.

    Forward, x (N, D), integer targets y (N,); means over the batch axis 0, one per hidden unit::

        h      = x @ w1 + b1                             (N, H)
        mean   = mean_0(h)                               (1, H)
        var    = mean_0((h - mean)**2)                   (1, H)  biased: divide by N, not N - 1
                                                             (n - 1 is for running_var only)
        rstd   = 1 / sqrt(var + eps)                     (1, H)
        h_hat  = (h - mean) * rstd                       (N, H)
        hbn    = gamma * h_hat + beta                    (N, H)
        a      = tanh(hbn)                               (N, H)
        logits = a @ w2 + b2                             (N, C)
        logp   = log_softmax(logits)                     (N, C)  z - log(sum(exp(z))), z = logits - max
        loss   = -(1 / N) sum_n logp[n, y_n]             ()  the target's entry of each row, the
                                                             mean over the N rows: np.mean of
                                                             onehot * logp over the whole (N, C)
                                                             array divides by N * C instead

    Backward, node by node from the top, each gradient from the one above it (dloss is the
    upstream gradient of the loss, a scalar; p = softmax(logits) = exp(logp))::

        dlogits = dloss * (p - onehot(y)) / N      (N, C)  the fused log-softmax gradient; the
                                                           1 / N is the mean's, once, here
        dw2     = a.T @ dlogits                    (H, C)  logits = a @ w2: w2 meets a, tanh's
                                                           output (not its input hbn)
        db2     = sum_0(dlogits)                   (C,)    b2 is broadcast over the N rows, so
                                                           its gradient is the *sum* over them
                                                           (the 1 / N is already in dlogits)
        da      = dlogits @ w2.T                   (N, H)
        dhbn    = da * (1 - a**2)                  (N, H)  tanh'(u) = 1 - tanh(u)**2, taken from
                                                           the *output* a; 1 - hbn**2 (from the
                                                           input), or 1 - h**2, is not tanh's
                                                           derivative
        dgamma  = sum_0(dhbn * h_hat)              (H,)
        dbeta   = sum_0(dhbn)                      (H,)
        dh_hat  = dhbn * gamma                     (N, H)  gamma scales h_hat on the way up, so
                                                           it scales the gradient on the way down

    The BatchNorm backward. h_i reaches the loss through three paths: directly through
    h_hat_i, through the mean and through the variance (both depend on every h_j)::

        dvar  = sum_0(dh_hat * (h - mean)) * (-1/2) * rstd**3
        dmean = -rstd * sum_0(dh_hat)              (the var path adds -2 * mean_0(h - mean) = 0)
        dh    = dh_hat * rstd + dvar * 2 (h - mean) / N + dmean / N

    which, with (h - mean) = h_hat / rstd, is the compact form::

        dh      = rstd * (dh_hat - mean_0(dh_hat) - h_hat * mean_0(dh_hat * h_hat))   (N, H)

    dh sums to zero over the batch (the mean path) and is orthogonal to h_hat (the variance
    path); treating mean and var as constants leaves dh = rstd * dh_hat, which is wrong. The
    /N in the var path is the biased variance's: the forward normalises with the biased
    variance, so the backward differentiates that one. Then the first Linear::

        dw1     = x.T @ dh                         (D, H)
        db1     = sum_0(dh)                        (H,)    zero up to rounding: b1 shifts every
                                                           row of h alike, the mean takes the
                                                           shift away, so the loss does not
                                                           depend on b1 (BatchNorm's beta does
                                                           its job; nets leave b1 out)
        dx      = dh @ w1.T                        (N, D)

    Cache: x, h_hat, rstd, a, p, the targets. ``backward(dloss=1.0)`` returns dx in x's dtype
    and adds every parameter's gradient into its ``.grad``.
    """

    def __init__(self, n_in, n_hidden, n_classes, rng=0):
        rng = np.random.default_rng(rng)
        self.eps = 1e-5
        self.w1 = Parameter(rng.standard_normal((n_in, n_hidden)) / np.sqrt(n_in))
        self.b1 = Parameter(np.zeros(n_hidden))
        self.gamma = Parameter(np.ones(n_hidden))
        self.beta = Parameter(np.zeros(n_hidden))
        self.w2 = Parameter(rng.standard_normal((n_hidden, n_classes)) / np.sqrt(n_hidden))
        self.b2 = Parameter(np.zeros(n_classes))

    def forward(self, x, targets):
        n = x.shape[0]
        rows = np.arange(n)                                                  # (N,)
        h = x @ self.w1.data + self.b1.data                                  # (N, H)
        mean = h.mean(axis=0, keepdims=True)                                 # (1, H)
        var = ((h - mean) ** 2).mean(axis=0, keepdims=True)                  # (1, H) biased [var]
        rstd = 1.0 / np.sqrt(var + self.eps)                                 # (1, H)
        h_hat = (h - mean) * rstd                                            # (N, H)
        hbn = self.gamma.data * h_hat + self.beta.data                       # (N, H)
        a = np.tanh(hbn)                                                     # (N, H)
        logits = a @ self.w2.data + self.b2.data                             # (N, C)
        z = logits - logits.max(axis=1, keepdims=True)                       # (N, C), max 0 [shift]
        logp = z - np.log(np.exp(z).sum(axis=1, keepdims=True))              # (N, C)
        self.targets = np.asarray(targets)                                   # (N,)
        loss = -logp[rows, self.targets].mean()                              # () [loss]
        self.cache = (x, h_hat, rstd, a, np.exp(logp))
        return loss.astype(x.dtype)

    def backward(self, dloss=1.0):
        x, h_hat, rstd, a, p = self.cache
        n = x.shape[0]
        onehot = np.zeros_like(p)                                            # (N, C)
        onehot[np.arange(n), self.targets] = 1.0
        dlogits = dloss * (p - onehot) / n                                   # (N, C) [dlogits]
        self.w2.grad += a.T @ dlogits                                        # (H, C) [dw2]
        self.b2.grad += dlogits.sum(axis=0)                                  # (C,) [db2]
        da = dlogits @ self.w2.data.T                                        # (N, H)
        dhbn = da * (1.0 - a ** 2)                                           # (N, H) [dhbn]
        self.gamma.grad += (dhbn * h_hat).sum(axis=0)                        # (H,) [dgamma]
        self.beta.grad += dhbn.sum(axis=0)                                   # (H,) [dbeta]
        dh_hat = dhbn * self.gamma.data                                      # (N, H) [dh-hat]
        mean_dh_hat = dh_hat.mean(axis=0, keepdims=True)                     # (1, H)
        mean_dh_hat_h_hat = (dh_hat * h_hat).mean(axis=0, keepdims=True)     # (1, H)
        dh = rstd * (dh_hat - mean_dh_hat - h_hat * mean_dh_hat_h_hat)       # (N, H) [dh]
        self.w1.grad += x.T @ dh                                             # (D, H) [dw1]
        self.b1.grad += dh.sum(axis=0)                                       # (H,) zero up to rounding [db1]
        dx = dh @ self.w1.data.T                                             # (N, D)
        return dx.astype(x.dtype)
