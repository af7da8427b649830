"""A hand-written (手撕) cross-entropy from a Chinese LLM-interview repository, ported to the
cross_entropy exercise (PyTorch track).

Source: github.com/harmonytan/ShouSi, LossFunction/cross-entropy-loss.py (commit 1041bbef),
``cross_entropy_loss(input, labels)`` for logits [B, N, V]: ``log_probs =
torch.log_softmax(input, dim=-1)  # 使用 log_softmax 避免数值不稳定``, ``torch.gather(log_probs,
dim=-1, index=labels.unsqueeze(-1)).squeeze(-1)``, ``-torch.mean(selected_log_probs)``.
Port: the skeleton's CrossEntropyLoss module calling the note's function on (N, C) logits.
Kept: torch.log_softmax, which the exercise asks not to use.
"""
import torch
import torch.nn as nn


def cross_entropy_loss(input, labels):
    """
    input: Tensor[B,N,V] - 原始 logits
    labels: Tensor[B,N]
    """
    # 使用 log_softmax 避免数值不稳定
    log_probs = torch.log_softmax(input, dim=-1)
    selected_log_probs = torch.gather(log_probs, dim=-1, index=labels.unsqueeze(-1)).squeeze(-1)
    loss = -torch.mean(selected_log_probs)
    return loss


class CrossEntropyLoss(nn.Module):
    def forward(self, logits, targets):
        return cross_entropy_loss(logits, targets)
