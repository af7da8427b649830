"""d2l's from-scratch batch normalization (动手学深度学习, PyTorch edition), ported to the
batchnorm exercise (PyTorch track).

Source: github.com/d2l-ai/d2l-zh, chapter_convolutional-modern/batch-norm.md (the same code in
d2l-en before its momentum rewrite): ``batch_norm(X, gamma, beta, moving_mean, moving_var,
eps, momentum)`` decides the mode with ``torch.is_grad_enabled()``, uses the biased variance
for both the normalisation and the moving average, updates ``moving_mean = momentum *
moving_mean + (1.0 - momentum) * mean`` and returns ``moving_mean.data``; class BatchNorm keeps
moving_mean/moving_var as plain tensor attributes and calls it with eps=1e-5, momentum=0.9.
Port: the class is the skeleton's BatchNorm1d(num_features, eps, momentum, ...); gamma and
beta renamed weight and bias with shape (C,); moving_mean/moving_var renamed running_mean/
running_var (still plain attributes, as in the source); the 4-D (N, C, H, W) branch
becomes the (N, C, L) one (dims (0, 2)). Kept: the mode test, the biased moving variance,
eps and momentum fixed by the class (1e-5, 0.9) whatever the constructor is given.
"""
import torch
from torch import nn


def batch_norm(X, gamma, beta, moving_mean, moving_var, eps, momentum):
    # 通过is_grad_enabled来判断当前模式是训练模式还是预测模式
    if not torch.is_grad_enabled():
        # 如果是在预测模式下，直接使用传入的移动平均所得的均值和方差
        X_hat = (X - moving_mean) / torch.sqrt(moving_var + eps)
    else:
        assert len(X.shape) in (2, 3)
        if len(X.shape) == 2:
            # 使用全连接层的情况，计算特征维上的均值和方差
            mean = X.mean(dim=0)
            var = ((X - mean) ** 2).mean(dim=0)
        else:
            # (N, C, L) 的情况，计算通道维上（axis=1）的均值和方差
            # 这里我们需要保持X的形状以便后面可以做广播运算
            mean = X.mean(dim=(0, 2), keepdim=True)
            var = ((X - mean) ** 2).mean(dim=(0, 2), keepdim=True)
        # 训练模式下，用当前的均值和方差做标准化
        X_hat = (X - mean) / torch.sqrt(var + eps)
        # 更新移动平均的均值和方差
        moving_mean = momentum * moving_mean + (1.0 - momentum) * mean
        moving_var = momentum * moving_var + (1.0 - momentum) * var
    Y = gamma * X_hat + beta  # 缩放和移位
    return Y, moving_mean.data, moving_var.data


class BatchNorm1d(nn.Module):
    def __init__(self, num_features, eps=1e-5, momentum=0.1, affine=True, track_running_stats=True):
        super().__init__()
        self.num_features = num_features
        # 参与求梯度和迭代的拉伸和偏移参数，分别初始化成1和0
        self.weight = nn.Parameter(torch.ones(num_features))
        self.bias = nn.Parameter(torch.zeros(num_features))
        # 非模型参数的变量初始化为0和1
        self.running_mean = torch.zeros(num_features)
        self.running_var = torch.ones(num_features)

    def forward(self, X):
        shape = (1, self.num_features) if X.dim() == 2 else (1, self.num_features, 1)
        # 如果X不在内存上，将moving_mean和moving_var
        # 复制到X所在显存上
        if self.running_mean.device != X.device:
            self.running_mean = self.running_mean.to(X.device)
            self.running_var = self.running_var.to(X.device)
        # 保存更新过的moving_mean和moving_var
        Y, moving_mean, moving_var = batch_norm(
            X, self.weight.view(shape), self.bias.view(shape),
            self.running_mean.view(shape), self.running_var.view(shape),
            eps=1e-5, momentum=0.9)
        self.running_mean = moving_mean.reshape(self.num_features)
        self.running_var = moving_var.reshape(self.num_features)
        return Y
