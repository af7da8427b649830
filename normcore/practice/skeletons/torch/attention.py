"""Practice: MultiheadSelfAttention in PyTorch, the forward of a torch.nn.Module.

The task
--------
Fill in ``forward`` (the TODO) so that this module behaves exactly like multi-head self-
attention (torch.nn.MultiheadAttention, bias=False, as self-attention), causal or not, with
weights stored (in, out) so that q = x @ wq. Autograd does the backward. Then:

    normcore practice check THIS_FILE.py

The grader runs your module on many inputs (one to four heads, causal and not, float32, one
position, scores around 150 and 1000) and compares its output, and the gradients autograd
gets through your forward, with normcore's own attention layer; it checks the module itself
against the track's torch answer (parameters, buffers and state_dict keys; the input left
unchanged) and, when a check fails, names the well-known mistake that produces exactly your
numbers. Write it from tensor operations: no normcore, and not torch.nn.MultiheadAttention
or torch.nn.functional.scaled_dot_product_attention.

A worked example, to 4 decimals (the reference answer gives these numbers; once your
module works, ``python -m doctest THIS_FILE.py`` checks them):

    >>> torch.set_default_dtype(torch.float64)  # the numbers print short
    >>> att = MultiheadSelfAttention(4, 2, causal=True)
    >>> list(att.state_dict())
    ['wq', 'wk', 'wv', 'wo']
    >>> with torch.no_grad():
    ...     for i, w in enumerate((att.wq, att.wk, att.wv, att.wo)):
    ...         _ = w.copy_(torch.linspace(-1.0, 1.0, 16).reshape(4, 4) * (i + 1) / 4)
    >>> x = torch.tensor([[[1.0, 0.0, -1.0, 2.0], [0.5, 1.0, 0.0, -1.0], [2.0, -1.0, 1.0, 0.0]]],
    ...                  requires_grad=True)
    >>> y = att(x)
    >>> y.detach().round(decimals=4).tolist()
    [[[0.2133, 0.4267, 0.64, 0.8533], [0.6938, 0.4057, 0.1177, -0.1704], [0.8936, 0.5752, 0.2569, -0.0614]]]
    >>> y.sum().backward()
    >>> x.grad.round(decimals=4).tolist()
    [[[1.5532, 1.5773, 1.6014, 1.6256], [1.1076, 1.2735, 1.4395, 1.6054], [0.4784, 0.4928, 0.5071, 0.5215]]]
    >>> att.wq.grad.round(decimals=4).tolist()[0]
    [-1.5809, -1.7132, 2.3865, 2.5901]
"""

import torch
from torch import nn


class MultiheadSelfAttention(nn.Module):
    """Multi-head self-attention; x (B, T, C), H = n_heads, D = C / H per head.

    The contract the grader relies on (keep these names):

    - ``forward(x) -> y``: x of shape (B, T, C), C = d_model; y of the same shape and dtype.
    - ``self.wq``, ``self.wk``, ``self.wv``, ``self.wo``: nn.Parameters of shape (C, C), used as
      ``x @ wq`` (no biases); ``self.causal``: position i sees the keys j <= i only.

    Semantics are those of scaled dot-product attention: which scale, where the mask goes.
    If you are unsure, decide, and let the grader tell you.
    """

    def __init__(self, d_model, n_heads, causal=False):
        super().__init__()
        if d_model % n_heads:
            raise ValueError(f"d_model ({d_model}) must be divisible by n_heads ({n_heads})")
        self.d_model, self.n_heads, self.causal = d_model, n_heads, causal
        self.wq = nn.Parameter(torch.randn(d_model, d_model) / d_model ** 0.5)
        self.wk = nn.Parameter(torch.randn(d_model, d_model) / d_model ** 0.5)
        self.wv = nn.Parameter(torch.randn(d_model, d_model) / d_model ** 0.5)
        self.wo = nn.Parameter(torch.randn(d_model, d_model) / d_model ** 0.5)

    def forward(self, x):
        # TODO: q, k, v split into heads (B, H, T, D); scores, scaled; the causal mask;
        #       a softmax over the keys; the heads merged back, then wo.
        raise NotImplementedError("TODO: MultiheadSelfAttention.forward")
