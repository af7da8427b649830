"""Liger-Kernel's torch reference for its DyT kernel, ported to the dyt exercise (PyTorch
track).

Source: github.com/linkedin/Liger-Kernel, test/transformers/test_dyt.py, class
TorchDyT(C, init_alpha, dtype): alpha ``torch.ones(1) * init_alpha``, gamma ones, beta
zeros; ``forward: return (self.gamma * torch.tanh((self.alpha * x).to(torch.float32)) +
self.beta).to(self.dtype)`` -- tanh always in float32.
Port: the skeleton's DyT(normalized_shape, alpha_init=0.5); gamma/beta renamed weight/bias;
the dtype argument (the test passes the input's dtype) taken from x.
"""
import torch
import torch.nn as nn


class DyT(nn.Module):
    def __init__(self, normalized_shape, alpha_init=0.5):
        super().__init__()
        self.alpha = nn.Parameter(torch.ones(1) * alpha_init)
        self.weight = nn.Parameter(torch.ones(normalized_shape))
        self.bias = nn.Parameter(torch.zeros(normalized_shape))

    def forward(self, x):
        dtype = x.dtype
        return (self.weight * torch.tanh((self.alpha * x).to(torch.float32)) + self.bias).to(dtype)
