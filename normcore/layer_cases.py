"""Small, randomly initialised instances of every layer with inputs to feed them.

``normcore gradcheck`` checks each case; tests and the tour use the same list. A case has random
gamma and beta (never the ones/zeros they start at, which hide bugs) and a float64 input.
"""

import re
from dataclasses import dataclass

import numpy as np

from . import nn, norms
from .i18n import N_, translator
from .module import Module

_ = translator("cli")

# The English words of the labels and how a label says them in the language in use (the rest
# of a label is code: class names, shapes, arguments): (pattern, message with the pattern's
# groups as its fields), the longest first.
LABEL_WORDS = (
    (r"no affine \(alpha only\)", N_("no affine (alpha only)")),
    (r"no running stats", N_("no running stats")),
    (r"no bias", N_("no bias")),
    (r"tracked", N_("tracked")),
    (r"affine", N_("affine")),
    (r"train", N_("train")),
    (r", eval", N_(", eval")),
    (r"eval", N_("eval")),
    (r"batch (?P<n>\d+)", N_("batch {n}")),
    (r"over (?P<axes>\(\S+\))", N_("over {axes}")),
    (r"\(exact\)", N_("(exact)")),
    (r"repeated ids", N_("repeated ids")),
    (r"encoder", N_("encoder")),
    (r"(?P<n>\d+(?: \+ \d+)?) blocks", N_("{n} blocks")),
)
_LABEL_WORDS = [(re.compile(("" if pattern[0] == "," else r"(?<![\w=])") + pattern + r"(?![\w=])"), message)
                for pattern, message in LABEL_WORDS]


def shown_label(label):
    """A case's label in the language in use: its English words translated, its code as it is
    ("BatchNorm1d no running stats, eval" -> "BatchNorm1d 无移动统计量，推理")."""
    for pattern, message in _LABEL_WORDS:  # a translated word is no English word for the next
        label = pattern.sub(lambda found, message=message: _(message).format(**found.groupdict()), label)
    return re.sub(r" (?=[（，])", "", label)  # no space before Chinese punctuation


@dataclass
class Case:
    label: str  # e.g. "BatchNorm1d (N,C,L) train": what gradcheck --only matches, in English
    module: Module
    inputs: tuple

    @property
    def shown(self):
        """The label in the language in use, as the tables print it."""
        return shown_label(self.label)


def randomize_parameters(module, rng):
    """Give every parameter standard-normal values (in place); returns the module."""
    for p in module.parameters():
        p.data[...] = rng.standard_normal(p.shape)
    return module


def norm_cases(seed=0):
    """Every norm layer (DyT, Ghost BatchNorm and Batch Renorm included) and Dropout, on rank 2
    to 5 inputs, in training and evaluation, with and without bias. Batch Renorm in training is
    checked where r and d sit at their clips: elsewhere they depend on x, and its backward, which
    holds them constant (as the paper does), is not the derivative of its forward."""
    rng = np.random.default_rng(seed)
    x = lambda *shape: rng.standard_normal(shape)  # noqa: E731

    def warmed(bn, shape):  # running statistics that are not the initial 0 and 1
        for _ in range(3):
            bn.forward(x(*shape) * 2 + 1)
        return bn

    cases = [
        Case("LayerNorm (N,D)", norms.LayerNorm(6), (x(3, 6),)),
        Case("LayerNorm (B,T,D)", norms.LayerNorm(5), (x(2, 3, 5),)),
        Case("LayerNorm (N,C,H,W) over (C,H,W)", norms.LayerNorm((2, 3, 2)), (x(2, 2, 3, 2),)),
        Case("LayerNorm no bias", norms.LayerNorm(6, bias=False), (x(3, 6),)),
        Case("RMSNorm (N,D)", norms.RMSNorm(6), (x(3, 6),)),
        Case("RMSNorm (B,T,D) eps=1e-6", norms.RMSNorm(5, eps=1e-6), (x(2, 3, 5),)),
        Case("RMSNorm (N,C,H,W) over (H,W)", norms.RMSNorm((2, 3)), (x(2, 2, 2, 3),)),
        Case("BatchNorm1d (N,C) train", norms.BatchNorm1d(4), (x(5, 4),)),
        # With two samples x_hat is +-sqrt(var / (var + eps)): nearly +-1 whatever x is, so the
        # input gradient is only eps's doing. A small spread keeps it large enough to measure.
        Case("BatchNorm1d (N,C) batch 2", norms.BatchNorm1d(4), (0.01 * x(2, 4),)),
        Case("BatchNorm1d (N,C,L) train", norms.BatchNorm1d(3), (x(2, 3, 4),)),
        Case("BatchNorm1d (N,C) eval", warmed(norms.BatchNorm1d(4), (6, 4)).eval(), (x(5, 4),)),
        Case("BatchNorm1d (N,C) momentum=None", norms.BatchNorm1d(4, momentum=None), (x(5, 4),)),
        Case("BatchNorm1d no running stats, eval",
             norms.BatchNorm1d(4, track_running_stats=False).eval(), (x(5, 4),)),
        Case("BatchNorm2d (N,C,H,W) train", norms.BatchNorm2d(3), (x(2, 3, 2, 3),)),
        Case("BatchNorm2d (N,C,H,W) eval", warmed(norms.BatchNorm2d(3), (2, 3, 2, 2)).eval(),
             (x(2, 3, 2, 3),)),
        Case("GroupNorm (N,C,L) G=2", norms.GroupNorm(2, 4), (x(2, 4, 3),)),
        Case("GroupNorm (N,C,H,W) G=3", norms.GroupNorm(3, 6), (x(2, 6, 2, 2),)),
        Case("GroupNorm (N,C) G=1", norms.GroupNorm(1, 4), (x(3, 4),)),
        Case("InstanceNorm1d (N,C,L) affine", norms.InstanceNorm1d(3, affine=True), (x(2, 3, 4),)),
        Case("InstanceNorm2d (N,C,H,W) affine", norms.InstanceNorm2d(2, affine=True), (x(2, 2, 3, 2),)),
        Case("InstanceNorm2d tracked, eval",
             warmed(norms.InstanceNorm2d(2, affine=True, track_running_stats=True), (2, 2, 2, 2)).eval(),
             (x(2, 2, 3, 2),)),
        Case("Dropout p=0.3 train", nn.Dropout(0.3, rng=seed), (x(4, 5),)),
        Case("Dropout p=0.3 eval", nn.Dropout(0.3, rng=seed).eval(), (x(4, 5),)),
    ]
    for c in cases:
        randomize_parameters(c.module, rng)
    # DyT draws after the others, so that their inputs and parameters stay what they were;
    # alpha is random too (standard normal), like gamma and beta
    dyt = [
        Case("DyT (N,D)", norms.DyT(6), (x(3, 6),)),
        Case("DyT (B,T,D) alpha_init=1.5", norms.DyT(5, alpha_init=1.5), (x(2, 3, 5),)),
        Case("DyT (N,C,H,W) over (H,W)", norms.DyT((2, 3)), (x(2, 2, 2, 3),)),
        Case("DyT no bias", norms.DyT(6, bias=False), (x(3, 6),)),
        Case("DyT no affine (alpha only)", norms.DyT(6, elementwise_affine=False), (x(3, 6),)),
    ]
    for c in dyt:
        randomize_parameters(c.module, rng)
    # 3-D inputs and bias=False, drawn after the others too (a weight without a bias: no dbeta)
    newer = [
        Case("BatchNorm1d no bias", norms.BatchNorm1d(4, bias=False), (x(5, 4),)),
        Case("BatchNorm3d (N,C,D,H,W) train", norms.BatchNorm3d(2), (x(2, 2, 2, 3, 2),)),
        Case("BatchNorm3d no bias, eval", warmed(norms.BatchNorm3d(2, bias=False), (2, 2, 2, 2, 2)).eval(),
             (x(2, 2, 2, 3, 2),)),
        Case("GroupNorm (N,C,D,H,W) G=2 no bias", norms.GroupNorm(2, 4, bias=False), (x(2, 4, 2, 2, 2),)),
        Case("InstanceNorm2d affine no bias", norms.InstanceNorm2d(2, affine=True, bias=False), (x(2, 2, 3, 2),)),
        Case("InstanceNorm3d (N,C,D,H,W) affine", norms.InstanceNorm3d(2, affine=True), (x(2, 2, 2, 3, 2),)),
        Case("InstanceNorm3d (C,D,H,W) tracked no bias, eval",
             warmed(norms.InstanceNorm3d(2, affine=True, bias=False, track_running_stats=True), (2, 2, 2, 2, 2)).eval(),
             (x(2, 2, 3, 2),)),
    ]
    for c in newer:
        randomize_parameters(c.module, rng)

    def far(brn):  # running statistics far from the batch's: r and d sit at their clips, which
        brn.running_mean[...], brn.running_var[...] = 30.0, 100.0  # makes them constant in x too
        return brn

    # Ghost BatchNorm and Batch Renorm, drawn last
    batch_variants = [
        Case("GhostBatchNorm1d (N,C,L) train", norms.GhostBatchNorm1d(3, virtual_batch_size=2), (x(5, 3, 2),)),
        Case("GhostBatchNorm2d (N,C,H,W) eval", warmed(norms.GhostBatchNorm2d(2, virtual_batch_size=2),
                                                       (4, 2, 2, 2)).eval(), (x(3, 2, 2, 3),)),
        Case("BatchRenorm1d (N,C) train", far(norms.BatchRenorm1d(4, r_max=1.5, d_max=0.5)), (x(5, 4),)),
        Case("BatchRenorm2d (N,C,H,W) eval", warmed(norms.BatchRenorm2d(3), (2, 3, 2, 2)).eval(), (x(2, 3, 2, 3),)),
    ]
    for c in batch_variants:
        randomize_parameters(c.module, rng)
    return cases + dyt + newer + batch_variants


def perturb_parameters(module, rng, scale=0.5):
    """Add N(0, scale**2) noise to every parameter (in place); returns the module.

    For deep stacks this beats ``randomize_parameters``: the layers keep their initialised
    scale (so softmax and the residual stream do not saturate, which would make gradients too
    small to measure against rounding), while gamma, beta and the biases move away from the
    ones and zeros they start at.
    """
    for p in module.parameters():
        p.data += scale * rng.standard_normal(p.shape)
    return module


class FixedTarget(Module):
    """``loss(pred, target)`` with the target held fixed, so only ``pred`` is differentiated."""

    def __init__(self, loss, target):
        self.loss, self.target = loss, target

    def forward(self, pred):
        return self.loss(pred, self.target)

    def backward(self, dloss):
        return self.loss.backward(dloss)


def transformer_cases(seed=0):
    """The Transformer stack: Linear, activations, embeddings, attention (self and cross),
    feed-forward, every block position with both norms (and DyT, pre and post), an encoder
    block, a 2-block model, the decoder block, an encoder-decoder model, QK-norm in each
    attention and Peri-LN in each block and model, the losses, and today's LLM options
    (``llm_cases``). Sizes are tiny so that
    central differences over every parameter stay fast."""
    from . import nn  # the layers above the norms

    rng = np.random.default_rng(seed)
    x = lambda *shape: rng.standard_normal(shape)  # noqa: E731
    ids = lambda high, *shape: rng.integers(0, high, shape)  # noqa: E731
    cases = [
        Case("Linear (N,in)", nn.Linear(4, 3, rng=seed), (x(5, 4),)),
        Case("Linear (B,T,in) no bias", nn.Linear(3, 2, bias=False, rng=seed), (x(2, 3, 3),)),
        Case("ReLU", nn.ReLU(), (x(3, 5),)),
        Case("GELU (exact)", nn.GELU(), (x(3, 5),)),
        Case("GELU (tanh)", nn.GELU(approximate="tanh"), (x(3, 5),)),
        Case("LogSoftmax axis=1", nn.LogSoftmax(axis=1), (x(3, 4, 2),)),
        Case("Sigmoid", nn.Sigmoid(), (x(3, 5),)),
        Case("Tanh", nn.Tanh(), (x(3, 5),)),
        Case("Softmax axis=-1", nn.Softmax(), (x(3, 5),)),
        Case("Softmax axis=0", nn.Softmax(axis=0), (x(3, 4, 2),)),
        Case("Embedding repeated ids", nn.Embedding(5, 3, rng=seed), (np.array([[1, 3, 1], [1, 0, 4]]),)),
        Case("PositionalEmbedding", nn.PositionalEmbedding(5, 3, rng=seed), (x(2, 4, 3),)),
        Case("CausalSelfAttention H=2", nn.CausalSelfAttention(4, 2, rng=seed), (x(2, 3, 4),)),
        Case("FeedForward gelu", nn.FeedForward(3, 5, rng=seed), (x(2, 2, 3),)),
        Case("FeedForward gelu_tanh", nn.FeedForward(3, 5, activation="gelu_tanh", rng=seed), (x(2, 2, 3),)),
        Case("FeedForward relu", nn.FeedForward(3, 5, activation="relu", rng=seed), (x(2, 2, 3),)),
        Case("MultiheadAttention Tq!=Tk kdim vdim", nn.MultiheadAttention(4, 2, kdim=3, vdim=5, rng=seed),
             (x(2, 3, 4), x(2, 5, 3), x(2, 5, 5))),
        Case("MultiheadAttention bias_kv zero_attn",
             nn.MultiheadAttention(4, 2, add_bias_kv=True, add_zero_attn=True, causal=True, rng=seed),
             (x(2, 3, 4), x(2, 4, 4), x(2, 4, 4))),
        Case("TransformerBlock encoder post", nn.TransformerBlock(4, 2, 6, position="post", causal=False, rng=seed),
             (x(2, 3, 4),)),
        # QK-norm: D = 3 channels per head (a LayerNorm over 2 channels is all eps, too ill-conditioned)
        Case("CausalSelfAttention qk_norm=rmsnorm", nn.CausalSelfAttention(6, 2, qk_norm="rmsnorm", rng=seed),
             (x(2, 3, 6),)),
        Case("MultiheadSelfAttention qk_norm=layernorm",
             nn.MultiheadSelfAttention(6, 2, qk_norm="layernorm", rng=seed), (x(2, 3, 6),)),
        Case("MultiheadAttention qk_norm=layernorm bias_kv zero_attn",
             nn.MultiheadAttention(6, 2, add_bias_kv=True, add_zero_attn=True, kdim=4, qk_norm="layernorm",
                                   rng=seed), (x(2, 3, 6), x(2, 4, 4), x(2, 4, 6))),
        Case("MultiheadAttention qk_norm=rmsnorm Tq!=Tk", nn.MultiheadAttention(6, 2, qk_norm="rmsnorm", rng=seed),
             (x(2, 3, 6), x(2, 5, 6), x(2, 5, 6))),
    ]
    for position in ("pre", "post", "deepnorm", "none", "peri"):
        for norm in ("layernorm", "rmsnorm"):
            if position == "none" and norm == "rmsnorm":
                continue  # no norm: the same block as with layernorm
            block = nn.TransformerBlock(4, 2, 6, norm=norm, position=position, n_layers=2, rng=seed)
            cases.append(Case(f"TransformerBlock {position} {norm}", block, (x(2, 3, 4),)))
    cases += [
        Case("TransformerBlock pre dropout=0.3", nn.TransformerBlock(4, 2, 6, dropout=0.3, rng=seed),
             (x(2, 3, 4),)),
        Case("TinyTransformer 2 blocks pre", nn.TinyTransformer(5, 4, 2, 2, 4, d_ff=6, rng=seed), (ids(5, 2, 3),)),
        Case("TransformerBlock encoder peri qk_norm=layernorm",
             nn.TransformerBlock(6, 2, 8, position="peri", causal=False, qk_norm="layernorm", rng=seed),
             (x(2, 3, 6),)),
        Case("TinyTransformer 2 blocks peri qk_norm=rmsnorm",
             nn.TinyTransformer(5, 6, 2, 2, 4, d_ff=6, position="peri", qk_norm="rmsnorm", rng=seed),
             (ids(5, 2, 4),)),
        Case("TransformerDecoderBlock peri qk_norm=rmsnorm",
             nn.TransformerDecoderBlock(4, 2, 6, position="peri", qk_norm="rmsnorm", rng=seed),
             (x(2, 3, 4), x(2, 4, 4))),
        Case("TinySeq2Seq 1 + 1 blocks peri qk_norm=rmsnorm",
             nn.TinySeq2Seq(5, 6, 6, 1, 2, 4, 3, d_ff=6, position="peri", qk_norm="rmsnorm", rng=seed),
             (ids(5, 2, 4), ids(6, 2, 3))),
        Case("TransformerDecoderBlock pre", nn.TransformerDecoderBlock(4, 2, 6, rng=seed), (x(2, 3, 4), x(2, 4, 4))),
        Case("TransformerDecoderBlock post", nn.TransformerDecoderBlock(4, 2, 6, position="post", rng=seed),
             (x(2, 3, 4), x(2, 4, 4))),
        Case("TinySeq2Seq 1 + 1 blocks pre", nn.TinySeq2Seq(5, 6, 4, 1, 2, 4, 3, d_ff=6, rng=seed),
             (ids(5, 2, 4), ids(6, 2, 3))),
        Case("CrossEntropyLoss (N,C,d) ignore_index", nn.CrossEntropyLoss(),
             (x(2, 4, 3), np.array([[0, 3, -100], [2, 1, 3]]))),
        Case("CrossEntropyLoss weight, label_smoothing",
             nn.CrossEntropyLoss(weight=rng.uniform(0.5, 2.0, 4), label_smoothing=0.2),
             (x(5, 4), np.array([0, 3, -100, 2, 1]))),
        Case("MSELoss", FixedTarget(nn.MSELoss(), x(3, 4)), (x(3, 4),)),
    ]
    for c in cases:
        perturb_parameters(c.module, rng)
    # DyT in place of the norms, drawn after the others so that their values stay what they were
    dyt = [Case(f"TransformerBlock {position} dyt",
                nn.TransformerBlock(4, 2, 6, norm="dyt", position=position, n_layers=2, rng=seed), (x(2, 3, 4),))
           for position in ("pre", "post")]
    for c in dyt:
        perturb_parameters(c.module, rng)
        for norm in (c.module.norm1, c.module.norm2):  # |alpha| near 0 would flatten the
            norm.alpha.data[...] = rng.choice([-1, 1]) * rng.uniform(0.5, 1.5)  # attention's input
    return cases + dyt + llm_cases(rng, seed)


def llm_cases(rng, seed):
    """The placements and logit controls of today's LLMs, drawn last so that the cases above
    keep their values: the reordered norm (OLMo 2), LayerNorm Scaling, Mix-LN, QK-norm over the
    whole projection, soft-capping of attention scores and final logits, the z-loss."""
    x = lambda *shape: rng.standard_normal(shape)  # noqa: E731
    ids = lambda high, *shape: rng.integers(0, high, shape)  # noqa: E731
    cases = [
        Case("SoftCap cap=1.5", nn.SoftCap(1.5), (2.0 * x(3, 5),)),
        Case("MultiheadSelfAttention qk_norm=rmsnorm qk_norm_scope=projection attn_softcap=1.5",
             nn.MultiheadSelfAttention(6, 2, qk_norm="rmsnorm", qk_norm_scope="projection", attn_softcap=1.5,
                                       rng=seed), (x(2, 3, 6),)),
        Case("MultiheadAttention qk_norm=layernorm qk_norm_scope=projection bias_kv zero_attn",
             nn.MultiheadAttention(6, 2, add_bias_kv=True, add_zero_attn=True, kdim=4, qk_norm="layernorm",
                                   qk_norm_scope="projection", attn_softcap=2.0, rng=seed),
             (x(2, 3, 6), x(2, 4, 4), x(2, 4, 6))),
        Case("TransformerBlock position=reordered rmsnorm",
             nn.TransformerBlock(4, 2, 6, norm="rmsnorm", position="reordered", rng=seed), (x(2, 3, 4),)),
        Case("TransformerBlock position=reordered qk_norm=rmsnorm qk_norm_scope=projection",
             nn.TransformerBlock(4, 2, 4, position="reordered", qk_norm="rmsnorm", qk_norm_scope="projection",
                                 rng=seed), (x(2, 3, 4),)),
        Case("TransformerBlock pre norm_scale=depth layer_index=3",
             nn.TransformerBlock(4, 2, 6, norm_scale="depth", layer_index=3, rng=seed), (x(2, 3, 4),)),
        Case("TransformerDecoderBlock position=reordered attn_softcap=2",
             nn.TransformerDecoderBlock(4, 2, 6, position="reordered", attn_softcap=2.0, rng=seed),
             (x(2, 3, 4), x(2, 4, 4))),
        Case("TransformerDecoderBlock pre norm_scale=depth layer_index=2",
             nn.TransformerDecoderBlock(4, 2, 6, norm_scale="depth", layer_index=2, rng=seed),
             (x(2, 3, 4), x(2, 4, 4))),
        Case("TinyTransformer position=mix mix_post_fraction=0.5 logit_softcap=2",
             nn.TinyTransformer(3, 4, 2, 2, 3, d_ff=4, position="mix", mix_post_fraction=0.5, logit_softcap=2.0,
                                rng=seed), (ids(3, 2, 3),)),
        Case("TinyTransformer position=reordered norm=rmsnorm qk_norm_scope=projection attn_softcap=2",
             nn.TinyTransformer(5, 4, 1, 2, 4, d_ff=4, norm="rmsnorm", position="reordered", qk_norm="rmsnorm",
                                qk_norm_scope="projection", attn_softcap=2.0, rng=seed), (ids(5, 2, 3),)),
        Case("TinyTransformer norm_scale=depth n_layers=2",
             nn.TinyTransformer(3, 4, 2, 2, 3, d_ff=4, norm_scale="depth", rng=seed), (ids(3, 2, 3),)),
        Case("TinySeq2Seq position=reordered logit_softcap=2",
             nn.TinySeq2Seq(3, 3, 4, 1, 2, 3, 2, d_ff=4, position="reordered", logit_softcap=2.0, rng=seed),
             (ids(3, 2, 3), ids(3, 2, 2))),
        Case("CrossEntropyLoss z_loss=0.1 ignore_index", nn.CrossEntropyLoss(z_loss=0.1),
             (x(2, 4, 3), np.array([[0, 3, -100], [2, 1, 3]]))),
        Case("CrossEntropyLoss z_loss=0.1 reduction=sum",
             nn.CrossEntropyLoss(z_loss=0.1, reduction="sum", label_smoothing=0.1), (x(5, 4), ids(4, 5))),
        Case("CrossEntropyLoss z_loss=0.1 reduction=none", nn.CrossEntropyLoss(z_loss=0.1, reduction="none"),
             (x(5, 4), np.array([0, 3, -100, 2, 1]))),
    ]
    for c in cases:
        perturb_parameters(c.module, rng)
    return cases


def weight_cases(seed=0):
    """The weight side and residual scaling: WeightNorm over each ``dim``, the standardised
    Linear, LayerScale and ReZero, with random parameters (ReZero's alpha away from its 0)."""
    from . import nn  # the layers above the norms

    rng = np.random.default_rng([seed, 37])  # a stream of its own: the cases above keep their values
    x = lambda *shape: rng.standard_normal(shape)  # noqa: E731
    cases = [
        Case("WeightNorm (N,in) dim=0", nn.WeightNorm(nn.Linear(4, 3, rng=seed), dim=0), (x(5, 4),)),
        Case("WeightNorm (B,T,in) dim=None no bias", nn.WeightNorm(nn.Linear(3, 2, bias=False, rng=seed), dim=None),
             (x(2, 3, 3),)),
        Case("WSLinear (N,in)", nn.WSLinear(4, 3, rng=seed), (x(5, 4),)),
        Case("LayerScale (B,T,C)", nn.LayerScale(4), (x(2, 3, 4),)),
        Case("ReZero (B,T,C)", nn.ReZero(), (x(2, 3, 4),)),
    ]
    for c in cases:
        randomize_parameters(c.module, rng)
    return cases


def all_cases(seed=0):
    """Every case ``normcore gradcheck`` runs."""
    return norm_cases(seed) + transformer_cases(seed) + weight_cases(seed)
