"""The anchors of the PyTorch track's mistakes (``mistakes.py``): pieces of the torch reference
answers (``solutions/torch/NAME.py``), each found by the tag of its line, that a mistake's
variant rewrites; grouped by exercise, as the answers are.
"""

from ..catalog import Anchor

X_HAT = Anchor("x-hat", "torch.sqrt(var + self.eps)")
X_HAT_LINE = {name: Anchor("x-hat", line) for name, line in (
    ("layernorm", "y = (x - mean) / torch.sqrt(var + self.eps)"),
    ("batchnorm", "y = (x - mean) / torch.sqrt(var + self.eps)"),
    ("groupnorm", "g = (g - mean) / torch.sqrt(var + self.eps)"))}
DIMS = Anchor("dims", "dims = tuple(range(-len(self.normalized_shape), 0))")
MEAN = Anchor("mean", "x.mean(dim=dims, keepdim=True)")
VAR = Anchor("var", "x.var(dim=dims, unbiased=False, keepdim=True)")
G_MEAN = Anchor("mean", "g.mean(dim=-1, keepdim=True)")
G_VAR = Anchor("var", "g.var(dim=-1, unbiased=False, keepdim=True)")
SCALE = Anchor("scale", "y * self.weight")
WEIGHT = {name: Anchor("weight", f"nn.Parameter(torch.ones({shape}))") for name, shape in (
    ("layernorm", "self.normalized_shape"), ("rmsnorm", "self.normalized_shape"),
    ("batchnorm", "num_features"), ("groupnorm", "num_channels"))}
BIAS = {name: Anchor("bias", f"nn.Parameter(torch.zeros({shape}))") for name, shape in (
    ("layernorm", "self.normalized_shape"), ("groupnorm", "num_channels"))}
# --- batchnorm ---
BN_RUNNING_MEAN = Anchor("running-mean", "self.running_mean.mul_(1 - m).add_(m * mean.flatten())")
BN_RUNNING_VAR = Anchor("running-var", "self.running_var.mul_(1 - m).add_(m * var.flatten() * n / (n - 1))")
BN_UNBIASED = Anchor("running-var", "var.flatten() * n / (n - 1)")
BN_BATCH_STATS = Anchor("batch-stats", "batch_stats = self.training or not self.track_running_stats")
BN_UPDATE = Anchor("update-running", "if self.training and self.track_running_stats:")
BN_EVAL_VAR = Anchor("eval-var", "var = self.running_var.view(view)")
BN_NO_GRAD = Anchor("no-grad", "with torch.no_grad():")
BN_BUFFERS = (Anchor("running-mean-buffer", 'self.register_buffer("running_mean", torch.zeros(num_features))'),
              Anchor("running-var-buffer", 'self.register_buffer("running_var", torch.ones(num_features))'))
BN_Y = Anchor("x-hat", "y = ")
BN_M = Anchor("momentum", "m = ")
BN_MOMENTUM = Anchor("momentum", "1.0 / self.num_batches_tracked.item() if self.momentum is None else self.momentum")
BN_AFFINE = Anchor("affine", "if self.weight is not None:")
# --- rmsnorm ---
RMS_UPCAST = Anchor("upcast", "h = x.to(torch.promote_types(x.dtype, torch.float32))")
RMS_EPS = Anchor("eps", "torch.finfo(h.dtype)")
RMS_MS = Anchor("mean-square", "ms = h.pow(2).mean(dim=dims, keepdim=True)")
RMS_RRMS = Anchor("rrms", "h * torch.rsqrt(ms + eps)")
# --- groupnorm ---
GN_GROUP = Anchor("group", "x.reshape(n, self.num_groups, -1)")
GN_UNGROUP = Anchor("ungroup", "g.reshape(x.shape)")
# --- dropout ---
DROP_EVAL = Anchor("eval", "if not self.training or self.p == 0.0:")
DROP_EVAL_RETURN = Anchor("eval-return", "return x")
DROP_KEEP = Anchor("keep", "keep = torch.rand_like(x) >= self.p")
DROP_SCALE = Anchor("scale", "scale = 0.0 if self.p == 1.0 else 1.0 / (1.0 - self.p)")
DROP_MASK = Anchor("mask", "return x * keep * scale")
# --- softmax, log_softmax, cross_entropy ---
SM_DIM = Anchor("dim", "self.dim = dim")
SM_SHIFT = Anchor("shift", "z = x - x.amax(dim=self.dim, keepdim=True)")
SM_MAX = Anchor("shift", "x.amax(dim=self.dim, keepdim=True)")
SM_SUM = Anchor("normalise", "e.sum(dim=self.dim, keepdim=True)")
LSM_LOGP = Anchor("logp", "z - torch.exp(z).sum(dim=self.dim, keepdim=True).log()")
LSM_SUM = Anchor("logp", "torch.exp(z).sum(dim=self.dim, keepdim=True)")
CE_SHIFT = Anchor("shift", "z = logits - logits.amax(dim=1, keepdim=True)")
CE_LOGP = Anchor("logp", "z - torch.exp(z).sum(dim=1, keepdim=True).log()")
CE_LOSS = Anchor("loss", "-logp[torch.arange(len(targets)), targets].mean()")
# one mistake's piece each of the loss line (cross_entropy's and the MLP's), so that the sign
# flipped and the sum instead of the mean combine
LOSS_SIGN, LOSS_MEAN = Anchor("loss", "-logp["), Anchor("loss", "].mean()")
# --- dyt ---
DYT_ALPHA = Anchor("alpha", "nn.Parameter(torch.full((1,), float(alpha_init)))")
DYT_TANH = Anchor("y", "self.weight * torch.tanh(self.alpha * x)")
DYT_U = Anchor("y", "self.alpha * x")
DYT_ALPHA_AT = "nn.Parameter(torch.full((1,), {alpha}))"  # alpha hard-coded

# --- attention, qk_norm ---
ATT_SPLIT = Anchor("split-heads", "t.reshape(B, T, H, C // H).transpose(1, 2)")
ATT_MERGE = Anchor("merge-heads", "t.transpose(1, 2).reshape(B, T, H * D)")
ATT_SCORES = Anchor("scores", "scores = q @ k.transpose(-2, -1) / D ** 0.5")
ATT_FUTURE = Anchor("future", "torch.ones(T, T, dtype=torch.bool).triu(diagonal=1)")
ATT_MASK = Anchor("mask", 'scores.masked_fill(future, float("-inf"))')
ATT_SHIFT = Anchor("shift", "z = scores - scores.amax(dim=-1, keepdim=True)")
ATT_SOFTMAX = Anchor("softmax", "attn = e / e.sum(dim=-1, keepdim=True)")
ATT_WQ = Anchor("wq", "nn.Parameter(torch.randn(d_model, d_model) / d_model ** 0.5)")
QK_DIMS = Anchor("norm-dims", "self.norm_dims = (-1,)")
QK_QNORM = Anchor("q-norm", "qn = self.rms_norm(q, self.gamma_q)")
QK_KNORM = Anchor("k-norm", "kn = self.rms_norm(k, self.gamma_k)")
QK_SCORES = Anchor("scores", "scores = qn @ kn.transpose(-2, -1) / D ** 0.5")
QK_GAMMA_Q = Anchor("gamma-q", "nn.Parameter(torch.ones(d_model // n_heads))")
QK_RETURN = Anchor("rrms", "return t * ")
QK_RRMS = Anchor("rrms", "torch.rsqrt(t.pow(2).mean(dim=self.norm_dims, keepdim=True) + eps)")
# --- transformer_block, mlp_with_batchnorm ---
BLOCK_POSITION = Anchor("position", "self.position = position")
BLOCK_Y_PRE = Anchor("y-pre", "x + self.ffn(self.ln(x))")
BLOCK_Y_REORDERED = Anchor("y-reordered", "x + self.ln(self.ffn(x))")
BLOCK_PARAMS = (Anchor("gamma", "nn.Parameter(torch.ones(d_model))"),
                Anchor("beta", "nn.Parameter(torch.zeros(d_model))"))
# the Bessel correction's own piece of a var line: torch-var-unbiased removes it alone, so that it
# combines with a mistake that rewrites the rest of the line (eps added to x.std(...))
BIASED = Anchor("var", "unbiased=False, ")
MLP_SHIFT = Anchor("shift", "z = logits - logits.amax(dim=1, keepdim=True)")
MLP_LOSS = Anchor("loss", "-logp[torch.arange(len(targets)), targets].mean()")
# --- weight_norm ---
WN_G = Anchor("g", "nn.Parameter(torch.ones(out_features, 1))")
WN_G_SHAPE = Anchor("g", "torch.ones(out_features, 1)")
WN_NORM_DIM = Anchor("norm", "sum(dim=1, keepdim=True)")
WN_V_SQUARED = Anchor("norm", "self.weight_v.pow(2)")
WN_SQRT = Anchor("norm", ".sqrt()")
WN_G_TIMES = Anchor("w", "self.weight_g *")
# --- fold_batchnorm ---
FOLD_SCALE = Anchor("scale", "gamma / torch.sqrt(running_var + eps)")
FOLD_WEIGHT = Anchor("weight", "s[:, None] * W")
FOLD_BIAS = Anchor("bias", "s * (b - running_mean) + beta")
# --- fold_norm_affine (the bias line is the NumPy answer's) ---
AFFINE_WEIGHT = Anchor("weight", "W * gamma[None, :]")
# --- sync_batchnorm ---
SYNC_COUNT = Anchor("count", "x.sum(dim=0)")
SYNC_REDUCE_SUMS = Anchor("reduce-sums", "got = self.group.all_reduce(sent)")
SYNC_MEAN = Anchor("mean", "mean = got[1:] / N")
SYNC_SQDEV = Anchor("sq-dev", "((x - mean) ** 2).sum(dim=0)")
SYNC_REDUCE_SQDEV = Anchor("sq-dev", "self.group.all_reduce(((x - mean) ** 2).sum(dim=0))")
SYNC_VAR = Anchor("var", "var = got2 / N")
SYNC_UNBIASED = Anchor("unbiased", "var * N / (N - 1)")
SYNC_NO_GRAD = Anchor("no-grad", "with torch.no_grad():")
SYNC_LOCAL_MEAN = "x.sum(dim=0) / max(n_k, 1)"  # this worker's own mean (0 on an empty shard)
# --- soft_cap, z_loss ---
CAP_Y = Anchor("y", "self.cap * torch.tanh(x / self.cap)")
CAP_X = Anchor("y", "x / self.cap")
Z_LSE = Anchor("lse", "lse = m + torch.exp(logits - m).sum(dim=1, keepdim=True).log()")
Z_TERM = Anchor("z", "self.z_loss * lse.pow(2).mean()")

# the var line's x.var( piece, where eps-outside-sqrt's second variant takes x.std( instead
STD_OF = {name: Anchor("var", f"{t}.var(") for name, t in (
    ("layernorm", "x"), ("groupnorm", "g"), ("transformer_block", "u"))}
