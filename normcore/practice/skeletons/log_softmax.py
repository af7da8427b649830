"""Practice: LogSoftmax along an axis, forward and backward, by hand in NumPy.

The task
--------
Fill in ``forward`` and ``backward`` (the TODOs) so that this layer matches
torch.nn.LogSoftmax(dim=axis) on any shape. Its backward gives dL/dx. Then:

    normcore practice check THIS_FILE.py

The formula (sums along ``axis``)::

    logp_i = log(exp(x_i) / sum_j exp(x_j)) = x_i - log(sum_j exp(x_j))
    dx     = ?    derive it: logp_i depends on every x_j of its slice

The grader runs your layer next to normcore's LogSoftmax on ranks 1 to 3, every axis,
float32, logits around 1000, and a confidently wrong row (one logit 800 below the others,
whose log-probability is about -800, not -inf). Its backward gets a random upstream
gradient. When a check fails it names the well-known mistake that produces exactly your
numbers. NumPy only: do not import normcore or torch here.

A worked example (normcore's own LogSoftmax gives these numbers; once your layer is right,
``python -m doctest THIS_FILE.py`` passes):

    >>> x = np.array([[1.0, 2.0, 3.0], [0.5, 0.5, -1.0]])
    >>> ls = LogSoftmax(axis=-1)
    >>> np.round(ls.forward(x), 4).tolist()
    [[-2.4076, -1.4076, -0.4076], [-0.7989, -0.7989, -2.2989]]
    >>> dy = np.array([[1.0, 0.0, -1.0], [0.5, -2.0, 1.0]])
    >>> np.round(ls.backward(dy), 4).tolist()
    [[1.0, 0.0, -1.0], [0.7249, -1.7751, 1.0502]]
    >>> np.round(LogSoftmax(axis=0).forward(x), 4).tolist()
    [[-0.4741, -0.2014, -0.0181], [-0.9741, -1.7014, -4.0181]]
    >>> np.round(LogSoftmax().forward(np.array([-800.0, 0.0, 1.0])), 4).tolist()
    [-801.3133, -1.3133, -0.3133]
"""

import numpy as np


class LogSoftmax:
    """Log-softmax along ``axis`` (default the last); any input shape, no parameters.

    The contract the grader relies on (keep these names):

    - ``LogSoftmax(axis=-1)``
    - ``forward(x) -> logp``: logp has x's shape and dtype; along ``axis`` exp(logp) sums to 1.
    - ``backward(dy) -> dx``: dL/dx for the last forward, in dy's dtype.
    """

    def __init__(self, axis=-1):
        self.axis = axis

    def forward(self, x):
        # TODO: logp = log(softmax(x)) along self.axis, finite for logits around 1000 and for
        #       a probability that underflows to 0.
        # TODO: cache what backward needs.
        raise NotImplementedError("TODO: LogSoftmax.forward")

    def backward(self, dy):
        # TODO: dx = dL/dx, through every path from x to logp (the log of the sum too).
        raise NotImplementedError("TODO: LogSoftmax.backward")
