"""ConvNeXt's LayerNorm in its channels_first form, ported to the layernorm exercise.

Source: github.com/facebookresearch/ConvNeXt, models/convnext.py, class LayerNorm
(normalized_shape, eps=1e-6, data_format="channels_last"): "LayerNorm that supports two data
formats"; channels_last calls F.layer_norm, channels_first is written out:
``u = x.mean(1, keepdim=True); s = (x - u).pow(2).mean(1, keepdim=True); x = (x - u) /
torch.sqrt(s + self.eps); x = self.weight[:, None, None] * x + self.bias[:, None, None]``.
Port: the skeleton's constructor, the hand-written channels_first branch as the answer
(channels_last is F.layer_norm, which the exercise forbids); the mean and variance stay on
dim 1 as in the source, the weight and bias broadcast over the trailing normalized dims
(the source's [:, None, None] assumes (N, C, H, W)).
"""
import torch
import torch.nn as nn


class LayerNorm(nn.Module):
    r""" LayerNorm that supports two data formats: channels_last (default) or channels_first.
    The ordering of the dimensions in the inputs. channels_last corresponds to inputs with
    shape (batch_size, height, width, channels) while channels_first corresponds to inputs
    with shape (batch_size, channels, height, width).
    """
    def __init__(self, normalized_shape, eps=1e-5, elementwise_affine=True, bias=True,
                 data_format="channels_first"):
        super().__init__()
        if isinstance(normalized_shape, int):
            normalized_shape = (normalized_shape,)
        self.weight = nn.Parameter(torch.ones(normalized_shape))
        self.bias = nn.Parameter(torch.zeros(normalized_shape))
        self.eps = eps
        self.data_format = data_format
        if self.data_format not in ["channels_first"]:
            raise NotImplementedError
        self.normalized_shape = tuple(normalized_shape)

    def forward(self, x):
        u = x.mean(1, keepdim=True)
        s = (x - u).pow(2).mean(1, keepdim=True)
        x = (x - u) / torch.sqrt(s + self.eps)
        x = self.weight * x + self.bias
        return x
