import torch
import torch.nn as nn


class RMSNorm(nn.Module):
    def __init__(self, normalized_shape, eps=None, elementwise_affine=True):
        super().__init__()
        if isinstance(normalized_shape, int):
            normalized_shape = (normalized_shape,)
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(normalized_shape))

    def forward(self, x):
        eps = self.eps if self.eps is not None else torch.finfo(x.dtype).eps
        # one RMS per sample
        dims = list(range(1, x.dim()))
        xf = x.to(torch.promote_types(x.dtype, torch.float32))
        rms = torch.sqrt(xf.pow(2).mean(dim=dims, keepdim=True) + eps)
        return (xf / rms).to(x.dtype) * self.weight
