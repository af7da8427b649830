"""The numbers bank_llm.toml quotes, each computed by normcore's layers at small size.

Every function takes no argument, returns one number, is deterministic (fixed seeds) and runs
in well under a second on one core. They measure mechanisms of the layers the LLM-era questions
are about, at initialisation or on one batch: the reordered norm of OLMo 2
(``TransformerBlock(position="reordered")``), the curse of depth and LayerNorm Scaling
(``norm_scale="depth"``, the probes of the curse_of_depth experiment before training), QK-norm per
head or over the whole projection (``qk_norm_scope``), soft-capping (``SoftCap``, ``attn_softcap``)
and the z-loss (``CrossEntropyLoss(z_loss=)``). What training does is the experiments' (README:
curse_of_depth, logit_control); the answers say it in words.
"""

from functools import cache

import numpy as np

from ... import nn
from ...experiments.curse_of_depth import PROBE_SEED, jacobian_distance
from ...experiments.qk_norm import attention_logits
from ...experiments._positions import residual_stream, tiny_model
from ...experiments.warmup import copy_task

Z_LOSS = 1e-4  # PaLM's coefficient, and the logit_control experiment's
CAP = 50.0     # Gemma 2's cap on the attention scores, and the logit_control experiment's


# ---------------------------------------------------------------- the reordered norm (OLMo 2)

def _block(position, qk_norm=None):
    """One causal TransformerBlock (C 32, 4 heads, LayerNorm) with the norm at ``position``."""
    return nn.TransformerBlock(32, 4, position=position, n_layers=4, rng=2, qk_norm=qk_norm,
                               qk_norm_scope="projection" if qk_norm else "head")


def _input():
    return np.random.default_rng(4).standard_normal((4, 8, 32))


def _update_growth(position, scale=10.0):
    """How many times the RMS of one block's residual update y - x grows when every weight
    matrix of the block is multiplied by ``scale``."""
    def update_rms(s):
        block, x = _block(position), _input()
        for _, p in block.named_parameters():
            if p.data.ndim == 2:
                p.data *= s
        return float(np.sqrt(((block(x) - x) ** 2).mean()))
    return update_rms(scale) / update_rms(1.0)


def pre_update_growth_x10():
    """A Pre-LN block's residual update, its weights multiplied by 10: nothing bounds it."""
    return _update_growth("pre")


def reordered_update_growth_x10():
    """The same for the reordered block, x + Norm(F(x)): the norm on the branch's output
    rescales what it adds to the stream."""
    return _update_growth("reordered")


def _largest_logit_growth(qk_norm, scale=10.0):
    """How many times the reordered block's largest attention logit grows when its input (the
    residual stream) is multiplied by ``scale``: its branch sees the stream unnormalised."""
    block, x = _block("reordered", qk_norm), _input()
    largest = [float(np.abs(attention_logits(block.attn, s * x)[0]).max()) for s in (1.0, scale)]
    return largest[1] / largest[0]


def reordered_logit_growth_x10():
    """The reordered block without QK-norm: its input x 10 makes the attention logits 100 times
    larger (q and k are both linear in it)."""
    return _largest_logit_growth(None)


def reordered_qk_norm_logit_growth_x10():
    """The same with QK-RMSNorm over the whole projection, OLMo 2's pairing: the logits stay."""
    return _largest_logit_growth("rmsnorm")


# ---------------------------------------------------------------- the curse of depth

@cache
def _depth_probe(placement):
    """An untrained 8-block TinyTransformer of the curse_of_depth experiment (seed 0) probed as
    the experiment probes it, on 4 sequences of the copy task: each block's Jacobian distance
    from the identity, ||J - I||_F / sqrt(n) (8,), and the stream's RMS x_0 .. x_8 (9,)."""
    task = copy_task()
    model = tiny_model(task, placement, 8, 0).eval()
    tokens, _ = task.batch(4, PROBE_SEED)
    xs = list(residual_stream(model, tokens))
    rng = np.random.default_rng(3000)
    jacobian = [jacobian_distance(block, x, rng) for block, x in zip(model.blocks, xs[:-1])]
    return np.array(jacobian), np.array([np.sqrt(np.mean(x ** 2)) for x in xs])


def pre_stream_growth_8():
    """RMS of the stream leaving block 8 over the RMS entering block 1, Pre-LN, at initialisation."""
    rms = _depth_probe("pre")[1]
    return float(rms[-1] / rms[0])


def lns_stream_growth_8():
    """The same with LayerNorm Scaling: the stream grows less, as the method intends."""
    rms = _depth_probe("lns")[1]
    return float(rms[-1] / rms[0])


def pre_jacobian_distance_first():
    """||J - I||_F / sqrt(n) of block 1 of the 8-block Pre-LN model at initialisation."""
    return float(_depth_probe("pre")[0][0])


def pre_jacobian_distance_last():
    """The same of block 8: the deep block is nearer the identity."""
    return float(_depth_probe("pre")[0][-1])


def lns_jacobian_distance_last():
    """The same of block 8 with LayerNorm Scaling (each norm's output times 1/sqrt(l))."""
    return float(_depth_probe("lns")[0][-1])


def lns_scale_block_8():
    """The factor LayerNorm Scaling puts on block 8's norms: 1/sqrt(8)."""
    return float(1.0 / np.sqrt(8))


# ---------------------------------------------------------------- QK-norm, soft-cap: the bounds

H, D = 4, 8  # the heads and head width of the attention the bounds are measured on


def _attention(**options):
    """A causal attention (C 32, 4 heads of 8) whose head 0 has W_q and W_k rows 8 times the
    others': one head whose logits grow, as in an unstable run."""
    attn = nn.MultiheadSelfAttention(H * D, H, causal=True, rng=5, **options)
    for lin in (attn.q, attn.k):
        lin.weight.data[:D] *= 8.0
    return attn


def _largest_logit(capped=True, **options):
    """The largest |logit| the softmax sees (``capped=False``: the score before a soft-cap)."""
    h = np.random.default_rng(6).standard_normal((2, 8, H * D))
    attn = _attention(**options)
    S, _, allowed = attention_logits(attn, h, capped=capped)
    return float(np.abs(S[..., allowed]).max())


def largest_logit_plain():
    """Head 0's logits with nothing bounding them."""
    return _largest_logit()


def largest_logit_qk_head():
    """With QK-RMSNorm per head (Gemma 3, Qwen 3): at most sqrt(D) with the initial gains."""
    return _largest_logit(qk_norm="rmsnorm", qk_norm_scope="head")


def largest_logit_qk_projection():
    """With QK-RMSNorm over the whole projection (OLMo 2): head 0 takes most of the shared norm."""
    return _largest_logit(qk_norm="rmsnorm", qk_norm_scope="projection")


def qk_bound_head():
    """sqrt(D): the per-head bound with unit gains (|q|, |k| <= sqrt(D))."""
    return float(np.sqrt(D))


def qk_bound_projection():
    """H * sqrt(D): the whole-projection bound with unit gains (|q_h|, |k_h| <= sqrt(H D))."""
    return float(H * np.sqrt(D))


def largest_logit_softcap():
    """With the attention scores soft-capped at 50: what the softmax sees stays below 50."""
    return _largest_logit(attn_softcap=CAP)


def largest_score_under_softcap():
    """The score under that cap: as large as with nothing (the cap bounds the output only)."""
    return _largest_logit(capped=False, attn_softcap=CAP)


# ---------------------------------------------------------------- soft-capping

def cap_value():
    """The cap c of the soft-capping measures (Gemma 2's on the attention scores)."""
    return CAP


def _softcap(s):
    """(c tanh(s / c), its derivative) at the scores ``s``, from SoftCap's forward and backward."""
    cap = nn.SoftCap(CAP)
    s = np.asarray(s, dtype=np.float64)
    return cap(s), cap.backward(np.ones_like(s))


def softcap_at_10():
    """SoftCap(50) at a score of 10: nearly the identity well below the cap."""
    return float(_softcap([10.0])[0][0])


def softcap_slope_at_10():
    """Its derivative 1 - tanh^2(s / c) at s = 10."""
    return float(_softcap([10.0])[1][0])


def softcap_slope_wrong_at_10():
    """What 1 - s^2, tanh' written without the cap, gives at s = 10."""
    return 1.0 - 10.0 ** 2


def softcap_at_80():
    """SoftCap(50) at a score of 80."""
    return float(_softcap([80.0])[0][0])


def softcap_at_120():
    """SoftCap(50) at a score of 120: still above the value at 80, the order kept."""
    return float(_softcap([120.0])[0][0])


def softcap_slope_at_120():
    """Its derivative at s = 120: small, but not 0 as a clip's is."""
    return float(_softcap([120.0])[1][0])


# ---------------------------------------------------------------- the z-loss

def _z_case(shift):
    """One row of 6 logits shifted by ``shift``: (log Z, the cross-entropy, the gradient with
    the z-loss, the gradient without it), from CrossEntropyLoss's forward and backward."""
    logits = np.random.default_rng(8).standard_normal((1, 6)) + shift
    target = np.array([2])
    out = []
    for z in (Z_LOSS, 0.0):
        loss = nn.CrossEntropyLoss(z_loss=z)
        value = float(loss(logits, target))
        out.append((value, loss.backward()))
    log_z = float(np.log(np.exp(logits).sum()))
    return log_z, out[1][0], out[0][1], out[1][1]


def log_z_shifted():
    """log Z of the row after every logit is raised by 10."""
    return _z_case(10.0)[0]


def ce_change_under_shift():
    """How much the plain cross-entropy changes when every logit is raised by 10: not at all."""
    return abs(_z_case(10.0)[1] - _z_case(0.0)[1])


def z_gradient_sum():
    """The sum over the classes of the z-loss's share of the gradient, logits raised by 10:
    2 * z_loss * log Z (the softmax sums to 1)."""
    _, _, with_z, without = _z_case(10.0)
    return float((with_z - without).sum())


def ce_gradient_sum():
    """The sum over the classes of the plain cross-entropy's gradient: softmax - one-hot, 0."""
    return abs(float(_z_case(10.0)[3].sum()))


def z_gradient_formula_error():
    """Largest |the z-loss's share of the gradient - 2 z log Z softmax(s)|, logits raised by 10."""
    log_z, _, with_z, without = _z_case(10.0)
    logits = np.random.default_rng(8).standard_normal((1, 6)) + 10.0
    softmax = np.exp(logits - log_z)
    return float(np.abs((with_z - without) - 2 * Z_LOSS * log_z * softmax).max())
