# exercise: layernorm
# Source: github.com/ddbourgin/numpy-ml, numpy_ml/neural_nets/layers/layers.py, class
# LayerNorm1D (forward, backward, _bwd), commit be8ae238.
# Ported: "scaler" / "intercept" are the contract's gamma / beta; LayerNorm1D works on
# (n_ex, n_in), so the input (*, *normalized_shape) is flattened to (n_ex, n_in) with n_in the
# product of normalized_shape (as the library's LayerNorm2D normalises over all of its feature
# axes) and the parameters are flattened with it; the framework's list of retained inputs is the
# last input only.
import numpy as np


class Parameter:
    def __init__(self, data):
        self.data = data
        self.grad = np.zeros_like(data)


class LayerNorm:
    def __init__(self, normalized_shape, eps=1e-5, elementwise_affine=True, bias=True, dtype=np.float64):
        if isinstance(normalized_shape, int):
            normalized_shape = (normalized_shape,)
        self.normalized_shape = tuple(normalized_shape)
        self.epsilon = eps
        self.training = True
        self.gamma = Parameter(np.ones(self.normalized_shape, dtype))   # "scaler"
        self.beta = Parameter(np.zeros(self.normalized_shape, dtype))   # "intercept"

    def train(self, mode=True):
        self.training = mode
        return self

    def eval(self):
        return self.train(False)

    def forward(self, X, retain_derived=True):
        self.shape = X.shape
        n_in = int(np.prod(self.normalized_shape))
        X = X.reshape(-1, n_in)
        scaler = self.gamma.data.reshape(-1)
        ep = self.epsilon
        intercept = self.beta.data.reshape(-1)

        if retain_derived:
            self.X = X

        X_mean, X_var = X.mean(axis=1, keepdims=True), X.var(axis=1, keepdims=True)
        lnorm = (X - X_mean) / np.sqrt(X_var + ep)
        y = scaler * lnorm + intercept
        return y.reshape(self.shape)

    def backward(self, dLdy, retain_grads=True):
        dLdy = dLdy.reshape(self.X.shape)
        dx, dScaler, dIntercept = self._bwd(dLdy, self.X)
        if retain_grads:
            self.gamma.grad += dScaler.reshape(self.normalized_shape)
            self.beta.grad += dIntercept.reshape(self.normalized_shape)
        return dx.reshape(self.shape)

    def _bwd(self, dLdy, X):
        """Computation of gradient of the loss wrt X, scaler, intercept"""
        scaler = self.gamma.data.reshape(-1)
        ep = self.epsilon

        n_ex, n_in = X.shape
        X_mean, X_var = X.mean(axis=1, keepdims=True), X.var(axis=1, keepdims=True)

        lnorm = (X - X_mean) / np.sqrt(X_var + ep)
        dIntercept = dLdy.sum(axis=0)
        dScaler = np.sum(dLdy * lnorm, axis=0)

        dLnorm = dLdy * scaler
        dX = (
            n_in * dLnorm
            - dLnorm.sum(axis=1, keepdims=True)
            - lnorm * (dLnorm * lnorm).sum(axis=1, keepdims=True)
        ) / (n_in * np.sqrt(X_var + ep))

        return dX, dScaler, dIntercept
