"""Practice: QKNormSelfAttention in PyTorch, the forward of a torch.nn.Module.

The task
--------
Fill in ``forward`` (the TODO) so that this module behaves exactly like self-attention with
QK-norm (an RMSNorm on each head's query and key): RMSNorm over each head's D channels of q
and of k (eps the dtype's machine epsilon, weights gamma_q and gamma_k of shape (D,)), then
the 1 / sqrt(D) scale. Autograd does the backward. Then:

    normcore practice check THIS_FILE.py

The grader runs your module on many inputs (one to four heads, causal and not, float32, one
position, large x, q and k near 0) and compares its output, and the gradients autograd gets
through your forward, with normcore's own QK-norm attention; it checks the module itself
against the track's torch answer (parameters, buffers and state_dict keys; the input left
unchanged) and, when a check fails, names the well-known mistake that produces exactly your
numbers. Write it from tensor operations: no normcore, and not torch.nn.RMSNorm or
torch.nn.functional.scaled_dot_product_attention.

A worked example, to 4 decimals (the reference answer gives these numbers; once your
module works, ``python -m doctest THIS_FILE.py`` checks them):

    >>> torch.set_default_dtype(torch.float64)  # the numbers print short
    >>> att = QKNormSelfAttention(4, 2)
    >>> list(att.state_dict())
    ['wq', 'wk', 'wv', 'wo', 'gamma_q', 'gamma_k']
    >>> with torch.no_grad():
    ...     for i, w in enumerate((att.wq, att.wk, att.wv, att.wo)):
    ...         _ = w.copy_(torch.linspace(-1.0, 1.0, 16).reshape(4, 4) * (i + 1) / 4)
    ...     _ = att.gamma_q.copy_(torch.tensor([1.0, 2.0]))
    >>> x = torch.tensor([[[1.0, 0.0, -1.0, 2.0], [0.5, 1.0, 0.0, -1.0], [2.0, -1.0, 1.0, 0.0]]],
    ...                  requires_grad=True)
    >>> y = att(x)
    >>> y.detach().round(decimals=4).tolist()
    [[[0.2213, 0.4205, 0.6197, 0.8189], [1.0798, 0.5742, 0.0686, -0.4371], [1.0825, 0.5798, 0.077, -0.4258]]]
    >>> y.sum().backward()
    >>> att.gamma_q.grad.round(decimals=4).tolist(), att.gamma_k.grad.round(decimals=4).tolist()
    ([0.1382, -0.0526], [0.1382, -0.1052])
"""

import torch
from torch import nn


class QKNormSelfAttention(nn.Module):
    """Self-attention with an RMSNorm on each head's query and key (QK-norm).

    The contract the grader relies on (keep these names):

    - ``forward(x) -> y``: x of shape (B, T, C), C = d_model; y of the same shape and dtype.
    - ``self.wq``, ``self.wk``, ``self.wv``, ``self.wo`` (C, C), used as ``x @ wq``;
      ``self.gamma_q``, ``self.gamma_k`` (D,): nn.Parameters. ``self.causal`` as in attention.
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
        self.gamma_q = nn.Parameter(torch.ones(d_model // n_heads))
        self.gamma_k = nn.Parameter(torch.ones(d_model // n_heads))

    def forward(self, x):
        # TODO: the attention exercise, with an RMSNorm of q and of k over each head's
        #       channels (times gamma_q, gamma_k) before the scores.
        raise NotImplementedError("TODO: QKNormSelfAttention.forward")
