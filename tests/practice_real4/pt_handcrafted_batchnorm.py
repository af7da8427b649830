"""A hand-written (手撕) BatchNorm from a Chinese interview-practice repository, ported to the
batchnorm exercise (PyTorch track).

Source: github.com/quas-modo/HandCraftedAI (notebook "Batch Normalization"), class
BatchNormalization(num_features, eps=1e-5, momentum=0.1): gamma/beta nn.Parameters;
running_mean/running_var plain tensors (``torch.zeros(num_features)``); in training
``batch_mean = x.mean(dim=0)``, ``batch_var = x.var(dim=0, unbiased=False)``, ``running =
(1 - momentum) * running + momentum * batch`` (the biased variance, with autograd history),
``x_hat = (x - batch_mean) / torch.sqrt(batch_var + eps)``; in evaluation the running
statistics; ``y = gamma * x_hat + beta``.
Port: class renamed BatchNorm1d with the skeleton's constructor; gamma/beta renamed weight/
bias. Everything else as written (statistics over dim 0 only, the attributes unregistered).
"""
import torch
import torch.nn as nn


class BatchNorm1d(nn.Module):
    def __init__(self, num_features, eps=1e-5, momentum=0.1, affine=True, track_running_stats=True):
        super(BatchNorm1d, self).__init__()
        self.num_features = num_features
        self.eps = eps
        self.momentum = momentum

        # 初始化gamma和beta
        self.weight = nn.Parameter(torch.ones(num_features))
        self.bias = nn.Parameter(torch.zeros(num_features))

        # 初始化running mean和running variance
        self.running_mean = torch.zeros(num_features)
        self.running_var = torch.ones(num_features)

    def forward(self, x):
        if self.training:
            # 计算batch mean和batch variance
            batch_mean = x.mean(dim=0)
            batch_var = x.var(dim=0, unbiased=False)

            # 更新running mean和running variance
            self.running_mean = (1 - self.momentum) * self.running_mean + self.momentum * batch_mean
            self.running_var = (1 - self.momentum) * self.running_var + self.momentum * batch_var

            # 归一化
            x_hat = (x - batch_mean) / torch.sqrt(batch_var + self.eps)
        else:
            # 使用running mean和running variance进行归一化
            x_hat = (x - self.running_mean) / torch.sqrt(self.running_var + self.eps)

        # 缩放和平移
        y = self.weight * x_hat + self.bias
        return y
