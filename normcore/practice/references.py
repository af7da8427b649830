"""The grader's references built from normcore's own layers, for the exercises whose practice
contract names or lays out its parameters differently from normcore's layers.

An adapter builds normcore's layers, chains their forward and backward, names them in
``built_from`` (the report's "reference"), and exposes the parameters under the exercise's
names as Parameter-like views (``.data`` and ``.grad`` read and write through to normcore's
parameters), so that the grader, the probes and the worked examples in the skeletons drive it
exactly as they drive the user's class.
"""

import numpy as np

from .. import nn, norms
from ..i18n import N_  # the names of what a reference is built from: translated where shown


class ParameterView:
    """A normcore Parameter seen in a practice layout: as is, or transposed (Linear's (out, in)
    weight seen as the (in, out) matrix w of ``x @ w``). Reading and assigning ``data`` and
    ``grad`` go through to the Parameter; an in-place ``grad +=`` on the view does too."""

    def __init__(self, param, transpose=False):
        self._param, self._transpose = param, transpose

    def _view(self, a):
        return a.T if self._transpose else a

    @property
    def data(self):
        return self._view(self._param.data)

    @data.setter
    def data(self, value):
        self._param.data = np.array(self._view(np.asarray(value)), dtype=self._param.data.dtype)

    @property
    def grad(self):
        return self._view(self._param.grad)

    @grad.setter
    def grad(self, value):
        self._param.grad = np.array(self._view(np.asarray(value)), dtype=self._param.data.dtype)


# --- mlp_with_batchnorm ---------------------------------------------------------------------------
class MLPWithBatchNorm:
    """normcore's Linear, BatchNorm1d (training mode), Tanh, Linear and CrossEntropyLoss in a
    chain, behind the practice contract: ``forward(x, targets) -> loss``, ``backward(dloss=1.0)
    -> dx``, parameters w1 (n_in, n_hidden), b1, gamma, beta, w2 (n_hidden, n_classes), b2."""

    built_from = N_("Linear, BatchNorm1d, Tanh, Linear and CrossEntropyLoss")

    def __init__(self, n_in, n_hidden, n_classes):
        self.fc1 = nn.Linear(n_in, n_hidden)
        self.bn = norms.BatchNorm1d(n_hidden, eps=1e-5)
        self.tanh = nn.Tanh()
        self.fc2 = nn.Linear(n_hidden, n_classes)
        self.loss = nn.CrossEntropyLoss()
        self.w1, self.b1 = ParameterView(self.fc1.weight, transpose=True), ParameterView(self.fc1.bias)
        self.gamma, self.beta = ParameterView(self.bn.weight), ParameterView(self.bn.bias)
        self.w2, self.b2 = ParameterView(self.fc2.weight, transpose=True), ParameterView(self.fc2.bias)

    def forward(self, x, targets):
        a = self.tanh.forward(self.bn.forward(self.fc1.forward(x)))
        return self.loss.forward(self.fc2.forward(a), targets)

    def backward(self, dloss=1.0):
        da = self.fc2.backward(self.loss.backward(dloss))
        return self.fc1.backward(self.bn.backward(self.tanh.backward(da)))


# --- attention ------------------------------------------------------------------------------------
class MultiheadSelfAttention:
    """normcore's ``nn.MultiheadSelfAttention(d_model, n_heads, causal, bias=False)`` behind the
    practice contract: ``wq``, ``wk``, ``wv``, ``wo`` of shape (C, C), used as ``q = x @ wq``.
    normcore's projections are Linear layers, ``x @ weight.T`` with weight (out, in), so ``wq``
    is ``q.weight`` seen transposed, and so on."""

    built_from = N_("MultiheadSelfAttention (bias=False)")

    def __init__(self, d_model, n_heads, causal=False):
        self.layer = nn.MultiheadSelfAttention(d_model, n_heads, causal=causal, bias=False, rng=0)
        for name in "qkvo":
            setattr(self, "w" + name, ParameterView(getattr(self.layer, name).weight, transpose=True))

    def forward(self, x):
        return self.layer.forward(x)

    def backward(self, dy):
        return self.layer.backward(dy)
# --- transformer_block ----------------------------------------------------------------------------
class FeedForwardBlock:
    """normcore's LayerNorm and FeedForward(d_model, d_ff, activation="relu") in a residual
    block: y = x + ffn(norm(x)) for ``position="pre"``, y = norm(x + ffn(x)) for "post",
    y = x + norm(ffn(x)) for "reordered" (OLMo 2's).

    The backward is the chain rule over the residual add, as in normcore's TransformerBlock
    (which has an attention sub-layer too): dx = dy + norm'(ffn'(dy)) for "pre";
    dz = norm'(dy), dx = dz + ffn'(dz) for "post"; dx = dy + ffn'(norm'(dy)) for "reordered".
    Parameters in the practice contract:
    ``gamma``, ``beta`` (the norm's weight and bias), ``w1`` (C, d_ff), ``b1``, ``w2`` (d_ff, C),
    ``b2``; w1 and w2 are the transposes of fc1.weight and fc2.weight.
    """

    built_from = N_("LayerNorm and nn.FeedForward (relu)")

    def __init__(self, d_model, d_ff, position="pre", eps=1e-5, rng=None):
        if position not in ("pre", "post", "reordered"):
            raise ValueError(f"position must be 'pre', 'post' or 'reordered', got {position!r}")
        self.position = position
        self.norm = norms.LayerNorm(d_model, eps=eps)
        self.ffn = nn.FeedForward(d_model, d_ff, activation="relu", rng=rng)
        self.gamma, self.beta = self.norm.weight, self.norm.bias
        self.w1, self.b1 = ParameterView(self.ffn.fc1.weight, transpose=True), self.ffn.fc1.bias
        self.w2, self.b2 = ParameterView(self.ffn.fc2.weight, transpose=True), self.ffn.fc2.bias

    def forward(self, x):
        if self.position == "pre":
            return x + self.ffn(self.norm(x))
        if self.position == "reordered":
            return x + self.norm(self.ffn(x))
        return self.norm(x + self.ffn(x))

    def backward(self, dy):
        if self.position == "pre":
            return dy + self.norm.backward(self.ffn.backward(dy))
        if self.position == "reordered":
            return dy + self.ffn.backward(self.norm.backward(dy))
        dz = self.norm.backward(dy)
        return dz + self.ffn.backward(dz)


# --- z_loss ---------------------------------------------------------------------------------------
class ZLossCrossEntropy(nn.CrossEntropyLoss):
    """normcore's ``CrossEntropyLoss(z_loss=z_loss)`` behind the practice contract, where the
    coefficient is the first argument: ``ZLossCrossEntropy(z_loss)``, logits (N, C), integer
    targets (N,), the mean."""

    built_from = N_("CrossEntropyLoss(z_loss=...)")

    def __init__(self, z_loss=1e-4):
        super().__init__(z_loss=z_loss)


# --- qk_norm --------------------------------------------------------------------------------------
class QKNormSelfAttention(MultiheadSelfAttention):
    """normcore's ``nn.MultiheadSelfAttention(d_model, n_heads, causal, bias=False,
    qk_norm="rmsnorm")`` behind the practice contract: ``wq``, ``wk``, ``wv``, ``wo`` as in the
    attention exercise, and ``gamma_q``, ``gamma_k`` the weights (D,) of its children q_norm
    and k_norm (RMSNorm(D), eps the machine epsilon), shared by every head."""

    built_from = N_("MultiheadSelfAttention (bias=False, qk_norm='rmsnorm')")

    def __init__(self, d_model, n_heads, causal=False):
        self.layer = nn.MultiheadSelfAttention(d_model, n_heads, causal=causal, bias=False, rng=0,
                                               qk_norm="rmsnorm")
        for name in "qkvo":
            setattr(self, "w" + name, ParameterView(getattr(self.layer, name).weight, transpose=True))
        self.gamma_q = ParameterView(self.layer.q_norm.weight)
        self.gamma_k = ParameterView(self.layer.k_norm.weight)


# --- fold_batchnorm -------------------------------------------------------------------------------
def fold_batchnorm(W, b, running_mean, running_var, gamma, beta, eps=1e-5):
    """normcore's ``fold_batchnorm(linear, bn)`` behind the practice contract of plain arrays: a
    Linear (weight ``W`` (out, in), bias ``b``) and a BatchNorm1d in evaluation mode built from
    the arrays, folded, and the folded Linear's (weight, bias) returned."""
    out_features, in_features = W.shape
    linear = nn.Linear(in_features, out_features, dtype=W.dtype)
    linear.weight.data, linear.bias.data = W.copy(), b.copy()
    bn = norms.BatchNorm1d(out_features, eps=eps, dtype=W.dtype)
    bn.running_mean, bn.running_var = running_mean.copy(), running_var.copy()
    bn.weight.data, bn.bias.data = gamma.copy(), beta.copy()
    folded = nn.fold_batchnorm(linear, bn.eval())
    return folded.weight.data, folded.bias.data


fold_batchnorm.built_from = N_("fold_batchnorm of a Linear and a BatchNorm1d in evaluation")


# --- fold_norm_affine -----------------------------------------------------------------------------
def fold_norm_affine(gamma, beta, W, b):
    """normcore's ``fold_norm_affine(norm, linear)`` behind the practice contract of plain
    arrays: a LayerNorm with ``gamma`` and ``beta`` (in,) and a Linear (weight ``W`` (out, in),
    bias ``b``) built from the arrays, folded, and the folded Linear's (weight, bias) returned."""
    out_features, in_features = W.shape
    norm = norms.LayerNorm(in_features, dtype=W.dtype)
    norm.weight.data, norm.bias.data = gamma.copy(), beta.copy()
    linear = nn.Linear(in_features, out_features, dtype=W.dtype)
    linear.weight.data, linear.bias.data = W.copy(), b.copy()
    folded = nn.fold_norm_affine(norm, linear)
    return folded.weight.data, folded.bias.data


fold_norm_affine.built_from = N_("fold_norm_affine of a LayerNorm and a Linear")


# --- sync_batchnorm -------------------------------------------------------------------------------
class SyncBatchNorm:
    """normcore's ``BatchNorm1d`` on the concatenated batch, behind the practice contract of
    SyncBatchNorm (``SyncBatchNorm(num_features, process_group, eps, momentum)``, one replica
    per worker, input this worker's shard (n_k, C)).

    Each replica gathers the whole batch with the group's all_reduce (every worker sends its
    rows at their place in a vector of zeros, so the sum is the concatenation, exactly), runs
    its own BatchNorm1d on it and returns its rows. The backward gathers dy likewise: dx is
    BatchNorm1d's, and gamma and beta get this worker's local shares, the backward of dy with
    the other workers' rows set to 0 (dgamma = sum over this worker's rows of dy * x_hat)."""

    built_from = N_("BatchNorm1d on the concatenated batch")

    def __init__(self, num_features, process_group, eps=1e-5, momentum=0.1):
        self.group = process_group
        self.bn = norms.BatchNorm1d(num_features, eps=eps, momentum=momentum)
        self.gamma, self.beta = ParameterView(self.bn.weight), ParameterView(self.bn.bias)

    @property
    def running_mean(self):
        return self.bn.running_mean

    @property
    def running_var(self):
        return self.bn.running_var

    def train(self):
        self.bn.train()

    def eval(self):
        self.bn.eval()

    def _gather(self, a):
        """(the whole batch (N, C), the slice of this worker's rows in it)."""
        counts = np.zeros(self.group.world_size)
        counts[self.group.rank] = len(a)
        counts = self.group.all_reduce(counts).astype(int)                    # (K,)
        start = int(counts[:self.group.rank].sum())
        whole = np.zeros((int(counts.sum()), a.shape[1]))                     # (N, C)
        whole[start:start + len(a)] = a
        whole = self.group.all_reduce(whole.ravel()).reshape(whole.shape)     # zeros add exactly
        return whole, slice(start, start + len(a))

    def forward(self, x):
        if not self.bn.training:
            return self.bn.forward(x)
        whole, self._rows = self._gather(x)
        return self.bn.forward(whole)[self._rows]

    def backward(self, dy):
        whole, rows = self._gather(dy)
        grads = (self.bn.weight.grad.copy(), self.bn.bias.grad.copy())
        dx = self.bn.backward(whole)[rows]
        self.bn.weight.grad, self.bn.bias.grad = grads
        mine = np.zeros_like(whole)
        mine[rows] = whole[rows]
        self.bn.backward(mine)                                                # the local shares
        return dx


# --- weight_norm ----------------------------------------------------------------------------------
class WeightNormLinear:
    """normcore's ``WeightNorm(Linear(in_features, out_features), dim=0)`` behind the practice
    contract: ``weight_g`` (out, 1), ``weight_v`` (out, in) and ``bias`` (out,), the names and
    shapes of torch's ``weight_norm``, which are also the wrapped layer's own parameters."""

    built_from = N_("WeightNorm of a Linear (dim=0)")

    def __init__(self, in_features, out_features):
        self.layer = nn.WeightNorm(nn.Linear(in_features, out_features), dim=0)
        self.weight_g, self.weight_v, self.bias = self.layer.weight_g, self.layer.weight_v, self.layer.bias

    def forward(self, x):
        return self.layer.forward(x)

    def backward(self, dy):
        return self.layer.backward(dy)
