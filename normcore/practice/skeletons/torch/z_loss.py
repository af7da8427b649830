"""Practice: cross-entropy with the z-loss in PyTorch, the forward of a torch.nn.Module.

The task
--------
Fill in ``forward`` (the TODO) so that this module computes the cross-entropy plus PaLM's
z-loss as normcore's CrossEntropyLoss(z_loss=z_loss) does: logits (N, C), integer targets
(N,), the mean over the N samples of -log p[n, y_n] + z_loss * lse[n]**2, where
lse[n] = log(sum_c exp(logits[n, c])) is log Z of row n. Autograd does the backward. Then:

    normcore practice check THIS_FILE.py

The grader runs your module on many inputs (several shapes and values of z_loss, float32,
logits around 1000, confident and wrong predictions) and compares its output, and the
gradients autograd gets through your forward, with normcore's; it checks the module itself
(parameters, buffers and state_dict keys; the input left unchanged) and, when a check fails,
names the well-known mistake that produces exactly your numbers. Write it from tensor
operations: no normcore, and not torch.logsumexp or torch.nn.functional.cross_entropy.

A worked example, to 4 decimals (the reference answer gives these numbers; once your
module works, ``python -m doctest THIS_FILE.py`` checks them):

    >>> torch.set_default_dtype(torch.float64)  # the numbers print short
    >>> logits = torch.tensor([[2.0, 0.5, -1.0], [0.0, 1.0, 3.0]], requires_grad=True)
    >>> loss = ZLossCrossEntropy(0.1)(logits, torch.tensor([0, 1]))
    >>> round(loss.item(), 4)
    1.9591
    >>> loss.backward()
    >>> logits.grad.round(decimals=4).tolist()
    [[0.0689, 0.1269, 0.0283], [0.0343, -0.4067, 0.6894]]
"""

import torch
from torch import nn


class ZLossCrossEntropy(nn.Module):
    """Cross-entropy plus z_loss * lse**2 of logits against integer targets, averaged over the
    batch.

    The contract the grader relies on (keep these names):

    - ``ZLossCrossEntropy(z_loss)``: z_loss a number >= 0.
    - ``forward(logits, targets) -> loss``: logits (N, C), targets (N,) of class indices
      (int64); the loss a 0-dim tensor.
    - no parameters.

    The loss must be finite for logits around 1000.
    """

    def __init__(self, z_loss=1e-4):
        super().__init__()
        self.z_loss = z_loss

    def forward(self, logits, targets):
        # TODO: lse of each row (stable, the max added back), the cross-entropy's mean, and
        # z_loss times the mean of lse**2.
        raise NotImplementedError("TODO: ZLossCrossEntropy.forward")
