# exercise: log_softmax
# Source: github.com/ctgk/PRML, prml/nn/nonlinear/log_softmax.py (class LogSoftmax(Function):
# _forward with scipy's logsumexp, _backward), as vendored in github.com/pierresegonne/VINF
# code/studies/mean_field_gaussian_mixture/prml/nn/nonlinear/log_softmax.py.
# Ported: scipy.special.logsumexp(x, axis=-1, keepdims=True) replaced by the same max-shifted
# computation in NumPy (scipy is not available to the grader); Function's forward/backward
# plumbing reduced to the contract's forward/backward; the constructor takes the contract's
# axis, which the source does not have. Kept: axis=-1 in both passes, whatever axis is asked.
import numpy as np


def logsumexp(x, axis=None, keepdims=False):
    x_max = np.max(x, axis=axis, keepdims=True)
    out = np.log(np.sum(np.exp(x - x_max), axis=axis, keepdims=True)) + x_max
    return out if keepdims else np.squeeze(out, axis=axis)


class LogSoftmax:

    def __init__(self, axis=-1):
        pass

    def _forward(self, x):
        self.output = x - logsumexp(x, axis=-1, keepdims=True)
        return self.output

    def _backward(self, delta, x):
        softmax = np.exp(self.output)
        dx = delta - softmax * delta.sum(axis=-1, keepdims=True)
        return dx

    def forward(self, x):
        self.x = x
        return self._forward(x)

    def backward(self, delta):
        return self._backward(delta, self.x)
