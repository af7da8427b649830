# exercise: dropout
# Source: github.com/xinghaow99/transformer_from_scratch, modules/dropout.py (class Dropout of a
# NumPy Transformer), commit 1566c198.
# Ported: dropout_rate is the contract's p; forward(x, training) reads training from
# self.training; the mask drawn from self.rng instead of np.random.binomial; data_type is the
# input's dtype. Kept: mask ~ Binomial(1, 1 - p) without any 1 / (1 - p) scale, and a mask of
# 1.0 in evaluation.
import numpy as np
class Dropout():
    def __init__(self, p=0.5, rng=None):
        if not 0.0 <= p <= 1.0:
            raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
        self.dropout_rate = p
        self.p = p
        self.rng = rng if isinstance(rng, np.random.Generator) else np.random.default_rng(rng)
        self.training = True

    def train(self, mode=True):
        self.training = mode
        return self

    def eval(self):
        return self.train(False)

    def forward(self, x):
        training = self.training
        self.data_type = x.dtype
        self.dropout_mask = self.rng.binomial(1, 1-self.dropout_rate, x.shape).astype(self.data_type) if training else 1.0
        return x * self.dropout_mask

    def backward(self, grad_y):
        return grad_y * self.dropout_mask
