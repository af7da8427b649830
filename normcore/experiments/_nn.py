"""Small pieces the experiments train with: a fully connected layer, activations, the loss.

    Linear:   y = x @ W.T + b                 dx = dy @ W,  dW = dy.T @ x,  db = sum_N(dy)
    Tanh:     y = tanh(x)                     dx = dy * (1 - y**2)
    Sigmoid:  y = 1 / (1 + exp(-x))           dx = dy * y * (1 - y)
    ReLU:     y = max(x, 0)                   dx = dy * (x > 0)
    cross entropy of softmax(logits) with integer labels, and its fused gradient

plus ``mlp`` (Linear -> [norm] -> activation blocks), plain SGD and the synthetic
classification task the experiments learn.
"""

import numpy as np

from .._array import make_rng
from ..module import Module, Parameter, Sequential


class Linear(Module):
    """y = x @ W.T + b with W: (out, in) drawn from N(0, std**2), b = 0. x: (N, in) -> (N, out)."""

    def __init__(self, in_features, out_features, std, rng=None, bias=True):
        self.weight = Parameter(make_rng(rng).normal(0.0, std, (out_features, in_features)))
        if bias:
            self.bias = Parameter(np.zeros(out_features))
        else:
            self.bias = None

    def forward(self, x):
        self._cache = x  # (N, in)
        y = x @ self.weight.data.T  # (N, out)
        return y if self.bias is None else y + self.bias.data

    def backward(self, dy):
        x = self._cached()  # (N, in)
        self.weight.grad += dy.T @ x  # (out, in)
        if self.bias is not None:
            self.bias.grad += dy.sum(axis=0)  # (out,)
        return dy @ self.weight.data  # (N, in)


class _Elementwise(Module):
    def forward(self, x):
        y = self.f(x)
        self._cache = (x, y)
        return y

    def backward(self, dy):
        return dy * self.df(*self._cached())


class Tanh(_Elementwise):
    """y = tanh(x);  dx = dy * (1 - y**2)."""

    f = staticmethod(np.tanh)
    df = staticmethod(lambda x, y: 1.0 - y * y)


class Sigmoid(_Elementwise):
    """y = 1 / (1 + exp(-x));  dx = dy * y * (1 - y)."""

    f = staticmethod(lambda x: 0.5 * (1.0 + np.tanh(0.5 * x)))  # = 1 / (1 + exp(-x)), no overflow
    df = staticmethod(lambda x, y: y * (1.0 - y))


class ReLU(_Elementwise):
    """y = max(x, 0);  dx = dy * (x > 0)."""

    f = staticmethod(lambda x: np.maximum(x, 0.0))
    df = staticmethod(lambda x, y: (x > 0).astype(x.dtype))


ACTIVATIONS = {"tanh": Tanh, "sigmoid": Sigmoid, "relu": ReLU}


def mlp(sizes, activation, norm=None, std=None, rng=None):
    """Linear -> [norm] -> activation for each hidden size in ``sizes[1:-1]``, then a Linear head.

    ``norm`` is None or a callable ``width -> Module`` (e.g. ``nc.BatchNorm1d``); ``std`` is the
    standard deviation of the weights (default 1/sqrt(fan_in)).
    """
    rng = make_rng(rng)
    layers = []
    for i, (n_in, n_out) in enumerate(zip(sizes[:-1], sizes[1:])):
        layers.append(Linear(n_in, n_out, std if std is not None else n_in ** -0.5, rng))
        if i < len(sizes) - 2:
            if norm is not None:
                layers.append(norm(n_out))
            layers.append(ACTIVATIONS[activation]())
    return Sequential(*layers)


def cross_entropy(logits, labels):
    """Mean cross entropy of softmax(logits) (N, K) with labels (N,); returns (loss, dlogits).

        loss = mean_n(logsumexp(logits_n) - logits_n[label_n]),   dlogits = (softmax - onehot) / N
    """
    z = logits - logits.max(axis=1, keepdims=True)  # (N, K), stable
    log_p = z - np.log(np.exp(z).sum(axis=1, keepdims=True))  # (N, K)
    n = len(labels)
    loss = -log_p[np.arange(n), labels].mean()
    dlogits = np.exp(log_p)  # (N, K)
    dlogits[np.arange(n), labels] -= 1.0
    return loss, dlogits / n


def sgd_step(model, lr):
    """p -= lr * grad for every parameter, then zero the gradients."""
    for p in model.parameters():
        p.data -= lr * p.grad
    model.zero_grad()


def train_step(model, x, labels, lr):
    """One SGD step on the cross entropy; returns the loss (NaN-safe: inf when it overflowed)."""
    with np.errstate(over="ignore", invalid="ignore"):
        loss, dlogits = cross_entropy(model(x), labels)
        model.backward(dlogits)
        sgd_step(model, lr)
    return loss


def accuracy(model, x, labels):
    """Fraction of rows whose largest logit is the label, in evaluation mode."""
    model.eval()
    with np.errstate(over="ignore", invalid="ignore"):
        acc = float(np.mean(np.argmax(model(x), axis=1) == labels))
    model.train()
    return acc


def teacher_task(n, dim=20, classes=10, rng=None, teacher_seed=1234):
    """A synthetic classification task: x ~ N(0, I), label = argmax of a fixed random 2-layer tanh
    network (the same teacher for every call with the same teacher_seed). Returns (x, labels)."""
    t = np.random.default_rng(teacher_seed)
    w1 = t.normal(0, dim ** -0.5, (dim, 64))
    w2 = t.normal(0, 64 ** -0.5, (64, classes))
    x = make_rng(rng).normal(size=(n, dim))
    return x, np.argmax(np.tanh(x @ w1) @ w2, axis=1)
