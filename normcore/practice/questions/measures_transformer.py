"""The numbers bank_transformer.toml quotes, each computed by normcore at small size.

Every function takes no argument, returns one number, is deterministic (fixed seeds) and runs
in well under two seconds on one core. Most repeat, at the same size, the evidence cell of the
claims row that the question's ``evidence`` names (notebooks/src/claims.py), so that the number
quoted in the answer is the number the claims notebook prints; the others measure a mechanism
of normcore's layers directly (QK-norm, DyT, Peri-LN).
"""

import math
from functools import cache

import numpy as np

from ... import nn, norms
from ...experiments._stacks import input_gradient, output_change, residual_stack, transformer_stack
from ...experiments.effective_depth import stream_statistics
from ...experiments.pre_post_gradients import gradients_at_init
from ...experiments.speed import count_passes
from ...nn.transformer import deepnorm_constants


# ---------------------------------------------------------------- shared stacks (claims.py's)
# The stacks and runs that several measures read are computed once (``cache``); the measures
# only read the arrays they return.

# the stacks of the claims notebook (experiments._stacks), computed once: measures only read them
residual_stack = cache(residual_stack)


@cache
def gradient_profile(position, n_blocks=8, n_seeds=4):
    """The gradient norm of every block (1 = next to the input) of freshly initialised
    TinyTransformers, one row per initialisation (the pre_post_gradients experiment, small)."""
    return np.array([gradients_at_init(position, n_blocks, seed) for seed in range(n_seeds)])


# ---------------------------------------------------------------- LayerNorm, not BatchNorm

def _padding_case():
    """Two sequences of lengths 5 and 2 (3 channels), the short one zero-padded to 5."""
    rng = np.random.default_rng(14)
    long_, short = rng.normal(2.0, 1.5, (1, 3, 5)), rng.normal(2.0, 1.5, (1, 3, 2))
    padded = np.concatenate([long_, np.pad(short, ((0, 0), (0, 0), (0, 3)))])
    return long_, short, padded


def padding_bn_change():
    """Largest change padding makes to BatchNorm's output of the long sequence's real tokens,
    against statistics over the 7 real tokens only (claims row bn-padding)."""
    long_, short, padded = _padding_case()
    real = np.concatenate([long_.reshape(3, 5), short.reshape(3, 2)], axis=1)
    masked = (long_[0] - real.mean(axis=1)[:, None]) / np.sqrt(real.var(axis=1)[:, None] + 1e-5)
    bn_padded = norms.BatchNorm1d(3, affine=False)(padded)
    return float(np.abs(bn_padded[0] - masked).max())


def padding_ln_change():
    """Largest change padding makes to LayerNorm's output of the short sequence's real tokens."""
    _, short, padded = _padding_case()
    ln = norms.LayerNorm(3)
    tokens = np.swapaxes(padded, 1, 2)  # (N, L, C)
    return float(np.abs(ln(tokens)[1, :2] - ln(np.swapaxes(short, 1, 2))[0]).max())


def _future_token_change(norm_of):
    """Largest change of the first token's output when the last of 8 tokens is replaced:
    ``norm_of(x)`` normalises a (1, T, C) batch of one sequence."""
    rng = np.random.default_rng(41)
    x = rng.standard_normal((1, 8, 16))
    changed = x.copy()
    changed[0, -1] = rng.standard_normal(16) * 3.0
    return float(np.abs(norm_of(changed)[0, 0] - norm_of(x)[0, 0]).max())


def bn_future_token_change():
    """BatchNorm in training mode on one sequence pools its tokens: the first token's output
    moves when a later token changes (a causal model would see the future)."""
    bn = norms.BatchNorm1d(16, affine=False)
    return _future_token_change(lambda x: np.swapaxes(bn(np.swapaxes(x, 1, 2)), 1, 2))


def ln_future_token_change():
    """The same for LayerNorm: each token is normalised on its own, so exactly 0."""
    return _future_token_change(norms.LayerNorm(16, elementwise_affine=False))


def _batch_mean_error(b, draws=400, seed=62):
    """Mean |batch mean| of b standard-normal values (one position, one feature)."""
    rng = np.random.default_rng(seed)
    return float(np.abs(rng.standard_normal((draws, b)).mean(axis=1)).mean())


def batch_mean_error_device4():
    """Error of a per-position batch mean from 4 sequences, in standard deviations (lm-small-batch)."""
    return _batch_mean_error(4)


def batch_mean_error_bert256():
    """The same from BERT's 256 sequences per batch."""
    return _batch_mean_error(256)


@cache
def _positions_case():
    """Per-position batch means (claims row bn-positions-not-identical): returns the mean error
    at b = 8 and b = 128 and the largest offset of one position's output when BatchNorm pools
    the positions."""
    rng = np.random.default_rng(61)
    s, d = 6, 4
    position_mean = 3 * rng.standard_normal((s, d))

    def batch(b):
        return position_mean + rng.standard_normal((b, s, d))

    error = {}
    for b in (8, 128):
        means = np.stack([batch(b).mean(axis=0) for _ in range(500)])
        error[b] = np.abs(means - position_mean).mean()
    x = batch(64)
    pooled = np.swapaxes(norms.BatchNorm1d(d, affine=False)(np.swapaxes(x, 1, 2)), 1, 2)
    return error[8], error[128], float(np.abs(pooled.mean(axis=0)).max())


def position_mean_error_ratio():
    """How many times smaller the per-position batch mean's error is at b = 128 than at b = 8."""
    e8, e128, _ = _positions_case()
    return float(e8 / e128)


def pooled_position_offset():
    """Largest mean of one position's output when BatchNorm pools (batch, positions)."""
    return _positions_case()[2]


# ---------------------------------------------------------------- Pre-Norm and Post-Norm

def _identity_weight(position, n_layers):
    """Weight of x_0 in x_L of the variance-preserving stack."""
    return float(stream_statistics(residual_stack(position, n_layers))[0][-1])


def post_identity_weight_2():
    """Weight of the input x_0 in the output of 2 Post-Norm layers (2^(-1) = 0.5 in theory)."""
    return _identity_weight("post", 2)


def post_identity_theory(n_layers):
    """2^(-l/2): the weight of x_0 after l Post-Norm layers if each divides by sqrt(2)."""
    return 2.0 ** (-n_layers / 2)


def post_identity_theory_2():
    """2^(-1)."""
    return post_identity_theory(2)


def post_identity_theory_8():
    """2^(-4)."""
    return post_identity_theory(8)


def post_identity_weight_8():
    """The same after 8 Post-Norm layers (2^(-4) = 0.0625 in theory)."""
    return _identity_weight("post", 8)


def pre_identity_weight_8():
    """Weight of x_0 in the output of 8 Pre-Norm layers."""
    return _identity_weight("pre", 8)


def stream_rms(position, n_layers):
    """RMS of x_L, the residual stream after n_layers (the input's is about 1)."""
    return float(stream_statistics(residual_stack(position, n_layers))[2][-1])


def pre_stream_rms_8():
    """RMS of the Pre-Norm stream after 8 layers (sqrt(9) = 3 in theory)."""
    return stream_rms("pre", 8)


def post_stream_rms_8():
    """RMS of the Post-Norm stream after 8 layers."""
    return stream_rms("post", 8)


def pre_consecutive_cosine_15():
    """cos(x_15, x_16) of a 16-layer Pre-Norm stack, averaged over tokens."""
    return float(stream_statistics(residual_stack("pre", 16))[1][15])


def pre_consecutive_cosine_theory_15():
    """sqrt((1 + l) / (2 + l)) at l = 15."""
    return math.sqrt(16 / 17)


def pre_consecutive_cosine_0():
    """cos(x_0, x_1) of the same stack."""
    return float(stream_statistics(residual_stack("pre", 16))[1][0])


def _first_over_last(position):
    """Per initialisation: mean gradient norm of the first two of 8 blocks over the last two."""
    profiles = gradient_profile(position)
    return profiles[:, :2].mean(axis=1) / profiles[:, -2:].mean(axis=1)


def post_first_over_last_min():
    """Smallest, over 4 initialisations, of Post-LN's first-two-blocks / last-two gradient ratio."""
    return float(_first_over_last("post").min())


def post_first_over_last_max():
    """Largest of the same."""
    return float(_first_over_last("post").max())


def _last_block_ratio():
    """Post-LN's gradient norm of the last of 8 blocks over Pre-LN's, per initialisation."""
    return gradient_profile("post")[:, -1] / gradient_profile("pre")[:, -1]


def post_over_pre_last_block_min():
    """Smallest, over 4 initialisations, of that ratio."""
    return float(_last_block_ratio().min())


def post_over_pre_last_block_max():
    """Largest of the same."""
    return float(_last_block_ratio().max())


@cache
def _mean_output_change(position, depth, n_seeds=4):
    """The relative output change of ``output_change``, averaged over seeds 0 .. n_seeds - 1."""
    return float(np.mean([output_change(position, depth, seed=s) for s in range(n_seeds)]))


def post_over_pre_output_change_8():
    """Post-LN's relative output change over Pre-LN's under the same small random weight
    change, 8 blocks, mean of 4 seeds each (claims row post-needs-warmup)."""
    return _mean_output_change("post", 8) / _mean_output_change("pre", 8)


def post_over_deepnorm_output_change_32():
    """Post-LN's relative output change over DeepNorm's, 32 blocks, mean of 2 seeds each (the
    claims row deep-needs-pre prints 4 seeds of each)."""
    return _mean_output_change("post", 32, 2) / _mean_output_change("deepnorm", 32, 2)


def deepnorm_alpha_32():
    """DeepNorm's alpha = (2N)^(1/4) for N = 32 blocks of 2 sub-layers."""
    return deepnorm_constants(32)[0]


def deepnorm_beta_32():
    """DeepNorm's beta = (8N)^(-1/4) for N = 32."""
    return deepnorm_constants(32)[1]


@cache
def _branch_share(depth, seed):
    """|the branches' part of dL/dx_0| / |the identity path's part, dL/dy| for a Pre-LN stack."""
    rng = np.random.default_rng(34 + seed)
    x, dy = rng.standard_normal((2, 4, 8, 32))
    dx = input_gradient(transformer_stack("pre", depth, seed=34 + seed), x, dy)
    return float(np.linalg.norm(dx - dy) / np.linalg.norm(dy))


def pre_branch_share_8_min():
    """Smallest, over 4 initialisations, of the branches' part over the identity's, 8 Pre-LN blocks."""
    return min(_branch_share(8, s) for s in range(4))


def pre_branch_share_8_max():
    """Largest of the same."""
    return max(_branch_share(8, s) for s in range(4))


@cache
def _final_norm_case():
    """(RMS of the residual stream entering norm_f, RMS after it) of an 8-block Pre-LN
    TinyTransformer at initialisation, on one batch of the copy task's tokens."""
    from ...experiments.peri_ln import rms
    from ...experiments._positions import residual_stream
    rng = np.random.default_rng(7)
    model = nn.TinyTransformer(10, 32, 8, 4, 16, position="pre", rng=3)
    tokens = rng.integers(0, 10, (8, 16))
    x_last = list(residual_stream(model, tokens))[-1]
    return rms(x_last), rms(model.norm_f(x_last))


def pre_final_stream_rms():
    """RMS of the stream that reaches norm_f, the final norm of an 8-block Pre-LN model."""
    return float(_final_norm_case()[0])


def pre_final_norm_rms():
    """RMS of norm_f's output on that stream."""
    return float(_final_norm_case()[1])


def _norm_count(position):
    """The norms in one normcore TransformerBlock with the norm at ``position``."""
    block = nn.TransformerBlock(32, 4, position=position, n_layers=4, rng=0)
    return sum(isinstance(getattr(block, name, None), norms.LayerNorm)
               for name in ("norm1", "norm2", "norm1_out", "norm2_out"))


def norms_per_pre_block():
    """Norms per Pre-LN block (one before each sub-layer)."""
    return _norm_count("pre")


def norms_per_peri_block():
    """Norms per Peri-LN block (one before and one after each sub-layer)."""
    return _norm_count("peri")


# ---------------------------------------------------------------- RMSNorm

def _passes(norm):
    rng = np.random.default_rng(20)
    x, dy = rng.standard_normal((2, 64, 256))
    return count_passes(norm, x, dy)


def ln_passes_total():
    """Passes over the data of normcore's reference LayerNorm, forward plus backward."""
    return int(sum(_passes(norms.LayerNorm(256))))


def rms_passes_total():
    """The same for RMSNorm."""
    return int(sum(_passes(norms.RMSNorm(256))))


def llama7b_norm_share_percent():
    """Share of LLaMA-7B's parameters held by its RMSNorm gains, in percent, counted from the
    architecture the LLaMA paper gives (d 4096, 32 layers, SwiGLU width 11008, vocabulary
    32000; two gains per layer and the final one), as the claims row llama-layers counts."""
    d, layers, ffn, vocab = 4096, 32, 11008, 32000
    gains = 2 * d * layers + d
    total = layers * (4 * d * d + 3 * d * ffn + 2 * d) + 2 * vocab * d + d
    return 100.0 * gains / total


# ---------------------------------------------------------------- Dropout

DROP_P = 0.4  # the drop probability of the Dropout measures (W3's printed example's)


def dropout_p():
    """The drop probability p the Dropout measures use."""
    return DROP_P


def dropout_kept_value():
    """The value a kept 1 takes under training-mode Dropout(p = 0.4): 1 / (1 - 0.4)."""
    return float(nn.Dropout(DROP_P, rng=0)(np.ones((2, 6))).max())


def dropout_mean_ratio():
    """mean(Dropout(0.4)(x)) / mean(x) over 20000 masks of a positive x (training mode)."""
    x = np.array([[1.0, 2.0, 3.0, 0.5]])
    drop = nn.Dropout(DROP_P, rng=22)
    return float(np.mean([drop(x) for _ in range(20000)]) / x.mean())


def unscaled_dropout_mean_ratio():
    """The same ratio for a dropout that keeps units without the 1/(1 - p) scale."""
    rng = np.random.default_rng(22)
    x = np.array([[1.0, 2.0, 3.0, 0.5]])
    masks = rng.random((20000,) + x.shape) >= DROP_P
    return float((x * masks).mean() / x.mean())


def dropout_eval_change():
    """Largest |Dropout(0.4) in eval mode (x) - x|: 0, nothing is dropped or rescaled."""
    x = np.random.default_rng(5).standard_normal((4, 8))
    return float(np.abs(nn.Dropout(DROP_P, rng=0).eval()(x) - x).max())


# ---------------------------------------------------------------- QK-norm

def _max_logit(attn, h):
    """Largest |q.k| / sqrt(D) of ``attn`` on h (B, T, C), recomputed from its weights."""
    from ...experiments.qk_norm import attention_logits
    S, _, allowed = attention_logits(attn, h)
    return float(np.abs(S[..., allowed]).max())


def _logit_growth(qk_norm):
    """How many times the largest logit grows when W_q and W_k are both multiplied by 3."""
    rng = np.random.default_rng(9)
    attn = nn.CausalSelfAttention(32, 2, rng=1, qk_norm=qk_norm)
    h = rng.standard_normal((4, 8, 32))
    before = _max_logit(attn, h)
    for lin in (attn.q, attn.k):
        lin.weight.data *= 3.0
    return _max_logit(attn, h) / before


def logit_growth_no_qk_norm():
    """Growth of the largest attention logit when W_q, W_k are tripled, without QK-norm (9)."""
    return _logit_growth(None)


def logit_growth_qk_rmsnorm():
    """The same with QK-RMSNorm: the logits do not move."""
    return _logit_growth("rmsnorm")


def qk_logit_bound_init():
    """The bound QK-RMSNorm puts on |logit| at initialisation (gains 1, D = 16): sqrt(D)."""
    from ...experiments.qk_norm import logit_bound
    return logit_bound(nn.CausalSelfAttention(32, 2, rng=1, qk_norm="rmsnorm"))


def _head_rms(scope):
    """RMS of each head's queries when head 0's rows of W_q are 4 times the others', after an
    RMSNorm over each head's D channels ("head") or over the whole projection's C ("projection",
    OLMo 2's variant); (H,)."""
    rng = np.random.default_rng(12)
    H, D = 4, 8
    q = rng.standard_normal((16, H * D))
    q[:, :D] *= 4.0  # head 0's projection is larger
    if scope == "projection":
        q = norms.RMSNorm(H * D, elementwise_affine=False)(q).reshape(16, H, D)
    else:
        q = norms.RMSNorm(D, elementwise_affine=False)(q.reshape(16, H, D))
    return np.sqrt((q ** 2).mean(axis=(0, 2)))


def projection_scope_head0_rms():
    """Head 0's query RMS after a whole-projection RMSNorm."""
    return float(_head_rms("projection")[0])


def projection_scope_other_head_rms():
    """The largest other head's query RMS after a whole-projection RMSNorm."""
    return float(_head_rms("projection")[1:].max())


def head_scope_max_rms_gap():
    """Largest |RMS - 1| over the heads after a per-head RMSNorm."""
    return float(np.abs(_head_rms("head") - 1.0).max())


# ---------------------------------------------------------------- DyT and Peri-LN

def _rescaled_change(norm):
    """Largest change of ``norm``'s output when its input is multiplied by 10."""
    x = np.random.default_rng(3).standard_normal((8, 32))
    return float(np.abs(norm(10.0 * x) - norm(x)).max())


def ln_rescaled_change():
    """LayerNorm (no affine) under x -> 10 x: essentially 0, it divides the scale away."""
    return _rescaled_change(norms.LayerNorm(32, elementwise_affine=False))


def dyt_alpha_init():
    """The alpha a fresh normcore DyT starts at (its default alpha_init)."""
    return float(norms.DyT(32).alpha.data[0])


def dyt_rescaled_change():
    """DyT (alpha_init 0.5) under x -> 10 x: its outputs move, and saturate toward +-1."""
    return _rescaled_change(norms.DyT(32, alpha_init=0.5))


def dyt_max_output_large_input():
    """Largest |DyT(x)| for x of standard deviation 100: tanh caps it at |gamma| = 1."""
    x = 100.0 * np.random.default_rng(3).standard_normal((8, 32))
    return float(np.abs(norms.DyT(32, alpha_init=0.5)(x)).max())


def _update_rms(position, scale):
    """RMS of one block's residual update y - x, its weight matrices multiplied by ``scale``."""
    rng = np.random.default_rng(4)
    block = nn.TransformerBlock(32, 4, position=position, n_layers=4, rng=2)
    for _, p in block.named_parameters():
        if p.data.ndim == 2:
            p.data *= scale
    x = rng.standard_normal((4, 8, 32))
    return float(np.sqrt(((block(x) - x) ** 2).mean()))


def pre_update_growth_x10():
    """How many times a Pre-LN block's residual update grows when its weights are multiplied by 10."""
    return _update_rms("pre", 10.0) / _update_rms("pre", 1.0)


def peri_update_growth_x10():
    """The same for a Peri-LN block, whose output norm rescales each branch's output."""
    return _update_rms("peri", 10.0) / _update_rms("peri", 1.0)
