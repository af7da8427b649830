"""The layers a Transformer needs, each with a hand-written backward: Linear, activations,
Dropout, embeddings, causal self-attention, the feed-forward, the Transformer block with its norm
placed before, after or DeepNorm-style, a tiny language model, and the losses."""

from .activations import GELU, ReLU, Sigmoid, Softmax, Tanh, softmax, softmax_backward
from .attention import CausalSelfAttention
from .dropout import Dropout
from .embedding import Embedding, PositionalEmbedding
from .linear import Linear, init_weight
from .losses import CrossEntropyLoss, MSELoss
from .transformer import FeedForward, TinyTransformer, TransformerBlock, deepnorm_constants

__all__ = [
    "Linear", "init_weight", "Dropout", "ReLU", "GELU", "Sigmoid", "Tanh", "Softmax", "softmax", "softmax_backward",
    "Embedding", "PositionalEmbedding", "CausalSelfAttention", "FeedForward", "TransformerBlock",
    "TinyTransformer", "deepnorm_constants", "CrossEntropyLoss", "MSELoss",
]
