"""Practice: weight normalization of a Linear, forward and backward, by hand in NumPy.

The task
--------
Fill in ``forward`` and ``backward`` (the TODOs) so that this layer behaves exactly like
torch.nn.utils.parametrizations.weight_norm on a torch.nn.Linear with dim=0 (Salimans and
Kingma, 2016): the weight is learnt as a length g and a direction v,

    w = g * v / ||v||        one norm per output row: g (out, 1), v (out, in)
    y = x @ w.T + bias

and the backward sends dL/dw on to g and v. Then:

    normcore practice check THIS_FILE.py

The grader compares your numbers with normcore.WeightNorm(normcore.Linear(...)) on many
inputs (rank 2 and 3, float32, rows of v of very different lengths, one output, one sample)
and, when a check fails, names the well-known mistake that produces exactly your numbers.
NumPy only: do not import normcore or torch here.

A worked example, to 4 decimals (normcore's own layer gives these numbers; once your
layer works, ``python -m doctest THIS_FILE.py`` checks them):

    >>> wn = WeightNormLinear(3, 2)
    >>> wn.weight_g.data = np.array([[2.0], [-1.0]])
    >>> wn.weight_v.data = np.array([[3.0, 0.0, 4.0], [1.0, 2.0, 2.0]])
    >>> wn.bias.data = np.array([0.5, -0.5])
    >>> x = np.array([[1.0, -1.0, 2.0], [0.0, 3.0, 1.0], [2.0, 1.0, 0.0], [-1.0, 0.0, 1.0]])
    >>> np.round(wn.forward(x), 4).tolist()
    [[4.9, -1.5], [2.1, -3.1667], [2.9, -1.8333], [0.9, -0.8333]]
    >>> dy = np.array([[1.0, 0.0], [0.5, -1.0], [0.0, 2.0], [-1.0, 1.0]])
    >>> np.round(wn.backward(dy), 4).tolist()
    [[1.2, 0.0, 1.6], [0.9333, 0.6667, 1.4667], [-0.6667, -1.3333, -1.3333], [-1.5333, -0.6667, -2.2667]]
    >>> np.round(wn.weight_g.grad, 4).tolist()
    [[2.4], [0.3333]]
    >>> np.round(wn.bias.grad, 4).tolist()
    [0.5, 2.0]
    >>> np.round(wn.weight_v.grad, 4).tolist()
    [[0.224, 0.2, -0.168], [-0.963, 0.4074, 0.0741]]
"""

import numpy as np


class Parameter:
    """A learnable array ``data`` and its gradient ``grad`` (same shape)."""

    def __init__(self, data):
        self.data = data
        self.grad = np.zeros_like(data)


class WeightNormLinear:
    """A Linear y = x @ w.T + bias whose weight is w = g * v / ||v||, one norm per output row.

    The contract the grader relies on (keep these names):

    - ``forward(x) -> y``: x of shape (*, in_features); y (*, out_features) in x's dtype.
    - ``backward(dy) -> dx``: dL/dx for the last forward; *adds* (+=) dL/dg, dL/dv and
      dL/dbias to ``self.weight_g.grad``, ``self.weight_v.grad`` and ``self.bias.grad``
      (the caller zeroes them).
    - ``self.weight_g`` (out, 1), ``self.weight_v`` (out, in), ``self.bias`` (out,):
      Parameters, named as torch's weight_norm names them.
    - ``train()`` / ``eval()`` (the layer behaves the same in both).

    Both g and v reach w, and v reaches it twice: directly and through ||v||. If you are
    unsure what that does to dv, decide, and let the grader tell you.
    """

    def __init__(self, in_features, out_features, dtype=np.float64):
        self.in_features, self.out_features = in_features, out_features
        self.training = True
        rng = np.random.default_rng(0)
        w = rng.uniform(-1.0, 1.0, (out_features, in_features)) / np.sqrt(in_features)
        self.weight_g = Parameter(np.ones((out_features, 1), dtype))
        self.weight_v = Parameter(w.astype(dtype))
        self.bias = Parameter(np.zeros(out_features, dtype))

    def train(self, mode=True):
        self.training = mode
        return self

    def eval(self):
        return self.train(False)

    def forward(self, x):
        # TODO: w = g * v / ||v|| (one norm per output row), then y = x @ w.T + bias.
        # TODO: cache what backward needs.
        raise NotImplementedError("TODO: WeightNormLinear.forward")

    def backward(self, dy):
        # TODO: the Linear's backward: dw, dbias (accumulate with +=) and dx.
        # TODO: then dg and dv from dw (accumulate with +=).
        raise NotImplementedError("TODO: WeightNormLinear.backward")
