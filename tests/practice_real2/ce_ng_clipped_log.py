# Cross-entropy the deeplearning.ai way: compute the softmax "A", then the cost
# -1/m * sum(Y * log(A)) with A clipped away from 0 and 1 to avoid log(0).
import numpy as np


def softmax(Z):
    Z_shift = Z - np.max(Z, axis=1, keepdims=True)
    expZ = np.exp(Z_shift)
    return expZ / np.sum(expZ, axis=1, keepdims=True)


def one_hot(Y, C, dtype):
    Y_oh = np.zeros((Y.shape[0], C), dtype=dtype)
    Y_oh[np.arange(Y.shape[0]), Y] = 1
    return Y_oh


class CrossEntropyLoss:
    def forward(self, logits, targets):
        m, C = logits.shape
        A = softmax(logits)
        Y = one_hot(targets, C, logits.dtype)
        A_clipped = np.clip(A, 1e-7, 1 - 1e-7)
        cost = -1.0 / m * np.sum(Y * np.log(A_clipped))
        self.cache = (A, Y, m)
        return np.asarray(cost, dtype=logits.dtype)[()]

    def backward(self, dloss=1.0):
        A, Y, m = self.cache
        return (dloss / m * (A - Y)).astype(A.dtype)
