"""The DyT authors' DynamicTanh ("Transformers without Normalization", Zhu et al. 2025), ported
to the dyt exercise (PyTorch track).

Source: github.com/jiachenzhu/DyT, dynamic_tanh.py, class DynamicTanh(normalized_shape,
channels_last, alpha_init_value=0.5): ``self.alpha = nn.Parameter(torch.ones(1) *
alpha_init_value)``, weight ones, bias zeros; ``x = torch.tanh(self.alpha * x)`` then ``x *
self.weight + self.bias`` (channels_last) or with ``[:, None, None]`` (channels_first).
Port: class renamed DyT with the skeleton's (normalized_shape, alpha_init=0.5);
channels_last kept as an argument, True by default (the skeleton's layout).
"""
import torch
import torch.nn as nn


class DyT(nn.Module):
    def __init__(self, normalized_shape, alpha_init=0.5, channels_last=True):
        super().__init__()
        self.normalized_shape = normalized_shape
        self.alpha_init_value = alpha_init
        self.channels_last = channels_last

        self.alpha = nn.Parameter(torch.ones(1) * alpha_init)
        self.weight = nn.Parameter(torch.ones(normalized_shape))
        self.bias = nn.Parameter(torch.zeros(normalized_shape))

    def forward(self, x):
        x = torch.tanh(self.alpha * x)
        if self.channels_last:
            x = x * self.weight + self.bias
        else:
            x = x * self.weight[:, None, None] + self.bias[:, None, None]
        return x

    def extra_repr(self):
        return f"normalized_shape={self.normalized_shape}, alpha_init_value={self.alpha_init_value}, channels_last={self.channels_last}"
