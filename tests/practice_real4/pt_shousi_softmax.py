"""A hand-written (手撕) softmax from a Chinese LLM-interview repository, ported to the softmax
exercise (PyTorch track).

Source: github.com/harmonytan/ShouSi (大模型面试手撕代码大全), CalFunction/softmax-function.py
(commit 6cceb8f1), ``manual_softmax(x)`` for x "Tensor[B,S,D]": ``m = torch.max(x, dim=-1,
keepdim=True)[0]``, ``exp_x = torch.exp(x - m)  # 减去最大值避免数值溢出``, ``exp_x /
torch.sum(exp_x, dim=-1, keepdim=True)``.
Port: wrapped in the skeleton's Softmax(dim) module, whose forward calls the note's function
(always over the last dim).
"""
import torch
from torch import nn


def manual_softmax(x):
    """
    x:Tensor[B,S,D]
    """
    m = torch.max(x, dim=-1, keepdim=True,)[0]  # 返回最大值
    exp_x = torch.exp(x - m)  # 减去最大值避免数值溢出
    denominator = torch.sum(exp_x, dim=-1, keepdim=True)
    return exp_x / denominator


class Softmax(nn.Module):
    def __init__(self, dim=-1):
        super().__init__()
        self.dim = dim

    def forward(self, x):
        return manual_softmax(x)
