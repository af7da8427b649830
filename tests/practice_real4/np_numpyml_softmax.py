# exercise: softmax
# Source: github.com/ddbourgin/numpy-ml, numpy_ml/neural_nets/layers/layers.py, class
# Softmax(LayerBase) (forward, _fwd, backward, _bwd), commit be8ae238.
# Ported: the constructor's `dim` is the contract's axis; the framework's list of retained
# inputs is the last input only (so _bwd's outer loop runs over the first axis of that input).
# Kept: the forward normalises along self.dim, but _bwd rebuilds each row's Jacobian from
# rows taken along the LAST axis (np.atleast_2d rows), whatever dim is.
import numpy as np


class Softmax:
    def __init__(self, axis=-1):
        self.dim = axis

    def forward(self, X, retain_derived=True):
        Y = self._fwd(X)
        if retain_derived:
            self.X = X
        return Y

    def _fwd(self, X):
        e_X = np.exp(X - np.max(X, axis=self.dim, keepdims=True))
        return e_X / e_X.sum(axis=self.dim, keepdims=True)

    def backward(self, dLdy, retain_grads=True):
        return self._bwd(dLdy, self.X)

    def _bwd(self, dLdy, X):
        """
        Actual computation of the gradient of the loss wrt. the input X.

        The Jacobian, J, of the softmax for input x = [x1, ..., xn] is:
            J[i, j] =
                softmax(x_i)  * (1 - softmax(x_j))  if i = j
                -softmax(x_i) * softmax(x_j)        if i != j
        """
        dX = []
        for dy, x in zip(dLdy, X):
            dxi = []
            for dyi, xi in zip(*np.atleast_2d(dy, x)):
                yi = self._fwd(xi.reshape(1, -1)).reshape(-1, 1)
                dyidxi = np.diagflat(yi) - yi @ yi.T  # jacobian wrt. input sample xi
                dxi.append(dyi @ dyidxi)
            dX.append(dxi)
        return np.array(dX).reshape(*X.shape)
