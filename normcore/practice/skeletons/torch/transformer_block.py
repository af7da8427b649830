"""Practice: a residual block with a LayerNorm, Pre-Norm, Post-Norm or reordered, in PyTorch: the
forward of a torch.nn.Module.

The task
--------
Fill in ``forward`` (the TODO) for a Transformer block without its attention: one ReLU
feed-forward sub-layer F in a residual connection, with a LayerNorm before the sub-layer
(Pre-Norm), after the residual add (Post-Norm) or on the sub-layer's output (the reordered
norm of OLMo 2). Autograd does the backward. Then:

    normcore practice check THIS_FILE.py

The formulas, on the last dim C of x (B, T, C) or (N, C)::

    F(h)  = relu(h @ w1 + b1) @ w2 + b2                 w1 (C, d_ff), w2 (d_ff, C)
    LN(u) = gamma * (u - mean) / sqrt(var + eps) + beta mean and var over C
    position="pre":   y = x + F(LN(x))
    position="post":  y = LN(x + F(x))
    position="reordered":  y = x + LN(F(x))

The grader runs your block next to normcore's own LayerNorm and FeedForward(activation="relu")
wired the same way, in ALL THREE positions, on (2, 3, 4) and (N, C) inputs, float32, a
constant row, random parameters, and compares its output and the gradients autograd gets through your
forward; it checks the module itself against the track's torch answer (parameters, buffers
and state_dict keys; the input left unchanged) and, when a check fails, names the well-known
mistake that produces exactly your numbers. Write it from tensor operations: no normcore,
and not torch.nn.LayerNorm or torch.nn.functional.layer_norm.

A worked example, to 4 decimals (the reference answer gives these numbers; once your
module works, ``python -m doctest THIS_FILE.py`` checks them):

    >>> torch.set_default_dtype(torch.float64)  # the numbers print short
    >>> pre = TransformerBlock(3, 2, position="pre")
    >>> list(pre.state_dict())
    ['gamma', 'beta', 'w1', 'b1', 'w2', 'b2']
    >>> _ = pre.load_state_dict({"gamma": torch.tensor([1.0, 2.0, 0.5]),
    ...                          "beta": torch.tensor([0.0, 0.1, -0.2]),
    ...                          "w1": torch.tensor([[1.0, -1.0], [0.5, 1.0], [-0.5, 0.5]]),
    ...                          "b1": torch.tensor([0.1, 0.2]),
    ...                          "w2": torch.tensor([[1.0, 0.0, -1.0], [0.5, 1.0, 0.5]]),
    ...                          "b2": torch.tensor([0.0, 0.2, -0.1])})
    >>> x = torch.tensor([[1.0, 2.0, 4.0], [0.0, -1.0, 3.0]], requires_grad=True)
    >>> dy = torch.tensor([[1.0, 0.5, -1.0], [0.5, -0.5, 2.0]])  # dL/dy
    >>> y = pre(x)
    >>> y.detach().round(decimals=4).tolist()
    [[1.5343, 3.2686, 4.4343], [0.0, -0.8, 2.9]]
    >>> y.backward(dy)
    >>> x.grad.round(decimals=4).tolist()
    [[0.5562, 1.1658, -1.2219], [0.5, -0.5, 2.0]]
    >>> pre.w1.grad.round(decimals=4).tolist()
    [[0.0, -0.5345], [0.0, -0.2173], [0.0, 0.2341]]
    >>> post = TransformerBlock(3, 2, position="post")
    >>> _ = post.load_state_dict(pre.state_dict())  # the same parameters
    >>> x.grad = None
    >>> y = post(x)
    >>> y.detach().round(decimals=4).tolist()
    [[-1.4142, 1.5142, 0.1536], [-0.5501, -1.6065, 0.5017]]
    >>> y.backward(dy)
    >>> x.grad.round(decimals=4).tolist()
    [[0.2946, 1.1785, -0.7366], [0.6724, -0.6094, -0.1646]]
    >>> post.gamma.grad.round(decimals=4).tolist()
    [-1.6893, 0.7802, 2.0996]
"""

import torch
from torch import nn


class TransformerBlock(nn.Module):
    """y = x + F(LN(x)) (``position="pre"``), y = LN(x + F(x)) (``position="post"``) or
    y = x + LN(F(x)) (``position="reordered"``).

    The contract the grader relies on (keep these names):

    - ``forward(x) -> y``: x of shape (*, C), C = d_model; y of the same shape and dtype.
    - ``self.gamma``, ``self.beta`` (shape (C,), the LayerNorm's), ``self.w1`` (C, d_ff),
      ``self.b1`` (d_ff,), ``self.w2`` (d_ff, C), ``self.b2`` (C,): nn.Parameters, used as
      ``h @ w1 + b1``; ``self.position``: "pre", "post" or "reordered".
    - the same in training and in evaluation (no dropout).

    Semantics of the LayerNorm are PyTorch's: which variance and where eps goes. If you are
    unsure, decide, and let the grader tell you.
    """

    def __init__(self, d_model, d_ff, position="pre", eps=1e-5):
        super().__init__()
        if position not in ("pre", "post", "reordered"):
            raise ValueError(f"position must be 'pre', 'post' or 'reordered', got {position!r}")
        self.position = position
        self.eps = eps
        self.gamma = nn.Parameter(torch.ones(d_model))
        self.beta = nn.Parameter(torch.zeros(d_model))
        self.w1 = nn.Parameter(torch.randn(d_model, d_ff) / d_model ** 0.5)
        self.b1 = nn.Parameter(torch.zeros(d_ff))
        self.w2 = nn.Parameter(torch.randn(d_ff, d_model) / d_ff ** 0.5)
        self.b2 = nn.Parameter(torch.zeros(d_model))

    def forward(self, x):
        # TODO: F(h) and LN(u) on the last dim (helper methods are fine).
        # TODO: pre: x + F(LN(x)); post: LN(x + F(x)); reordered: x + LN(F(x)).
        raise NotImplementedError("TODO: TransformerBlock.forward")
