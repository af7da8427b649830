"""Practice: soft-capping, y = cap * tanh(x / cap), forward and backward, by hand in NumPy.

The task
--------
Fill in ``forward`` and ``backward`` (the TODOs) so that this layer matches normcore's
SoftCap(cap), the cap Gemma 2 puts on its attention scores and final logits. Its backward
gives dL/dx. Then:

    normcore practice check THIS_FILE.py

The formula, element by element, c the cap::

    y  = c * tanh(x / c)
    dx = ?    derive it: mind both places where c appears

The grader runs your layer next to normcore's SoftCap on ranks 2 and 3, float32, caps from 0.5
to 30, inputs far below the cap and far beyond it. Its backward gets a random upstream gradient.
When a check fails it names the well-known mistake that produces exactly your numbers. NumPy
only: do not import normcore or torch here.

A worked example (normcore's own SoftCap gives these numbers; once your layer is right,
``python -m doctest THIS_FILE.py`` passes):

    >>> cap = SoftCap(2.0)
    >>> x = np.array([[0.5, -1.0, 3.0], [6.0, 0.0, -4.0]])
    >>> np.round(cap.forward(x), 4).tolist()
    [[0.4898, -0.9242, 1.8103], [1.9901, 0.0, -1.9281]]
    >>> dy = np.array([[1.0, 0.5, -1.0], [0.5, -0.5, 2.0]])
    >>> np.round(cap.backward(dy), 4).tolist()
    [[0.94, 0.3932, -0.1807], [0.0049, -0.5, 0.1413]]
"""

import numpy as np


class SoftCap:
    """y = cap * tanh(x / cap), element by element, any shape.

    The contract the grader relies on (keep these names):

    - ``SoftCap(cap)``: cap a number > 0.
    - ``forward(x) -> y``: y has x's shape and dtype; |y| <= cap everywhere, y ~ x near 0.
    - ``backward(dy) -> dx``: dL/dx for the last forward, in dy's dtype.

    No parameters.
    """

    def __init__(self, cap):
        self.cap = cap

    def forward(self, x):
        # TODO: y = cap * tanh(x / cap), element by element.
        # TODO: cache what backward needs.
        raise NotImplementedError("TODO: SoftCap.forward")

    def backward(self, dy):
        # TODO: dx through the tanh and both places where the cap appears.
        raise NotImplementedError("TODO: SoftCap.backward")
