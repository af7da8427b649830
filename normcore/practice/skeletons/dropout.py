"""Practice: Dropout, forward and backward, by hand in NumPy.

The task
--------
Fill in ``forward`` and ``backward`` (the TODOs) so that this layer behaves like
torch.nn.Dropout, in training and in evaluation. Then:

    normcore practice check THIS_FILE.py

Your random mask cannot match anyone else's, so the grader measures what must hold whatever
the mask: the fraction of units dropped, the factor on the kept units, evaluation, p = 0 and
p = 1, float32, and that a seeded ``rng`` reproduces its mask. It checks that the backward
uses the forward's mask. When a check fails it names the well-known mistake that produces
exactly your numbers. NumPy only: do not import normcore or torch here.

A worked example (normcore's own Dropout gives these; a correct layer passes them
whatever its mask: ``python -m doctest THIS_FILE.py``):

    >>> drop = Dropout(0.25, rng=0)
    >>> x = np.array([[1.0, -2.0, 3.0, 0.5], [2.0, 1.0, -1.0, 4.0]])
    >>> y = drop.forward(x)
    >>> np.round(np.unique(y[y != 0] / x[y != 0]), 4).tolist()
    [1.3333]
    >>> bool(np.all((y == 0) | np.isclose(y, x / 0.75)))
    True
    >>> dx = drop.backward(np.ones_like(x))
    >>> bool(np.array_equal(dx == 0, y == 0))
    True
    >>> np.round(np.unique(dx[dx != 0]), 4).tolist()
    [1.3333]
    >>> _ = drop.eval()
    >>> np.round(drop.forward(x), 4).tolist()
    [[1.0, -2.0, 3.0, 0.5], [2.0, 1.0, -1.0, 4.0]]
"""

import numpy as np


class Dropout:
    """Dropout with drop probability p.

    The contract the grader relies on (keep these names):

    - ``forward(x) -> y``: y has x's shape and dtype.
    - ``backward(dy) -> dx``: dL/dx for the last forward.
    - ``self.training``: switched by ``train()`` / ``eval()``.
    - ``rng``: None, an int seed or a ``np.random.Generator``; draw every random number from
      ``self.rng``, so that two layers built with the same seed drop the same units.

    Semantics are PyTorch's: what p means, and when the scaling happens. If you are unsure,
    decide, and let the grader tell you.
    """

    def __init__(self, p=0.5, rng=None):
        if not 0.0 <= p <= 1.0:
            raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
        self.p = p
        self.rng = rng if isinstance(rng, np.random.Generator) else np.random.default_rng(rng)
        self.training = True

    def train(self, mode=True):
        self.training = mode
        return self

    def eval(self):
        return self.train(False)

    def forward(self, x):
        # TODO: training: draw a mask from self.rng, apply it (and any scaling); cache it.
        # TODO: evaluation: what does Dropout do at evaluation time?
        raise NotImplementedError("TODO: Dropout.forward")

    def backward(self, dy):
        # TODO: the gradient through the same mask (and scaling) as the last forward.
        raise NotImplementedError("TODO: Dropout.backward")
