"""A small MLP with BatchNorm and cross-entropy as a torch.nn.Module, forward only: a
reference answer of the PyTorch track.

Standalone (torch only). Semantics as torch: nn.Linear(n_in, n_hidden), nn.BatchNorm1d(n_hidden)
in training mode (the batch's statistics, biased variance, eps=1e-5), nn.Tanh(),
nn.Linear(n_hidden, n_classes) and nn.CrossEntropyLoss() (the mean over the batch), written
from tensor operations; the parameters keep the NumPy exercise's names and layout (w1 is
(n_in, n_hidden), for ``x @ w1``). ``forward(x, targets)`` returns the loss; autograd
computes every gradient the NumPy exercise derives by hand.

A name in brackets at the end of a line, such as ``[var]``, names that step for the catalog
of mistakes the grader recognises (``normcore practice list --mistakes``).
"""

import torch
from torch import nn


class MLPWithBatchNorm(nn.Module):
    """x -> Linear -> BatchNorm -> tanh -> Linear -> mean cross-entropy; x (N, D), targets (N,).

        h      = x @ w1 + b1                                  (N, H)
        h_hat  = (h - mean_0(h)) / sqrt(var_0(h) + eps)       (N, H)  biased variance
        a      = tanh(gamma * h_hat + beta)                   (N, H)
        logits = a @ w2 + b2                                  (N, C)
        logp   = z - log(sum(exp(z))),  z = logits - max      (N, C)
        loss   = -(1 / N) sum_n logp[n, y_n]                  ()
    """

    def __init__(self, n_in, n_hidden, n_classes, eps=1e-5):
        super().__init__()
        self.eps = eps
        self.w1 = nn.Parameter(torch.randn(n_in, n_hidden) / n_in ** 0.5)
        self.b1 = nn.Parameter(torch.zeros(n_hidden))
        self.gamma = nn.Parameter(torch.ones(n_hidden))
        self.beta = nn.Parameter(torch.zeros(n_hidden))
        self.w2 = nn.Parameter(torch.randn(n_hidden, n_classes) / n_hidden ** 0.5)
        self.b2 = nn.Parameter(torch.zeros(n_classes))

    def forward(self, x, targets):
        h = x @ self.w1 + self.b1                                       # (N, H)
        mean = h.mean(dim=0, keepdim=True)                              # (1, H)
        var = h.var(dim=0, unbiased=False, keepdim=True)                # (1, H) biased [var]
        h_hat = (h - mean) / torch.sqrt(var + self.eps)                 # (N, H)
        a = torch.tanh(self.gamma * h_hat + self.beta)                  # (N, H)
        logits = a @ self.w2 + self.b2                                  # (N, C)
        z = logits - logits.amax(dim=1, keepdim=True)                   # (N, C), max 0 [shift]
        logp = z - torch.exp(z).sum(dim=1, keepdim=True).log()         # (N, C)
        return -logp[torch.arange(len(targets)), targets].mean()        # () [loss]
