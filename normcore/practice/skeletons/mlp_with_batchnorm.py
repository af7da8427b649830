"""Practice: a small MLP with BatchNorm and cross-entropy, every gradient by hand in NumPy.

The task
--------
Fill in ``forward`` and ``backward`` (the TODOs) so that this network matches torch's
nn.Linear -> nn.BatchNorm1d (training mode) -> nn.Tanh -> nn.Linear -> nn.CrossEntropyLoss()
with their defaults. Its backward gives dL/dx and every parameter's gradient, without
autograd: the "backprop ninja" exercise. Then:

    normcore practice check THIS_FILE.py

The formulas: x of shape (N, D), integer targets y of shape (N,), H hidden units, C classes;
means over the batch axis 0, one per hidden unit::

    h      = x @ w1 + b1                                   (N, H)
    mean   = mean_0(h),   var = mean_0((h - mean)**2)      (1, H)  biased: divide by N
    h_hat  = (h - mean) / sqrt(var + eps)                  eps = 1e-5
    hbn    = gamma * h_hat + beta
    a      = tanh(hbn)
    logits = a @ w2 + b2                                   (N, C)
    loss   = -(1 / N) sum_n log softmax(logits[n])[y_n]    ()

    backward: dlogits, dw2, db2, da, dhbn, dgamma, dbeta, dh, dw1, db1, dx = ?
              derive them node by node, from the loss down to x

The grader runs your network next to normcore's own layers (Linear, BatchNorm1d, Tanh,
Linear, CrossEntropyLoss) with random parameters, a batch of 8 and a batch of 2, and
float32. It runs the backward on a random upstream gradient (``backward(dloss)`` with dloss
not 1), twice in a row. When a check fails it names the well-known mistake that produces
exactly your numbers. NumPy only: do not import normcore or torch here.

A worked example (normcore's own layers give these numbers; once your network is right,
``python -m doctest THIS_FILE.py`` passes):

    >>> mlp = MLPWithBatchNorm(2, 3, 2)
    >>> mlp.w1.data = np.array([[1.0, -0.5, 0.3], [0.2, 0.8, -1.0]])
    >>> mlp.b1.data = np.array([0.1, 0.0, -0.2])
    >>> mlp.gamma.data = np.array([1.5, 0.5, 1.0])
    >>> mlp.beta.data = np.array([0.0, 0.3, -0.1])
    >>> mlp.w2.data = np.array([[1.0, -1.0], [0.5, 0.2], [-0.3, 0.7]])
    >>> mlp.b2.data = np.array([0.1, -0.1])
    >>> x = np.array([[1.0, 2.0], [-1.0, 0.5], [0.0, -1.5], [2.0, 1.0]])
    >>> round(float(mlp.forward(x, np.array([0, 1, 1, 0]))), 4)
    0.1356
    >>> np.round(mlp.backward(2.0), 4).tolist()
    [[-0.014, -0.0324], [-0.0314, 0.082], [0.0103, 0.0057], [0.0351, -0.0553]]
    >>> np.round(mlp.w2.grad, 4).tolist()
    [[-0.221, 0.221], [0.0361, -0.0361], [0.0115, -0.0115]]
    >>> np.round(mlp.gamma.grad, 4).tolist()
    [-0.0811, 0.0047, 0.0157]
    >>> np.round(mlp.w1.grad, 4).tolist()
    [[0.0106, -0.0346, 0.1994], [-0.0528, -0.0216, 0.0598]]
"""

import numpy as np


class Parameter:
    """A learnable array ``data`` and its gradient ``grad`` (same shape), accumulated with +=."""

    def __init__(self, data):
        self.data = data
        self.grad = np.zeros_like(data)


class MLPWithBatchNorm:
    """x -> Linear -> BatchNorm -> tanh -> Linear -> mean cross-entropy.

    The contract the grader relies on (keep these names):

    - ``MLPWithBatchNorm(n_in, n_hidden, n_classes)``
    - ``w1`` (n_in, n_hidden), ``b1`` (n_hidden,), ``gamma`` and ``beta`` (n_hidden,), ``w2``
      (n_hidden, n_classes), ``b2`` (n_classes,): objects with ``.data`` and ``.grad``; the
      weights are laid out for ``x @ w`` (torch's Linear weight transposed).
    - ``forward(x, targets) -> loss``: a scalar in x's dtype; BatchNorm in training mode (the
      batch's statistics; no running statistics needed).
    - ``backward(dloss=1.0) -> dx``: dL/dx for the last forward, where L is dloss times the
      loss, in x's shape and dtype; it *adds* each parameter's gradient into its ``.grad``.
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
        # TODO: h, BatchNorm over the batch axis, tanh, logits, the mean cross-entropy (finite
        # for large logits).
        # TODO: cache what backward needs.
        raise NotImplementedError("TODO: MLPWithBatchNorm.forward")

    def backward(self, dloss=1.0):
        # TODO: every gradient, node by node from the loss down: add the parameters' into
        # their .grad (+=), return dx.
        raise NotImplementedError("TODO: MLPWithBatchNorm.backward")
