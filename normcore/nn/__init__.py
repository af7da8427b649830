"""The layers a Transformer needs, each with a hand-written backward: Linear, activations,
Dropout, embeddings, multi-head self-attention (causal or not, with masks), the feed-forward, the Transformer block with its norm
placed before, after or DeepNorm-style, a tiny language model, and the losses."""

from .activations import GELU, ReLU, Sigmoid, Softmax, Tanh, softmax, softmax_backward
from .attention import CausalSelfAttention, MultiheadSelfAttention
from .dropout import Dropout
from .embedding import Embedding, PositionalEmbedding
from .linear import Linear, init_weight
from .losses import CrossEntropyLoss, MSELoss
from .transformer import FeedForward, TinyTransformer, TransformerBlock, deepnorm_constants

__all__ = [
    "Linear", "init_weight", "Dropout", "ReLU", "GELU", "Sigmoid", "Tanh", "Softmax", "softmax", "softmax_backward",
    "Embedding", "PositionalEmbedding", "MultiheadSelfAttention", "CausalSelfAttention", "FeedForward", "TransformerBlock",
    "TinyTransformer", "deepnorm_constants", "CrossEntropyLoss", "MSELoss",
]
