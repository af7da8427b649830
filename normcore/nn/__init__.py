"""The layers a Transformer needs, each with a hand-written backward: Linear, activations,
Dropout, embeddings, multi-head attention (cross or self, causal or not, with masks), the feed-forward,
soft-capping, the Transformer block with its norm placed before, after, around, on the branch's
output or DeepNorm-style, the decoder block
with cross-attention, a tiny language model, a tiny encoder-decoder model, the losses, and
BatchNorm after training (folded into a Linear, recalibrated, frozen); the weight normalised
instead of the activations (WeightNorm, WSLinear) and the residual branch scaled instead of
normalised (LayerScale, ReZero)."""

from .activations import (GELU, LogSoftmax, ReLU, Sigmoid, Softmax, Tanh, erf, erfc, log_softmax,
                          log_softmax_backward, softmax, softmax_backward)
from .attention import CausalSelfAttention, MultiheadAttention, MultiheadSelfAttention
from .batchnorm_in_practice import fold_batchnorm, fold_norm_affine, freeze_batchnorm, recalibrate_batchnorm
from .dropout import Dropout
from .embedding import Embedding, PositionalEmbedding
from .linear import Linear, init_weight
from .losses import CrossEntropyLoss, MSELoss
from .models import TinySeq2Seq, TinyTransformer
from .residual_scaling import LayerScale, ReZero
from .softcap import SoftCap
from .transformer import (FeedForward, TransformerBlock, TransformerDecoderBlock,
                          deepnorm_constants)
from .weight_norm import WeightNorm
from .ws_linear import WSLinear

__all__ = [
    "Linear", "init_weight", "WeightNorm", "WSLinear", "LayerScale", "ReZero",
    "Dropout", "ReLU", "GELU", "Sigmoid", "Tanh", "Softmax", "softmax", "softmax_backward",
    "LogSoftmax", "log_softmax", "log_softmax_backward", "erf", "erfc",
    "Embedding", "PositionalEmbedding", "MultiheadAttention", "MultiheadSelfAttention", "CausalSelfAttention",
    "FeedForward",
    "TransformerBlock", "TransformerDecoderBlock",
    "TinyTransformer", "TinySeq2Seq", "deepnorm_constants", "CrossEntropyLoss", "MSELoss", "SoftCap",
    "fold_batchnorm", "fold_norm_affine", "recalibrate_batchnorm", "freeze_batchnorm",
]
