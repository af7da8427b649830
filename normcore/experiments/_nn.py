"""What the classification experiments share: an MLP built from normcore's layers, one SGD step
on the cross entropy, accuracy, and a synthetic task with known labels (nothing downloaded)."""

import math

import numpy as np

from .._array import flag, make_rng
from ..module import Sequential
from ..nn import CrossEntropyLoss, Linear, ReLU, Sigmoid, Tanh
from ..optim import SGD

ACTIVATIONS = {"tanh": Tanh, "sigmoid": Sigmoid, "relu": ReLU}


def linear(n_in, n_out, std, rng):
    """A Linear layer whose weights are N(0, std**2) (Kaiming-normal's sqrt(2 / n_in) rescaled)."""
    return Linear(n_in, n_out, init="kaiming", gain=std / math.sqrt(2.0 / n_in), rng=rng)


def mlp(sizes, activation, norm=None, std=None, rng=None, norm_after=False):
    """Linear -> [norm] -> activation for each hidden size in ``sizes[1:-1]``, then a Linear head.

    ``norm`` is None or a callable ``width -> Module`` (e.g. ``nc.BatchNorm1d``); ``std`` is the
    standard deviation of the weights (default 1/sqrt(fan_in)). ``norm_after=True`` puts the
    norm after the activation instead (Linear -> activation -> norm), for comparison.
    """
    norm_after = flag(norm_after, "norm_after", "mlp")
    rng = make_rng(rng)
    layers = []
    for i, (n_in, n_out) in enumerate(zip(sizes[:-1], sizes[1:])):
        layers.append(linear(n_in, n_out, std if std is not None else n_in ** -0.5, rng))
        if i < len(sizes) - 2:
            block = [norm(n_out)] if norm is not None else []
            act = [ACTIVATIONS[activation]()]
            layers += act + block if norm_after else block + act
    return Sequential(*layers)


def forward_recording(model, x, kind):
    """Run ``model`` (a Sequential) on x; also return the inputs of its layers of type ``kind``."""
    inputs = []
    for layer in model:
        if isinstance(layer, kind):
            inputs.append(x)
        x = layer(x)
    return x, inputs


def train_step(model, optimizer, x, labels):
    """One step of ``optimizer`` on the mean cross entropy; returns the loss (inf/NaN if it overflowed)."""
    loss_fn = CrossEntropyLoss()
    with np.errstate(over="ignore", invalid="ignore"):
        loss = loss_fn(model(x), labels)
        model.backward(loss_fn.backward())
        optimizer.step()
    optimizer.zero_grad()
    return float(loss)


def sgd(model, lr):
    """Plain SGD (no momentum) over the model's parameters."""
    return SGD(model.parameters(), lr=lr)


def teacher_task(n, dim=20, classes=10, rng=None, teacher_seed=1234):
    """A synthetic classification task: x ~ N(0, I), label = argmax of a fixed random 2-layer tanh
    network (the same teacher for every call with the same teacher_seed). Returns (x, labels)."""
    t = np.random.default_rng(teacher_seed)
    w1 = t.normal(0, dim ** -0.5, (dim, 64))
    w2 = t.normal(0, 64 ** -0.5, (64, classes))
    x = make_rng(rng).normal(size=(n, dim))
    return x, np.argmax(np.tanh(x @ w1) @ w2, axis=1)
