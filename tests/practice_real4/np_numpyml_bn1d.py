# exercise: batchnorm
# Source: github.com/ddbourgin/numpy-ml, numpy_ml/neural_nets/layers/layers.py, class
# BatchNorm1D (forward, backward, _bwd), commit be8ae238.
# Ported: the "scaler" and "intercept" parameters are the contract's gamma and beta; the
# layer's "trainable" flag is self.training; the framework's list of retained inputs (flushed
# by the optimizer) is the last input only; the `assert self.trainable` of backward is dropped
# because the contract asks for a backward in evaluation; (N, C, L) is reshaped to (N*L, C) as
# the library's BatchNorm2D does for its channels. Kept: numpy-ml's momentum is the weight of
# the OLD running value (its default is 0.9) and the contract's momentum is passed to it as
# is; running_var takes the biased batch variance; _bwd always recomputes the batch statistics,
# in evaluation too.
import numpy as np


class Parameter:
    def __init__(self, data):
        self.data = data
        self.grad = np.zeros_like(data)


class BatchNorm1d:
    def __init__(self, num_features, eps=1e-5, momentum=0.1, affine=True, track_running_stats=True,
                 dtype=np.float64):
        self.n_in = self.n_out = num_features
        self.epsilon = eps
        self.momentum = momentum
        self.training = True
        self.gamma = Parameter(np.ones(num_features, dtype))   # "scaler"
        self.beta = Parameter(np.zeros(num_features, dtype))   # "intercept"
        # init running mean and std at 0 and 1, respectively
        self.running_mean = np.zeros(num_features, dtype)
        self.running_var = np.ones(num_features, dtype)
        self.X = None

    def train(self, mode=True):
        self.training = mode
        return self

    def eval(self):
        return self.train(False)

    def _to2d(self, X):
        if X.ndim == 3:
            n_ex, n_ch, n_len = X.shape
            return X.transpose(0, 2, 1).reshape(-1, n_ch)
        return X

    def _from2d(self, Y, shape):
        if len(shape) == 3:
            n_ex, n_ch, n_len = shape
            return Y.reshape(n_ex, n_len, n_ch).transpose(0, 2, 1)
        return Y

    def forward(self, X, retain_derived=True):
        shape = X.shape
        X = self._to2d(X)
        ep = self.epsilon
        mm = self.momentum
        rm = self.running_mean
        rv = self.running_var

        scaler = self.gamma.data
        intercept = self.beta.data

        # if the layer is frozen, use our running mean/std values rather
        # than the mean/std values for the new batch
        X_mean = self.running_mean
        X_var = self.running_var

        if self.training and retain_derived:
            X_mean, X_var = X.mean(axis=0), X.var(axis=0)  # , ddof=1)
            self.running_mean = mm * rm + (1.0 - mm) * X_mean
            self.running_var = mm * rv + (1.0 - mm) * X_var

        if retain_derived:
            self.X = X
            self.shape = shape

        N = (X - X_mean) / np.sqrt(X_var + ep)
        y = scaler * N + intercept
        return self._from2d(y, shape)

    def backward(self, dLdy, retain_grads=True):
        dLdy = self._to2d(dLdy)
        dx, dScaler, dIntercept = self._bwd(dLdy, self.X)
        if retain_grads:
            self.gamma.grad += dScaler
            self.beta.grad += dIntercept
        return self._from2d(dx, self.shape)

    def _bwd(self, dLdy, X):
        """Computation of gradient of loss wrt X, scaler, and intercept"""
        scaler = self.gamma.data
        ep = self.epsilon

        n_ex, n_in = X.shape
        X_mean, X_var = X.mean(axis=0), X.var(axis=0)  # , ddof=1)

        N = (X - X_mean) / np.sqrt(X_var + ep)
        dIntercept = dLdy.sum(axis=0)
        dScaler = np.sum(dLdy * N, axis=0)

        dN = dLdy * scaler
        dX = (n_ex * dN - dN.sum(axis=0) - N * (dN * N).sum(axis=0)) / (
            n_ex * np.sqrt(X_var + ep)
        )

        return dX, dScaler, dIntercept
