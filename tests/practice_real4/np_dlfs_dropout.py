# exercise: dropout
# Source: 斋藤康毅《深度学习入门：基于Python的理论与实现》(Deep Learning from Scratch),
# github.com/oreilly-japan/deep-learning-from-scratch common/layers.py class Dropout; copied
# as is into Chinese notes (github.com/lantean600/LanteanNote AI/深度学习/Dropout层.md,
# github.com/Reatris/DeepLearing_Origin DeepLearning6/Dropout.py).
# Ported: dropout_ratio is the contract's p; forward(x, train_flg) reads train_flg from
# self.training; the mask drawn from self.rng. Kept: the original (non-inverted) dropout:
# kept units unscaled in training, the output multiplied by 1 - p in evaluation, and a
# backward that always multiplies by the last training mask.
import numpy as np


class Dropout:
    """
    http://arxiv.org/abs/1207.0580
    """
    def __init__(self, p=0.5, rng=None):
        if not 0.0 <= p <= 1.0:
            raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
        self.dropout_ratio = p
        self.p = p
        self.rng = rng if isinstance(rng, np.random.Generator) else np.random.default_rng(rng)
        self.training = True
        self.mask = None

    def train(self, mode=True):
        self.training = mode
        return self

    def eval(self):
        return self.train(False)

    def forward(self, x):
        train_flg = self.training
        if train_flg:
            self.mask = self.rng.random(x.shape) > self.dropout_ratio
            return x * self.mask
        else:
            return x * (1.0 - self.dropout_ratio)

    def backward(self, dout):
        return dout * self.mask
