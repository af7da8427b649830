"""Practice: cross-entropy on logits, forward and backward, by hand in NumPy.

The task
--------
Fill in ``forward`` and ``backward`` (the TODOs) so that this loss matches
torch.nn.CrossEntropyLoss() with its defaults. Its backward gives dL/dlogits. Then:

    normcore practice check THIS_FILE.py

The formula: logits x of shape (N, C) (the classes on axis 1), integer targets y of shape
(N,), the mean over the N samples::

    p[n]    = softmax(x[n])              over the C classes
    loss    = -(1 / N) * sum_n log p[n, y_n]
    dlogits = ?                          derive it; for this loss it is short

The grader runs your loss next to normcore's CrossEntropyLoss on several shapes, float32,
logits around 1000 and confident wrong predictions (the target's logit 800 below the
others). Its backward gets a random upstream gradient (``backward(dloss)`` with dloss not
1). When a check fails it names the well-known mistake that produces exactly your numbers.
NumPy only: do not import normcore or torch here.

A worked example (normcore's own CrossEntropyLoss gives these numbers; once your loss is
right, ``python -m doctest THIS_FILE.py`` passes):

    >>> logits = np.array([[2.0, 0.5, -1.0], [0.0, 1.0, 3.0]])
    >>> targets = np.array([0, 1])
    >>> ce = CrossEntropyLoss()
    >>> round(float(ce.forward(logits, targets)), 4)
    1.2056
    >>> np.round(ce.backward(2.0), 4).tolist()
    [[-0.2144, 0.1753, 0.0391], [0.042, -0.8858, 0.8438]]
    >>> ce = CrossEntropyLoss()
    >>> round(float(ce.forward(np.array([[1000.0, 0.0]]), np.array([1]))), 4)
    1000.0
    >>> np.round(ce.backward(), 4).tolist()
    [[1.0, -1.0]]
"""

import numpy as np


class CrossEntropyLoss:
    """Cross-entropy between logits (N, C) and integer targets (N,), averaged over N.

    The contract the grader relies on (keep these names):

    - ``CrossEntropyLoss()``
    - ``forward(logits, targets) -> loss``: a scalar in the logits' dtype.
    - ``backward(dloss=1.0) -> dlogits``: dL/dlogits for the last forward, where L is dloss
      times the loss; the logits' shape and dtype.
    """

    def forward(self, logits, targets):
        # TODO: the mean over the rows of -log softmax(logits)[target]; finite for logits
        # around 1000 and when the target's probability is below 1e-300.
        # TODO: cache what backward needs.
        raise NotImplementedError("TODO: CrossEntropyLoss.forward")

    def backward(self, dloss=1.0):
        # TODO: dlogits = dL/dlogits, finite wherever the loss is.
        raise NotImplementedError("TODO: CrossEntropyLoss.backward")
