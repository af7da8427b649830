"""Softmax whose backward keeps only the diagonal of the Jacobian, like a sigmoid's."""

import numpy as np


class Softmax:
    def __init__(self, axis=-1):
        self.axis = axis

    def forward(self, x):
        shifted = x - np.max(x, axis=self.axis, keepdims=True)
        num = np.exp(shifted)
        self.probs = num / num.sum(axis=self.axis, keepdims=True)
        return self.probs

    def backward(self, dy):
        p = self.probs
        return dy * p * (1.0 - p)
