# exercise: cross_entropy
# Source: 斋藤康毅《深度学习入门：基于Python的理论与实现》(Deep Learning from Scratch),
# github.com/oreilly-japan/deep-learning-from-scratch common/functions.py (softmax,
# cross_entropy_error) and common/layers.py (class SoftmaxWithLoss); the same code fills
# Chinese study notes and interview answers.
# Ported: SoftmaxWithLoss renamed to the contract's CrossEntropyLoss, its backward(dout=1)
# kept with the contract's name for the argument. Kept: log(y + 1e-7) in the loss, and a
# backward that does not use dout (the book's loss layer is always last).
import numpy as np


def softmax(x):
    x = x - np.max(x, axis=-1, keepdims=True)   # 溢出对策
    return np.exp(x) / np.sum(np.exp(x), axis=-1, keepdims=True)


def cross_entropy_error(y, t):
    if y.ndim == 1:
        t = t.reshape(1, t.size)
        y = y.reshape(1, y.size)

    # 监督数据是one-hot-vector的情况下，转换为正确解标签的索引
    if t.size == y.size:
        t = t.argmax(axis=1)

    batch_size = y.shape[0]
    return -np.sum(np.log(y[np.arange(batch_size), t] + 1e-7)) / batch_size


class CrossEntropyLoss:
    def __init__(self):
        self.loss = None
        self.y = None  # softmax的输出
        self.t = None  # 监督数据

    def forward(self, x, t):
        self.t = t
        self.y = softmax(x)
        self.loss = cross_entropy_error(self.y, self.t)
        return self.loss

    def backward(self, dloss=1):
        batch_size = self.t.shape[0]
        if self.t.size == self.y.size:  # 监督数据是one-hot-vector的情况
            dx = (self.y - self.t) / batch_size
        else:
            dx = self.y.copy()
            dx[np.arange(batch_size), self.t] -= 1
            dx = dx / batch_size
        return dx
