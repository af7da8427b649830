# exercise: cross_entropy
# Source: github.com/w32zhong/mnn, mnn/layer.py (class CrossEntropyLayer "to simulate PyTorch
# soft entropy layer", BaseLayer._batch_reduced, SoftmaxLayer.stable_softmax), commit 0882c48b.
# Ported: mnn's Tensor ops replaced by NumPy, (B, n, 1) column vectors by (B, n) rows; the
# layer's backward() takes no upstream gradient, so the contract's dloss is accepted and, as
# in the source, not used. Kept: the loss is _batch_reduced(log(softmax[target])), the mean of
# the log-probabilities WITHOUT the minus sign of its own docstring (-log y_l); the gradient
# is softmax - onehot per sample, not divided by the batch size.
import numpy as np


def stable_softmax(inputs, axis):
    inputs_max = inputs.max(axis=axis, keepdims=True)
    stable_exps = np.exp(inputs - inputs_max)
    sum_exps = stable_exps.sum(axis=axis, keepdims=True)
    return stable_exps / sum_exps


class CrossEntropyLoss:
    def __init__(self, axis=1):
        self.axis = axis

    def _batch_reduced(self, val):
        batch_size = val.shape[0]
        return val.sum(axis=0, keepdims=True) / batch_size

    def forward(self, inputs, feedbacks=None):
        batch_size = inputs.shape[0]
        indices = feedbacks

        softmax = stable_softmax(inputs, self.axis)
        use_softmax = softmax[np.arange(batch_size), indices]
        cross_entropy = np.log(use_softmax)

        self.saved_context = (batch_size, indices, softmax)
        return self._batch_reduced(cross_entropy)[0]

    def backward(self, dloss=1.0):
        batch_size, indices, softmax = self.saved_context
        gradients = softmax
        gradients[np.arange(batch_size), indices] -= 1.0
        return gradients
