"""normcore: normalization in deep networks, in NumPy, with every backward pass derived by hand.

    import numpy as np, normcore as nc
    ln = nc.LayerNorm(8)
    y = ln(x)                 # forward
    dx = ln.backward(dy)      # dL/dx; ln.gamma.grad and ln.beta.grad accumulate
    print(nc.gradcheck(ln, x))
"""

from .gradcheck import GradcheckReport, gradcheck, rel_error
from . import derivations  # nc.derivations.step_through("layernorm"): the backward node by node
from . import fast  # normcore.fast.LayerNorm etc.: the same layers with blocked, in-place kernels
from .module import Module, Parameter, Sequential
from .norms import (BatchNorm1d, BatchNorm2d, BatchNorm3d, BatchRenorm1d, BatchRenorm2d, DyT,
                    GhostBatchNorm1d, GhostBatchNorm2d, GroupNorm, InstanceNorm1d, InstanceNorm2d,
                    InstanceNorm3d, LayerNorm, RMSNorm)

from . import nn, optim, tasks
from .nn import (GELU, CausalSelfAttention, CrossEntropyLoss, Dropout, Embedding, FeedForward, LayerScale, Linear,
                 LogSoftmax, MSELoss, MultiheadAttention, MultiheadSelfAttention, PositionalEmbedding, ReLU,
                 ReZero, Sigmoid, SoftCap, Softmax, Tanh, TinySeq2Seq, TinyTransformer, TransformerBlock,
                 TransformerDecoderBlock, WeightNorm, WSLinear, fold_batchnorm, fold_norm_affine, freeze_batchnorm,
                 recalibrate_batchnorm)
from .optim import SGD, Adam, AdamW, clip_grad_norm
from .train import fit

__version__ = "0.1.0"

__all__ = [
    "Parameter", "Module", "Sequential", "derivations", "fast",
    "BatchNorm1d", "BatchNorm2d", "BatchNorm3d", "LayerNorm", "RMSNorm", "GroupNorm", "InstanceNorm1d",
    "InstanceNorm2d", "InstanceNorm3d", "DyT", "Dropout",
    "BatchRenorm1d", "BatchRenorm2d", "GhostBatchNorm1d", "GhostBatchNorm2d",
    "WeightNorm", "WSLinear", "LayerScale", "ReZero",
    "gradcheck", "GradcheckReport", "rel_error",
    "nn", "optim", "tasks", "Linear", "ReLU", "GELU", "Sigmoid", "Tanh", "Softmax", "LogSoftmax", "Embedding",
    "PositionalEmbedding", "MultiheadAttention", "MultiheadSelfAttention", "CausalSelfAttention", "FeedForward",
    "TransformerBlock", "TransformerDecoderBlock",
    "TinyTransformer", "TinySeq2Seq",
    "CrossEntropyLoss", "MSELoss", "SoftCap", "SGD", "Adam", "AdamW", "clip_grad_norm", "fit",
    "fold_batchnorm", "fold_norm_affine", "recalibrate_batchnorm", "freeze_batchnorm",
]
