# exercise: batchnorm
# Source: Dive into Deep Learning (d2l-zh, 《动手学深度学习》), chapter "批量规范化" (batch-norm.md),
# the mxnet tab: batch_norm(X, gamma, beta, moving_mean, moving_var, eps, momentum) and
# class BatchNorm(nn.Block), which calls it with eps=1e-12, momentum=0.9.
# Ported from mxnet.np to NumPy: autograd.is_training() is self.training; the 4-D branch's
# axes (0, 2, 3) become (0, 2) for the (N, C, L) input and the assert allows 3 dims; moving
# statistics kept as (1, C) / (1, C, 1) arrays and exposed as running_mean / running_var.
# d2l differentiates with autograd; the backward added here is the textbook one for ITS
# forward (batch statistics in training, the moving statistics as constants in prediction).
# Kept: the class's eps=1e-12 and momentum=0.9 (weight of the old value), whatever the
# constructor is given; moving_var takes the biased batch variance.
import numpy as np


class Parameter:
    def __init__(self, data):
        self.data = data
        self.grad = np.zeros_like(data)


def batch_norm(X, gamma, beta, moving_mean, moving_var, eps, momentum, training):
    # 通过autograd来判断当前模式是训练模式还是预测模式
    if not training:
        # 如果是在预测模式下，直接使用传入的移动平均所得的均值和方差
        X_hat = (X - moving_mean) / np.sqrt(moving_var + eps)
        mean, var = moving_mean, moving_var
    else:
        assert len(X.shape) in (2, 3)
        if len(X.shape) == 2:
            # 使用全连接层的情况，计算特征维上的均值和方差
            mean = X.mean(axis=0)
            var = ((X - mean) ** 2).mean(axis=0)
        else:
            # 使用卷积层的情况，计算通道维上（axis=1）的均值和方差。
            # 这里我们需要保持X的形状以便后面可以做广播运算
            mean = X.mean(axis=(0, 2), keepdims=True)
            var = ((X - mean) ** 2).mean(axis=(0, 2), keepdims=True)
        # 训练模式下，用当前的均值和方差做标准化
        X_hat = (X - mean) / np.sqrt(var + eps)
        # 更新移动平均的均值和方差
        moving_mean = momentum * moving_mean + (1.0 - momentum) * mean
        moving_var = momentum * moving_var + (1.0 - momentum) * var
    Y = gamma * X_hat + beta  # 缩放和移位
    return Y, moving_mean, moving_var, (X_hat, var, eps)


class BatchNorm1d:
    def __init__(self, num_features, eps=1e-5, momentum=0.1, affine=True, track_running_stats=True,
                 dtype=np.float64):
        self.num_features = num_features
        self.training = True
        self.gamma = Parameter(np.ones(num_features, dtype))
        self.beta = Parameter(np.zeros(num_features, dtype))
        self.moving_mean = np.zeros(num_features, dtype)
        self.moving_var = np.ones(num_features, dtype)

    @property
    def running_mean(self):
        return self.moving_mean.reshape(-1)

    @property
    def running_var(self):
        return self.moving_var.reshape(-1)

    def train(self, mode=True):
        self.training = mode
        return self

    def eval(self):
        return self.train(False)

    def forward(self, X):
        shape = (1, -1) if X.ndim == 2 else (1, -1, 1)
        gamma, beta = self.gamma.data.reshape(shape), self.beta.data.reshape(shape)
        self.moving_mean = self.moving_mean.reshape(shape)
        self.moving_var = self.moving_var.reshape(shape)
        # 保存更新过的moving_mean和moving_var
        Y, self.moving_mean, self.moving_var, self.cache = batch_norm(
            X, gamma, beta, self.moving_mean, self.moving_var, eps=1e-12, momentum=0.9,
            training=self.training)
        self.cache_training = self.training
        return Y

    def backward(self, dY):
        X_hat, var, eps = self.cache
        axes = (0,) if dY.ndim == 2 else (0, 2)
        shape = (1, -1) if dY.ndim == 2 else (1, -1, 1)
        self.gamma.grad += (dY * X_hat).sum(axis=axes)
        self.beta.grad += dY.sum(axis=axes)
        dX_hat = dY * self.gamma.data.reshape(shape)
        if not self.cache_training:
            return dX_hat / np.sqrt(var + eps)
        m = dY.size / dY.shape[1]
        return (dX_hat - dX_hat.mean(axis=axes, keepdims=True)
                - X_hat * (dX_hat * X_hat).mean(axis=axes, keepdims=True)) / np.sqrt(var + eps)
