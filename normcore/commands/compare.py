"""``normcore compare MODEL``: a built-in model in normcore and in PyTorch, side by side."""

import argparse
import sys

import numpy as np

from .. import fast, nn, norms, optim
from .._install import torch_hint
from ..i18n import N_, translator
from ..i18n.width import fill
from ..module import Sequential
from ..layer_cases import perturb_parameters, randomize_parameters
from ..torch_bridge import compare, compare_optimizer
from ._options import seed
from .gradcheck import NORM_NAMES, has_norm

_ = translator("cli")

DESCRIPTION = N_("""\
Build MODEL in normcore with random parameters, convert it to torch.nn with
normcore.torch_bridge.to_torch (the same weights and running statistics), run
both forward and backward on the same random input and upstream gradient,
and print, for the output, the input gradient, every parameter gradient and
every buffer, the largest absolute and relative difference, the index where
they differ most, and ok/FAIL at a tolerance fitting the dtype (float64 1e-9,
float32 1e-4), relative to the tensor's largest value; a gradient's is
relative to the largest of all the gradients, so that a gradient that is 0
in theory (linear-batchnorm's bias) is judged at the scale of its pass.
An optimizer model (sgd-nesterov, adam-amsgrad, ...) instead takes {steps}
steps in normcore and in torch.optim with the same random gradients and
compares every parameter and every state entry (momentum_buffer, exp_avg,
...) at the same tolerance, relative to the tensor's largest value; --eval
and --fast do not apply to it. Needs PyTorch. Exit status 0 when everything
matches, 1 when something differs, 2 for a usage error or when PyTorch is
not installed.""")

EPILOG = N_("""\
models:
  {models}

examples:
  normcore compare layernorm               a LayerNorm, float64, training mode
  normcore compare block-deepnorm --eval   a DeepNorm block in evaluation mode
  normcore compare batchnorm --fast        the fast tier's BatchNorm1d
  normcore compare batch-renorm --eval     Batch Renorm in evaluation mode
  normcore compare weight-norm             torch's own weight_norm on a Linear
  normcore compare tiny-transformer --dtype float32
  normcore compare block-reordered         OLMo 2's reordered norm
  normcore compare adam-amsgrad            Adam with AMSGrad, {steps} steps""")


def _norm(name, *args, shape, **kwargs):
    """A norm with random gamma and beta, from the tier asked for, and its input. DyT, Batch
    Renorm and Ghost BatchNorm have no fast twin: the reference layer serves both tiers (as
    ``nn.norm_class`` says of DyT)."""
    def build(tier, rng):
        layer = getattr(fast if tier == "fast" and hasattr(fast, name) else norms, name)(*args, **kwargs)
        return randomize_parameters(layer, rng), (rng.standard_normal(shape) * 2 + 0.5,)
    return build


def _layer(make, shape, random=True):
    """A layer of ``nn`` (``make()``), its parameters random unless ``random`` is False, and
    its input; the same in both tiers."""
    def build(tier, rng):
        layer = make()
        return randomize_parameters(layer, rng) if random else layer, (rng.standard_normal(shape),)
    return build


def _block(position, norm="layernorm", **options):
    def build(tier, rng):
        block = nn.TransformerBlock(8, 2, 16, norm=norm, position=position, n_layers=3, rng=rng,
                                    norm_tier=tier, **options)
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


def _attention_sequence_first(tier, rng):
    """torch's default layout (T, B, E), an attn_mask in torch's (B * H, Tq, Tk) layout, the
    weights of each head returned (and their gradient compared)."""
    attn = perturb_parameters(nn.MultiheadAttention(8, 2, batch_first=False, rng=rng), rng)
    mask = rng.standard_normal((2 * 2, 4, 6))  # (B * H, Tq, Tk), added to the scores
    mask[:, :, 1:][rng.random((4, 4, 5)) < 0.3] = -np.inf  # key 0 stays open to every query
    inputs = (rng.standard_normal((4, 2, 8)), rng.standard_normal((6, 2, 8)), rng.standard_normal((6, 2, 8)),
              None, mask)
    return attn, inputs, {"need_weights": True, "average_attn_weights": False}


def _attention_unbatched(tier, rng):
    """An unbatched query (Tq, E), is_causal with the causal mask, the weights averaged over heads."""
    attn = perturb_parameters(nn.MultiheadAttention(8, 2, kdim=6, rng=rng), rng)
    causal = np.triu(np.ones((5, 5), dtype=bool), k=1)  # True: masked out
    inputs = (rng.standard_normal((5, 8)), rng.standard_normal((5, 6)), rng.standard_normal((5, 8)), None, causal)
    return attn, inputs, {"need_weights": True, "is_causal": True}


def _encoder(tier, rng):
    block = nn.TransformerBlock(8, 2, 16, position="post", activation="relu", causal=False, rng=rng,
                                norm_tier=tier)
    padding = np.array([[0, 0, 0, 1, 1], [0, 0, 0, 0, 0]], dtype=bool)
    return perturb_parameters(block, rng), (rng.standard_normal((2, 5, 8)), padding)


def _qk_norm(tier, rng):
    attn = perturb_parameters(nn.MultiheadSelfAttention(8, 2, qk_norm="rmsnorm", rng=rng), rng)
    padding = np.array([[0, 0, 0, 1, 1], [0, 0, 0, 0, 0]], dtype=bool)  # True: masked out
    return attn, (rng.standard_normal((2, 5, 8)), padding)


def _self_attention(**options):
    """Self-attention with the LLM options (QK-norm's scope, the soft-cap), key padding."""
    def build(tier, rng):
        attn = perturb_parameters(nn.MultiheadSelfAttention(8, 2, rng=rng, **options), rng)
        padding = np.array([[0, 0, 0, 1, 1], [0, 0, 0, 0, 0]], dtype=bool)  # True: masked out
        return attn, (rng.standard_normal((2, 5, 8)), padding)
    return build


def _mix_ln(tier, rng):
    """Mix-LN: the first of 4 blocks Post-LN, the rest Pre-LN; soft-capped logits."""
    model = nn.TinyTransformer(11, 8, 4, 2, 6, d_ff=16, position="mix", logit_softcap=3.0, rng=rng,
                               norm_tier=tier)
    return perturb_parameters(model, rng, scale=0.2), (rng.integers(0, 11, (2, 6)),)


def _softcap(tier, rng):
    return nn.SoftCap(2.0), (rng.standard_normal((3, 5)) * 3,)


def _z_loss(tier, rng):
    loss = nn.CrossEntropyLoss(ignore_index=0, z_loss=0.1)
    return loss, (rng.standard_normal((2, 5, 4)) * 3, rng.integers(0, 5, (2, 4)))


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


def _mse_none(tier, rng):
    return nn.MSELoss(reduction="none"), (rng.standard_normal((3, 4)), rng.standard_normal((3, 4)))


def _softmax_dtype(tier, rng):
    """Softmax computed in float64 whatever the input's dtype (try --dtype float32)."""
    return nn.Softmax(axis=1, dtype=np.float64), (rng.standard_normal((3, 5)) * 3,)


STEPS = 5  # an optimizer model's steps


def _optimizer(cls, bias_group, **options):
    """An optimizer model: ``cls(**options)`` over a small Linear's parameters in two groups, the
    weight's with ``options`` alone, the bias's with ``bias_group`` on top; built as
    (optimizer, Linear)."""
    def build(tier, rng):
        linear = nn.Linear(4, 3, rng=rng)
        groups = [{"params": [linear.weight]}, {"params": [linear.bias], **bias_group}]
        return cls(groups, **options), linear
    return build


def _what(message, **fields):
    """A model's description: a message (translated where it is shown) and its fields; a
    description that is all code is a plain string."""
    return message, fields


def _description(what):
    """A model's description in the language in use."""
    message, fields = (what, {}) if isinstance(what, str) else what
    return _(message).format(**fields)


def _on(layer, shape):
    return _what(N_("{layer} on {shape}"), layer=layer, shape=shape)


# name -> (what it is, build(tier, rng) -> (module, inputs) or (module, inputs, forward options),
# or (optimizer, the module whose parameters it holds)); tier is "reference" or "fast"
MODELS = {
    "layernorm": (_on("LayerNorm(6)", "(4, 6)"), _norm("LayerNorm", 6, shape=(4, 6))),
    "rmsnorm": (_on("RMSNorm(6)", "(4, 6)"), _norm("RMSNorm", 6, shape=(4, 6))),
    "dyt": (_what(N_("{layer} on {shape}, random alpha"), layer="DyT(6)", shape="(4, 6)"),
            _norm("DyT", 6, shape=(4, 6))),
    "batchnorm": (_on("BatchNorm1d(3)", "(5, 3, 4)"), _norm("BatchNorm1d", 3, shape=(5, 3, 4))),
    "batchnorm2d": (_on("BatchNorm2d(3)", "(4, 3, 2, 2)"),
                    _norm("BatchNorm2d", 3, shape=(4, 3, 2, 2))),
    "groupnorm": (_on("GroupNorm(2, 4)", "(3, 4, 5)"), _norm("GroupNorm", 2, 4, shape=(3, 4, 5))),
    "instancenorm": (_on("InstanceNorm1d(3)", "(2, 3, 5)"),
                     _norm("InstanceNorm1d", 3, shape=(2, 3, 5))),
    "batch-renorm": (_on("BatchRenorm1d(3, r_max=1.5, d_max=0.5)", "(5, 3, 4)"),
                     _norm("BatchRenorm1d", 3, r_max=1.5, d_max=0.5, shape=(5, 3, 4))),
    "ghost-batchnorm": (_on("GhostBatchNorm1d(3, virtual_batch_size=2)", "(6, 3, 4)"),
                        _norm("GhostBatchNorm1d", 3, virtual_batch_size=2, shape=(6, 3, 4))),
    "linear-batchnorm": (_what(N_("{model}: the bias's gradient is {value}"),
                               model="Linear(4, 3), BatchNorm1d(3)", value=0), _linear_batchnorm),
    "weight-norm": (_what(N_("{layer}: torch's weight_norm parametrization"),
                          layer="WeightNorm(Linear(4, 3), dim=0)"),
                    _layer(lambda: nn.WeightNorm(nn.Linear(4, 3), dim=0), (2, 5, 4))),
    "ws-linear": (_on("WSLinear(5, 3)", "(4, 5)"), _layer(lambda: nn.WSLinear(5, 3), (4, 5))),
    "layer-scale": (_on("LayerScale(4)", "(2, 5, 4)"), _layer(lambda: nn.LayerScale(4), (2, 5, 4))),
    "rezero": (_what(N_("{layer} at alpha = {alpha}: the input's gradient is {alpha}"), layer="ReZero()",
                     alpha=0),
               _layer(nn.ReZero, (2, 5, 4), random=False)),
    "attention": (_on("CausalSelfAttention(8, 2)", "(2, 5, 8)"), _attention),
    "attention-masked": (_what(N_("MultiheadSelfAttention, not causal, key padding")),
                         _masked_attention),
    "cross-attention": (_what(N_("MultiheadAttention, {sizes}, added keys"),
                              sizes="Tq=4, Tk=7, kdim=6"), _cross_attention),
    "attention-seq-first": (_what(N_("MultiheadAttention, batch_first=False, (B*H, Tq, Tk) mask, weights per head")),
                            _attention_sequence_first),
    "attention-unbatched": (_what(N_("MultiheadAttention, unbatched (Tq, E), is_causal, weights averaged")),
                            _attention_unbatched),
    "block-pre": ("TransformerBlock, Pre-Norm", _block("pre")),
    "block-post": ("TransformerBlock, Post-Norm", _block("post")),
    "block-deepnorm": ("TransformerBlock, DeepNorm (N=3)", _block("deepnorm")),
    "block-none": (_what(N_("TransformerBlock without norms")), _block("none")),
    "block-dyt": (_what(N_("TransformerBlock, Pre-Norm with DyT")), _block("pre", "dyt")),
    "peri": (_what(N_("TransformerBlock, Peri-LN (sandwich norm)")), _block("peri")),
    "qk-norm": (_what(N_("MultiheadSelfAttention, qk_norm='rmsnorm', key padding")), _qk_norm),
    "block-reordered": (_what(N_("TransformerBlock, reordered RMSNorm: {forward}"), forward="x + Norm(F(x))"),
                        _block("reordered", "rmsnorm")),
    "block-depth-scaled": (_what(N_("TransformerBlock, Pre-Norm, LayerNorm Scaling at depth {l}"), l=4),
                           _block("pre", norm_scale="depth", layer_index=4)),
    "qk-norm-projection": (_what(N_("MultiheadSelfAttention, QK-norm over the projection, key padding")),
                           _self_attention(qk_norm="rmsnorm", qk_norm_scope="projection")),
    "attention-softcap": (_what(N_("MultiheadSelfAttention, scores soft-capped at {c}, key padding"), c=1.5),
                          _self_attention(attn_softcap=1.5)),
    "encoder": (_what(N_("TransformerBlock, Post-Norm encoder, key padding")), _encoder),
    "tiny-transformer": (_what(N_("TinyTransformer, {n} Pre-Norm blocks"), n=2), _tiny),
    "model-mix-ln": (_what(N_("TinyTransformer, Mix-LN ({n} of {total} blocks Post-Norm), logits capped at {c}"),
                           n=1, total=4, c=3), _mix_ln),
    "decoder": (_what(N_("TransformerDecoderBlock, Post-Norm, key padding")), _decoder),
    "seq2seq": (_what(N_("TinySeq2Seq, {blocks} Pre-Norm blocks, source padding"), blocks="2 + 2"),
                _seq2seq),
    "cross-entropy": (_what(N_("CrossEntropyLoss, (N, C, d) logits, weights, smoothing")),
                      _cross_entropy),
    "z-loss": ("CrossEntropyLoss(z_loss=0.1, ignore_index=0)", _z_loss),
    "softcap": (_on("SoftCap(2)", "(3, 5)"), _softcap),
    "mse-none": (_on("MSELoss(reduction='none')", "(3, 4)"), _mse_none),
    "softmax-dtype": (_on("Softmax(axis=1, dtype=float64)", "(3, 5)"), _softmax_dtype),
    "sgd-nesterov": (_what(N_("{optimizer}; the bias's group: {group}"),
                           optimizer="SGD(lr=0.1, momentum=0.9, weight_decay=0.01, nesterov=True)",
                           group="lr=0.05, weight_decay=0"),
                     _optimizer(optim.SGD, {"lr": 0.05, "weight_decay": 0.0}, lr=0.1, momentum=0.9,
                                weight_decay=0.01, nesterov=True)),
    "sgd-maximize": (_what(N_("{optimizer}; the bias's group: {group}"),
                           optimizer="SGD(lr=0.1, momentum=0.8, dampening=0.3, weight_decay=0.1, maximize=True)",
                           group="maximize=False"),
                     _optimizer(optim.SGD, {"maximize": False}, lr=0.1, momentum=0.8, dampening=0.3,
                                weight_decay=0.1, maximize=True)),
    "adam-amsgrad": (_what(N_("{optimizer}; the bias's group: {group}"),
                           optimizer="Adam(lr=0.05, weight_decay=0.05, amsgrad=True)", group="betas=(0.5, 0.9)"),
                     _optimizer(optim.Adam, {"betas": (0.5, 0.9)}, lr=0.05, weight_decay=0.05, amsgrad=True)),
    "adamw-maximize": (_what(N_("{optimizer}; the bias's group: {group}"),
                             optimizer="AdamW(lr=0.05, weight_decay=0.1, amsgrad=True, maximize=True)",
                             group="weight_decay=0"),
                       _optimizer(optim.AdamW, {"weight_decay": 0.0}, lr=0.05, weight_decay=0.1, amsgrad=True,
                                  maximize=True)),
}


def _model_name(text):
    if text not in MODELS:
        raise argparse.ArgumentTypeError(
            _("unknown {text!r}: expected a model --help lists ({examples}, ...)").format(
                text=text[:20], examples="layernorm, attention"))  # names a user types: code
    return text


def add_arguments(parser):
    parser.description = _(DESCRIPTION).format(steps=STEPS)
    width = max(map(len, MODELS))
    lines = []
    for name, (what, _build) in MODELS.items():  # the name, then its description
        what = fill(_description(what), 80, indent=" " * (width + 4))
        lines.append(f"{name:<{width}}  {what[width + 4:]}")
    parser.epilog = _(EPILOG).format(models="\n  ".join(lines), steps=STEPS)
    parser.add_argument("model", metavar="MODEL", type=_model_name,
                        help=_("which built-in model (listed below)"))
    parser.add_argument("--dtype", choices=["float64", "float32"], default="float64",
                        help=_("parameters and inputs (default %(default)s)"))
    parser.add_argument("--eval", action="store_true",
                        help=_("evaluation mode (default: training mode)"))
    parser.add_argument("--fast", action="store_true",
                        help=_("the norms of the fast tier, normcore.fast"))
    parser.add_argument("--seed", type=seed, default=0,
                        help=_("seed of parameters, inputs and dy (default %(default)s)"))


def _cast(module, dtype):
    """The module with every floating parameter and buffer in ``dtype``, gradients zeroed."""
    module.to(dtype).zero_grad()
    return module


def run(args):
    rng = np.random.default_rng(args.seed)
    module, *built = MODELS[args.model][1]("fast" if args.fast else "reference", rng)
    is_optimizer = isinstance(module, optim.Optimizer)
    if is_optimizer and (args.eval or args.fast):
        print(_("normcore compare: {model} is an optimizer;\nit has no evaluation mode (--eval) "
                "and no fast tier (--fast): leave them out").format(model=args.model), file=sys.stderr)
        return 2
    try:
        import torch  # noqa: F401
    except ImportError:
        print(_("normcore compare: PyTorch is not installed; it is the oracle this command\n"
                "compares against.") + "\n" + torch_hint(), file=sys.stderr)
        return 2
    dtype = np.dtype(args.dtype)
    if is_optimizer:
        return _run_optimizer(module, *built, dtype, args.seed)
    inputs, *options = built
    _cast(module, dtype)
    inputs = tuple(x.astype(dtype) if x is not None and np.issubdtype(x.dtype, np.floating) else x
                   for x in inputs)
    if args.eval:
        module.eval()
    report = compare(module, *inputs, seed=args.seed, options=options[0] if options else None)
    if has_norm(module):
        print(_(NORM_NAMES))
    return 0 if report.passed else 1


def _run_optimizer(optimizer, model, dtype, seed):
    """``STEPS`` steps of ``optimizer`` over ``model``'s parameters (in ``dtype``) against its
    torch twin, rows named as the model names its parameters; the exit status."""
    _cast(model, dtype)  # the same Parameter objects: the optimizer holds them still
    name = {id(p): n for n, p in model.named_parameters()}
    report = compare_optimizer(optimizer, STEPS, names=[name[id(p)] for p in optimizer.params], seed=seed)
    return 0 if report.passed else 1
