import numpy as np


def softmax_loss(x, y):
    """x: (N, C) scores, y: (N,) labels. Returns loss and dx."""
    shifted_logits = x - np.max(x, axis=1, keepdims=True)
    Z = np.sum(np.exp(shifted_logits), axis=1, keepdims=True)
    log_probs = shifted_logits - np.log(Z)
    probs = np.exp(log_probs)
    N = x.shape[0]
    loss = -np.sum(log_probs[np.arange(N), y]) / N
    dx = probs.copy()
    dx[np.arange(N), y] -= 1
    dx /= N
    return loss, dx


class CrossEntropyLoss:
    def forward(self, logits, targets):
        loss, self.dx = softmax_loss(logits, targets)
        return loss

    def backward(self, dloss=1.0):
        return dloss * self.dx
