"""``normcore compare MODEL``: a built-in model in normcore and in PyTorch, side by side."""

import argparse
import sys

import numpy as np

from .. import fast, nn, norms
from ..module import Sequential
from ..layer_cases import perturb_parameters, randomize_parameters
from ..torch_bridge import compare
from ._options import seed
from .gradcheck import NORM_NAMES, has_norm

DESCRIPTION = """\
Build MODEL in normcore with random parameters, convert it to torch.nn with
normcore.torch_bridge.to_torch (the same weights and running statistics), run
both forward and backward on the same random input and upstream gradient,
and print, for the output, the input gradient, every parameter gradient and
every buffer, the largest absolute and relative difference, the index where
they differ most, and ok/FAIL at a tolerance fitting the dtype (float64 1e-9,
float32 1e-4), relative to the tensor's largest value; a gradient's is
relative to the largest of all the gradients, so that a gradient that is 0
in theory (linear-batchnorm's bias) is judged at the scale of its pass.
Needs PyTorch. Exit status 0 when everything matches, 1 when something
differs, 2 for a usage error or when PyTorch is not installed."""

EPILOG = """\
models:
  {models}

examples:
  normcore compare layernorm               a LayerNorm, float64, training mode
  normcore compare block-deepnorm --eval   a DeepNorm block in evaluation mode
  normcore compare batchnorm --fast        the fast tier's BatchNorm1d
  normcore compare tiny-transformer --dtype float32"""


def _norm(name, *args, shape):
    """A norm with random gamma and beta, from the tier asked for, and its input. DyT has no
    fast twin: the reference layer serves both tiers (as ``nn.norm_class`` says)."""
    def build(tier, rng):
        layer = getattr(fast if tier == "fast" and name != "DyT" else norms, name)(*args)
        return randomize_parameters(layer, rng), (rng.standard_normal(shape) * 2 + 0.5,)
    return build


def _block(position, norm="layernorm"):
    def build(tier, rng):
        block = nn.TransformerBlock(8, 2, 16, norm=norm, position=position, n_layers=3, rng=rng,
                                    norm_tier=tier)
        return perturb_parameters(block, rng), (rng.standard_normal((2, 5, 8)),)
    return build


def _linear_batchnorm(tier, rng):
    """A Linear right before a BatchNorm: the mean subtraction removes the bias, whose gradient
    is 0 in theory and rounding noise in practice (judged at the scale of the other gradients)."""
    batchnorm = (fast if tier == "fast" else norms).BatchNorm1d(3)
    model = Sequential(nn.Linear(4, 3, rng=rng), batchnorm)
    return perturb_parameters(model, rng), (rng.standard_normal((6, 4)),)


def _attention(tier, rng):
    attn = perturb_parameters(nn.CausalSelfAttention(8, 2, rng=rng), rng)
    return attn, (rng.standard_normal((2, 5, 8)),)


def _masked_attention(tier, rng):
    attn = perturb_parameters(nn.MultiheadSelfAttention(8, 2, rng=rng), rng)
    padding = np.array([[0, 0, 0, 1, 1], [0, 0, 0, 0, 0]], dtype=bool)  # True: masked out
    return attn, (rng.standard_normal((2, 5, 8)), padding)


def _cross_attention(tier, rng):
    attn = perturb_parameters(nn.MultiheadAttention(8, 2, add_bias_kv=True, add_zero_attn=True, kdim=6,
                                                    rng=rng), rng)
    padding = np.array([[0, 0, 0, 1, 1, 1, 1], [0, 0, 0, 0, 0, 0, 0]], dtype=bool)  # True: masked out
    return attn, (rng.standard_normal((2, 4, 8)), rng.standard_normal((2, 7, 6)),
                  rng.standard_normal((2, 7, 8)), padding)


def _encoder(tier, rng):
    block = nn.TransformerBlock(8, 2, 16, position="post", activation="relu", causal=False, rng=rng,
                                norm_tier=tier)
    padding = np.array([[0, 0, 0, 1, 1], [0, 0, 0, 0, 0]], dtype=bool)
    return perturb_parameters(block, rng), (rng.standard_normal((2, 5, 8)), padding)


def _qk_norm(tier, rng):
    attn = perturb_parameters(nn.MultiheadSelfAttention(8, 2, qk_norm="rmsnorm", rng=rng), rng)
    padding = np.array([[0, 0, 0, 1, 1], [0, 0, 0, 0, 0]], dtype=bool)  # True: masked out
    return attn, (rng.standard_normal((2, 5, 8)), padding)


def _tiny(tier, rng):
    model = nn.TinyTransformer(11, 8, 2, 2, 6, d_ff=16, rng=rng, norm_tier=tier)
    return perturb_parameters(model, rng, scale=0.2), (rng.integers(0, 11, (2, 6)),)


def _decoder(tier, rng):
    block = nn.TransformerDecoderBlock(8, 2, 16, position="post", activation="relu", rng=rng, norm_tier=tier)
    target_padding = np.array([[0, 0, 0, 0, 1], [0, 0, 0, 0, 0]], dtype=bool)
    memory_padding = np.array([[0, 0, 0, 0, 1, 1], [0, 0, 0, 0, 0, 0]], dtype=bool)
    return perturb_parameters(block, rng), (rng.standard_normal((2, 5, 8)), rng.standard_normal((2, 6, 8)),
                                            target_padding, memory_padding)


def _seq2seq(tier, rng):
    model = nn.TinySeq2Seq(9, 7, 8, 2, 2, 6, 5, d_ff=16, rng=rng, norm_tier=tier)
    padding = np.array([[0, 0, 0, 0, 1, 1], [0, 0, 0, 0, 0, 0]], dtype=bool)  # the source's padding
    return perturb_parameters(model, rng, scale=0.2), (rng.integers(0, 9, (2, 6)), rng.integers(0, 7, (2, 5)),
                                                       padding)


def _cross_entropy(tier, rng):
    loss = nn.CrossEntropyLoss(weight=rng.uniform(0.5, 2.0, 5), label_smoothing=0.1)
    return loss, (rng.standard_normal((2, 5, 4)), rng.integers(0, 5, (2, 4)))


# name -> (what it is, build(tier, rng) -> (module, inputs)); tier is "reference" or "fast"
MODELS = {
    "layernorm": ("LayerNorm(6) on (4, 6)", _norm("LayerNorm", 6, shape=(4, 6))),
    "rmsnorm": ("RMSNorm(6) on (4, 6)", _norm("RMSNorm", 6, shape=(4, 6))),
    "dyt": ("DyT(6) on (4, 6), random alpha", _norm("DyT", 6, shape=(4, 6))),
    "batchnorm": ("BatchNorm1d(3) on (5, 3, 4)", _norm("BatchNorm1d", 3, shape=(5, 3, 4))),
    "batchnorm2d": ("BatchNorm2d(3) on (4, 3, 2, 2)",
                    _norm("BatchNorm2d", 3, shape=(4, 3, 2, 2))),
    "groupnorm": ("GroupNorm(2, 4) on (3, 4, 5)", _norm("GroupNorm", 2, 4, shape=(3, 4, 5))),
    "instancenorm": ("InstanceNorm1d(3) on (2, 3, 5)",
                     _norm("InstanceNorm1d", 3, shape=(2, 3, 5))),
    "linear-batchnorm": ("Linear(4, 3), BatchNorm1d(3): the bias's gradient is 0",
                         _linear_batchnorm),
    "attention": ("CausalSelfAttention(8, 2) on (2, 5, 8)", _attention),
    "attention-masked": ("MultiheadSelfAttention, not causal, key padding",
                         _masked_attention),
    "cross-attention": ("MultiheadAttention, Tq=4, Tk=7, kdim=6, added keys",
                        _cross_attention),
    "block-pre": ("TransformerBlock, Pre-Norm", _block("pre")),
    "block-post": ("TransformerBlock, Post-Norm", _block("post")),
    "block-deepnorm": ("TransformerBlock, DeepNorm (N=3)", _block("deepnorm")),
    "block-none": ("TransformerBlock without norms", _block("none")),
    "block-dyt": ("TransformerBlock, Pre-Norm with DyT", _block("pre", "dyt")),
    "peri": ("TransformerBlock, Peri-LN (sandwich norm)", _block("peri")),
    "qk-norm": ("MultiheadSelfAttention, qk_norm='rmsnorm', key padding", _qk_norm),
    "encoder": ("TransformerBlock, Post-Norm encoder, key padding", _encoder),
    "tiny-transformer": ("TinyTransformer, 2 Pre-Norm blocks", _tiny),
    "decoder": ("TransformerDecoderBlock, Post-Norm, key padding", _decoder),
    "seq2seq": ("TinySeq2Seq, 2 + 2 Pre-Norm blocks, source padding", _seq2seq),
    "cross-entropy": ("CrossEntropyLoss, (N, C, d) logits, weights, smoothing",
                      _cross_entropy),
}


def _model_name(text):
    if text not in MODELS:
        raise argparse.ArgumentTypeError(
            f"unknown {text[:20]!r}: expected a model --help lists (layernorm, attention, ...)")
    return text


def add_arguments(parser):
    parser.description = DESCRIPTION
    width = max(map(len, MODELS))
    parser.epilog = EPILOG.format(models="\n  ".join(
        f"{name:<{width}}  {desc}" for name, (desc, _) in MODELS.items()))
    parser.formatter_class = argparse.RawDescriptionHelpFormatter
    parser.add_argument("model", metavar="MODEL", type=_model_name,
                        help="which built-in model (listed below)")
    parser.add_argument("--dtype", choices=["float64", "float32"], default="float64",
                        help="parameters and inputs (default float64)")
    parser.add_argument("--eval", action="store_true",
                        help="evaluation mode (default: training mode)")
    parser.add_argument("--fast", action="store_true",
                        help="the norms of the fast tier, normcore.fast")
    parser.add_argument("--seed", type=seed, default=0,
                        help="seed of parameters, inputs and dy (default 0)")


def _cast(module, dtype):
    """The module with every floating parameter and buffer in ``dtype``, gradients zeroed."""
    module.to(dtype).zero_grad()
    return module


def run(args):
    try:
        import torch  # noqa: F401
    except ImportError:
        print("normcore compare: PyTorch is not installed; it is the oracle this "
              "command\ncompares against: pip install torch "
              "(or pip install -e '.[torch]')", file=sys.stderr)
        return 2
    rng = np.random.default_rng(args.seed)
    module, inputs = MODELS[args.model][1]("fast" if args.fast else "reference", rng)
    dtype = np.dtype(args.dtype)
    _cast(module, dtype)
    inputs = tuple(x.astype(dtype) if np.issubdtype(x.dtype, np.floating) else x
                   for x in inputs)
    if args.eval:
        module.eval()
    report = compare(module, *inputs, seed=args.seed)
    if has_norm(module):
        print(NORM_NAMES)
    return 0 if report.passed else 1
