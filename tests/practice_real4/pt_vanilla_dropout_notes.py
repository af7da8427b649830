"""The "vanilla" (non-inverted) dropout of a Chinese study notebook, ported to the dropout
exercise (PyTorch track).

Source: github.com/BaiRuic/ebook (notebook on Dropout, written with NumPy): after the
inverted version, a second class Dropout(p) "p 丢弃的概率": ``forward``: ``mask =
np.random.binomial(1, 1 - self.p, (batch_size, features)); output = mask * input_`` (no
scale in training); ``inference``: the input times (1 - p) "为了保证 和训练阶段的期望一致".
Port: a torch.nn.Module; np.random.binomial(1, 1 - p) becomes torch.bernoulli of 1 - p
(torch's generator, as the skeleton asks); forward/inference become the training and
evaluation branches of forward; any shape instead of (batch_size, features).
"""
import torch
import torch.nn as nn


class Dropout(nn.Module):
    def __init__(self, p=0.5):
        """p 丢弃的概率
        """
        super().__init__()
        self.p = p

    def forward(self, input_):
        if self.training:
            # self.p 是丢弃的概率，1-self.p 是我们保留的概率
            mask = torch.bernoulli(torch.full_like(input_, 1 - self.p))
            # 元素相乘，即表示 丢弃一部分输入
            output = mask * input_
            return output
        # 为了保证 和训练阶段的期望一致
        return input_ * (1 - self.p)
