# exercise: log_softmax
# Source: github.com/w32zhong/mnn, mnn/layer.py (class LogSoftmaxLayer, with
# SoftmaxLayer.stable_softmax), commit 0882c48b; a teaching framework whose tensors are column
# vectors (B, n, 1) and whose backward multiplies the transposed Jacobian.
# Ported: mnn's Tensor ops replaced by NumPy (diag_embed / stacked / eye as explicit arrays);
# the input is moved so that the softmax axis is last and the Jacobian is built per slice.
# Kept: log(stable_softmax(x)), and the full Jacobian (I - stacked softmax) in the backward.
import numpy as np


def stable_softmax(inputs, axis):
    inputs_max = inputs.max(axis=axis, keepdims=True)
    stable_exps = np.exp(inputs - inputs_max)
    sum_exps = stable_exps.sum(axis=axis, keepdims=True)
    return stable_exps / sum_exps


class LogSoftmax:
    def __init__(self, axis=-1):
        self.axis = axis

    def forward(self, inputs, feedbacks=None):
        softmax = stable_softmax(inputs, self.axis)
        self.saved_forward = softmax
        return np.log(softmax)

    def backward(self, gradients):
        softmax = np.moveaxis(self.saved_forward, self.axis, -1)
        gradients = np.moveaxis(gradients, self.axis, -1)
        softmax_dim = softmax.shape[-1]
        # every row of the "stacked" matrix is the softmax vector
        stacked = np.broadcast_to(softmax[..., None, :], softmax.shape + (softmax_dim,))
        # compute Jacobian matrix wrt. inputs x
        identity = np.eye(softmax_dim, softmax_dim)
        jacob_x = identity - stacked
        grads_x = (np.swapaxes(jacob_x, -1, -2) @ gradients[..., None])[..., 0]
        return np.moveaxis(grads_x, -1, self.axis)
