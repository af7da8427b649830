"""Practice: Softmax along an axis, forward and backward, by hand in NumPy.

The task
--------
Fill in ``forward`` and ``backward`` (the TODOs) so that this layer matches
torch.nn.Softmax(dim=axis) on any shape. Its backward gives dL/dx. Then:

    normcore practice check THIS_FILE.py

The formula (sums along ``axis``)::

    y_i = exp(x_i) / sum_j exp(x_j)
    dx  = ?    derive it: y_i depends on every x_j of its slice

The grader runs your layer next to normcore's Softmax on ranks 1 to 3, every axis, float32
and logits around 1000. Its backward gets a random upstream gradient. When a check fails it
names the well-known mistake that produces exactly your numbers. NumPy only: do not import
normcore or torch here.

A worked example (normcore's own Softmax gives these numbers; once your layer is right,
``python -m doctest THIS_FILE.py`` passes):

    >>> x = np.array([[1.0, 2.0, 3.0], [0.5, 0.5, -1.0]])
    >>> sm = Softmax(axis=-1)
    >>> np.round(sm.forward(x), 4).tolist()
    [[0.09, 0.2447, 0.6652], [0.4498, 0.4498, 0.1004]]
    >>> dy = np.array([[1.0, 0.0, -1.0], [0.5, -2.0, 1.0]])
    >>> np.round(sm.backward(dy), 4).tolist()
    [[0.1418, 0.1408, -0.2826], [0.4833, -0.6413, 0.158]]
    >>> np.round(Softmax(axis=0).forward(x), 4).tolist()
    [[0.6225, 0.8176, 0.982], [0.3775, 0.1824, 0.018]]
    >>> np.round(Softmax().forward(np.array([1000.0, 1001.0])), 4).tolist()
    [0.2689, 0.7311]
"""

import numpy as np


class Softmax:
    """Softmax along ``axis`` (default the last); any input shape, no parameters.

    The contract the grader relies on (keep these names):

    - ``Softmax(axis=-1)``
    - ``forward(x) -> y``: y has x's shape and dtype; every slice along ``axis`` sums to 1.
    - ``backward(dy) -> dx``: dL/dx for the last forward, in dy's dtype.
    """

    def __init__(self, axis=-1):
        self.axis = axis

    def forward(self, x):
        # TODO: y = exp(x) / sum(exp(x)) along self.axis, safe for logits around 1000.
        # TODO: cache what backward needs.
        raise NotImplementedError("TODO: Softmax.forward")

    def backward(self, dy):
        # TODO: dx = dL/dx, through the whole Jacobian of the softmax, not only its diagonal.
        raise NotImplementedError("TODO: Softmax.backward")
