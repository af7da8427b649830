"""Practice: cross-entropy with the z-loss, forward and backward, by hand in NumPy.

The task
--------
Fill in ``forward`` and ``backward`` (the TODOs) so that this loss matches normcore's
CrossEntropyLoss(z_loss=z_loss): the cross-entropy plus PaLM's z-loss, which keeps the
softmax's normaliser log Z near 0. Its backward gives dL/dlogits. Then:

    normcore practice check THIS_FILE.py

The formula: logits x of shape (N, C) (the classes on axis 1), integer targets y of shape
(N,), z = z_loss, the mean over the N samples::

    lse[n]  = log(sum_c exp(x[n, c]))    log Z of row n
    p[n]    = softmax(x[n])
    loss    = (1 / N) * sum_n (-log p[n, y_n] + z * lse[n]**2)
    dlogits = ?                          derive it: what is d lse / d x?

The grader runs your loss next to normcore's on several shapes and values of z_loss,
float32, logits around 1000 and confident wrong predictions (the target's logit 800 below
the others). Its backward gets a random upstream gradient (``backward(dloss)`` with dloss
not 1). When a check fails it names the well-known mistake that produces exactly your
numbers. NumPy only: do not import normcore or torch here.

A worked example (normcore's own CrossEntropyLoss(z_loss=...) gives these numbers; once your
loss is right, ``python -m doctest THIS_FILE.py`` passes):

    >>> logits = np.array([[2.0, 0.5, -1.0], [0.0, 1.0, 3.0]])
    >>> targets = np.array([0, 1])
    >>> loss = ZLossCrossEntropy(0.1)
    >>> round(float(loss.forward(logits, targets)), 4)
    1.9591
    >>> np.round(loss.backward(2.0), 4).tolist()
    [[0.1378, 0.2539, 0.0566], [0.0686, -0.8134, 1.3787]]
    >>> loss = ZLossCrossEntropy(1e-4)
    >>> round(float(loss.forward(np.array([[1000.0, 0.0]]), np.array([1]))), 4)
    1100.0
    >>> np.round(loss.backward(), 4).tolist()
    [[1.2, -1.0]]
"""

import numpy as np


class ZLossCrossEntropy:
    """Cross-entropy plus z_loss * lse**2 between logits (N, C) and integer targets (N,),
    averaged over N.

    The contract the grader relies on (keep these names):

    - ``ZLossCrossEntropy(z_loss)``: z_loss a number >= 0.
    - ``forward(logits, targets) -> loss``: a scalar in the logits' dtype.
    - ``backward(dloss=1.0) -> dlogits``: dL/dlogits for the last forward, where L is dloss
      times the loss; the logits' shape and dtype.
    """

    def __init__(self, z_loss=1e-4):
        self.z_loss = z_loss

    def forward(self, logits, targets):
        # TODO: the mean over the rows of -log softmax(logits)[target] + z_loss * lse**2;
        # finite for logits around 1000.
        # TODO: cache what backward needs.
        raise NotImplementedError("TODO: ZLossCrossEntropy.forward")

    def backward(self, dloss=1.0):
        # TODO: dlogits = dL/dlogits: the cross-entropy's share and the z-loss's.
        raise NotImplementedError("TODO: ZLossCrossEntropy.backward")
