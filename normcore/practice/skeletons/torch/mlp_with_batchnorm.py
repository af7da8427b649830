"""Practice: a small MLP with BatchNorm and cross-entropy in PyTorch: the forward of a
torch.nn.Module, which returns the loss.

The task
--------
Fill in ``forward`` (the TODO) so that this network matches torch's nn.Linear ->
nn.BatchNorm1d (training mode) -> nn.Tanh -> nn.Linear -> nn.CrossEntropyLoss() with their
defaults, written from tensor operations. Autograd does the backward: every gradient the
NumPy version of this exercise (the "backprop ninja") derives by hand. Then:

    normcore practice check THIS_FILE.py

The formulas: x of shape (N, D), integer targets y of shape (N,), H hidden units, C classes;
means over the batch dim 0, one per hidden unit::

    h      = x @ w1 + b1                                   (N, H)
    h_hat  = (h - mean_0(h)) / sqrt(var_0(h) + eps)        eps = 1e-5
    a      = tanh(gamma * h_hat + beta)
    logits = a @ w2 + b2                                   (N, C)
    loss   = -(1 / N) sum_n log softmax(logits[n])[y_n]    ()

The grader runs your network next to normcore's own layers (Linear, BatchNorm1d, Tanh,
Linear, CrossEntropyLoss) with random parameters, a batch of 8 and a batch of 2, float32,
logits around 1000, and compares the loss and the gradients autograd gets through your
forward (dx and every parameter's); it checks the module itself against the track's torch
answer (parameters, buffers and state_dict keys; the input left unchanged) and, when a check
fails, names the well-known mistake that produces exactly your numbers. Write it from tensor
operations: no normcore, and not torch.nn.functional (batch_norm, cross_entropy, ...).

A worked example, to 4 decimals (the reference answer gives these numbers; once your
module works, ``python -m doctest THIS_FILE.py`` checks them):

    >>> torch.set_default_dtype(torch.float64)  # the numbers print short
    >>> mlp = MLPWithBatchNorm(2, 3, 2)
    >>> list(mlp.state_dict())
    ['w1', 'b1', 'gamma', 'beta', 'w2', 'b2']
    >>> _ = mlp.load_state_dict({"w1": torch.tensor([[1.0, -0.5, 0.3], [0.2, 0.8, -1.0]]),
    ...                          "b1": torch.tensor([0.1, 0.0, -0.2]),
    ...                          "gamma": torch.tensor([1.5, 0.5, 1.0]),
    ...                          "beta": torch.tensor([0.0, 0.3, -0.1]),
    ...                          "w2": torch.tensor([[1.0, -1.0], [0.5, 0.2], [-0.3, 0.7]]),
    ...                          "b2": torch.tensor([0.1, -0.1])})
    >>> x = torch.tensor([[1.0, 2.0], [-1.0, 0.5], [0.0, -1.5], [2.0, 1.0]], requires_grad=True)
    >>> loss = mlp(x, torch.tensor([0, 1, 1, 0]))
    >>> round(loss.item(), 4)
    0.1356
    >>> loss.backward(torch.tensor(2.0))  # dL/dloss = 2
    >>> x.grad.round(decimals=4).tolist()
    [[-0.014, -0.0324], [-0.0314, 0.082], [0.0103, 0.0057], [0.0351, -0.0553]]
    >>> mlp.w2.grad.round(decimals=4).tolist()
    [[-0.221, 0.221], [0.0361, -0.0361], [0.0115, -0.0115]]
    >>> mlp.gamma.grad.round(decimals=4).tolist()
    [-0.0811, 0.0047, 0.0157]
    >>> mlp.w1.grad.round(decimals=4).tolist()
    [[0.0106, -0.0346, 0.1994], [-0.0528, -0.0216, 0.0598]]
"""

import torch
from torch import nn


class MLPWithBatchNorm(nn.Module):
    """x -> Linear -> BatchNorm (training) -> tanh -> Linear -> mean cross-entropy.

    The contract the grader relies on (keep these names):

    - ``forward(x, targets) -> loss``: x of shape (N, D), targets (N,) integer (int64); the
      loss a 0-dim tensor of x's dtype.
    - ``self.w1`` (D, H), ``self.b1`` (H,), ``self.gamma`` and ``self.beta`` (H,; the
      BatchNorm's), ``self.w2`` (H, C), ``self.b2`` (C,): nn.Parameters, used as ``x @ w1``.
    - the BatchNorm always uses the batch's statistics (training mode; no running statistics).

    Semantics are PyTorch's: which variance, where eps goes, which mean the loss takes. If you
    are unsure, decide, and let the grader tell you.
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
        # TODO: h, then the BatchNorm over the batch dim (which variance?), tanh, the logits.
        # TODO: the mean cross-entropy, with a log-softmax that survives logits around 1000.
        raise NotImplementedError("TODO: MLPWithBatchNorm.forward")
