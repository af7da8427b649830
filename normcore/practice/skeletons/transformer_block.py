"""Practice: a residual block with a LayerNorm in three positions, forward and backward, by hand
in NumPy.

The task
--------
Fill in ``forward`` and ``backward`` (the TODOs) for a Transformer block without its
attention: one feed-forward sub-layer F in a residual connection, with a LayerNorm before
the sub-layer (Pre-Norm), after the residual add (Post-Norm) or on the sub-layer's output
(the reordered norm of OLMo 2). Then:

    normcore practice check THIS_FILE.py

The formulas, on the last axis C of x (B, T, C) or (N, C)::

    F(h)  = relu(h @ w1 + b1) @ w2 + b2                 w1 (C, d_ff), w2 (d_ff, C)
    LN(u) = gamma * (u - mean) / sqrt(var + eps) + beta mean and biased var over C
    position="pre":   y = x + F(LN(x))
    position="post":  y = LN(x + F(x))
    position="reordered":  y = x + LN(F(x))
    dx = ?    derive all three: through the residual path, the sub-layer and the norm

The grader runs your block next to normcore's own LayerNorm and FeedForward(activation="relu")
wired the same way, in ALL THREE positions, on (2, 3, 4) and (N, C) inputs, float32, a
constant row, and random parameters. It runs the backward on a random upstream gradient and checks
that the parameter gradients accumulate. When a check fails it names the well-known mistake
that produces exactly your numbers. NumPy only: do not import normcore or torch here.

A worked example (normcore's own layers give these numbers; once your block is right,
``python -m doctest THIS_FILE.py`` passes):

    >>> def example(position):
    ...     blk = TransformerBlock(3, 2, position=position)
    ...     blk.gamma.data = np.array([1.0, 2.0, 0.5])
    ...     blk.beta.data = np.array([0.0, 0.1, -0.2])
    ...     blk.w1.data = np.array([[1.0, -1.0], [0.5, 1.0], [-0.5, 0.5]])
    ...     blk.b1.data = np.array([0.1, 0.2])
    ...     blk.w2.data = np.array([[1.0, 0.0, -1.0], [0.5, 1.0, 0.5]])
    ...     blk.b2.data = np.array([0.0, 0.2, -0.1])
    ...     return blk
    >>> x = np.array([[1.0, 2.0, 4.0], [0.0, -1.0, 3.0]])
    >>> dy = np.array([[1.0, 0.5, -1.0], [0.5, -0.5, 2.0]])
    >>> pre = example("pre")
    >>> np.round(pre.forward(x), 4).tolist()
    [[1.5343, 3.2686, 4.4343], [0.0, -0.8, 2.9]]
    >>> np.round(pre.backward(dy), 4).tolist()
    [[0.5562, 1.1658, -1.2219], [0.5, -0.5, 2.0]]
    >>> np.round(pre.w1.grad, 4).tolist()
    [[0.0, -0.5345], [0.0, -0.2173], [0.0, 0.2341]]
    >>> post = example("post")
    >>> np.round(post.forward(x), 4).tolist()
    [[-1.4142, 1.5142, 0.1536], [-0.5501, -1.6065, 0.5017]]
    >>> np.round(post.backward(dy), 4).tolist()
    [[0.2946, 1.1785, -0.7366], [0.6724, -0.6094, -0.1646]]
    >>> np.round(post.gamma.grad, 4).tolist()
    [-1.6893, 0.7802, 2.0996]
    >>> reordered = example("reordered")
    >>> np.round(reordered.forward(x), 4).tolist()
    [[0.4701, 4.9009, 3.3647], [-0.5249, 1.8992, 2.3626]]
    >>> np.round(reordered.backward(dy), 4).tolist()
    [[2.5971, 1.2052, -1.7986], [0.4705, -0.4705, 2.0148]]
"""

import numpy as np


class Parameter:
    """A learnable array ``data`` and its gradient ``grad`` (same shape)."""

    def __init__(self, data):
        self.data = data
        self.grad = np.zeros_like(data)


class TransformerBlock:
    """y = x + F(LN(x)) (``position="pre"``), y = LN(x + F(x)) (``position="post"``) or
    y = x + LN(F(x)) (``position="reordered"``).

    The contract the grader relies on (keep these names):

    - ``TransformerBlock(d_model, d_ff, position="pre")``; ``position`` is "pre", "post" or
      "reordered".
    - ``forward(x) -> y``: x of shape (*, d_model), e.g. (B, T, C); y has x's shape and dtype.
    - ``backward(dy) -> dx``: dL/dx for the last forward, in dy's dtype; *adds* (+=) each
      parameter's gradient to its ``.grad`` (the caller zeroes them).
    - Parameters ``gamma``, ``beta`` (d_model,) of the LayerNorm (eps=1e-5), ``w1``
      (d_model, d_ff), ``b1`` (d_ff,), ``w2`` (d_ff, d_model), ``b2`` (d_model,) of the
      feed-forward: F(h) = relu(h @ w1 + b1) @ w2 + b2.
    """

    def __init__(self, d_model, d_ff, position="pre", eps=1e-5, rng=None):
        if position not in ("pre", "post", "reordered"):
            raise ValueError(f"position must be 'pre', 'post' or 'reordered', got {position!r}")
        self.position = position
        self.eps = eps
        rng = np.random.default_rng(rng)
        self.gamma = Parameter(np.ones(d_model))
        self.beta = Parameter(np.zeros(d_model))
        self.w1 = Parameter(rng.standard_normal((d_model, d_ff)) / np.sqrt(d_model))
        self.b1 = Parameter(np.zeros(d_ff))
        self.w2 = Parameter(rng.standard_normal((d_ff, d_model)) / np.sqrt(d_ff))
        self.b2 = Parameter(np.zeros(d_model))

    def forward(self, x):
        # TODO: the LayerNorm and the feed-forward F on the last axis (helpers are welcome),
        #       wired as self.position says.
        # TODO: cache what backward needs.
        raise NotImplementedError("TODO: TransformerBlock.forward")

    def backward(self, dy):
        # TODO: dx through the residual add, F and the norm, in the order the forward used
        #       them; accumulate (+=) every parameter's gradient.
        raise NotImplementedError("TODO: TransformerBlock.backward")
