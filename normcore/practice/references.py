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

    built_from = "Linear, BatchNorm1d, Tanh, Linear and CrossEntropyLoss"

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

    built_from = "MultiheadSelfAttention (bias=False)"

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
    block: y = x + ffn(norm(x)) for ``position="pre"``, y = norm(x + ffn(x)) for "post".

    The backward is the chain rule over the residual add, as in normcore's TransformerBlock
    (which has an attention sub-layer too): dx = dy + norm'(ffn'(dy)) for "pre";
    dz = norm'(dy), dx = dz + ffn'(dz) for "post". Parameters in the practice contract:
    ``gamma``, ``beta`` (the norm's weight and bias), ``w1`` (C, d_ff), ``b1``, ``w2`` (d_ff, C),
    ``b2``; w1 and w2 are the transposes of fc1.weight and fc2.weight.
    """

    built_from = "LayerNorm and nn.FeedForward (relu)"

    def __init__(self, d_model, d_ff, position="pre", eps=1e-5, rng=None):
        if position not in ("pre", "post"):
            raise ValueError(f"position must be 'pre' or 'post', got {position!r}")
        self.position = position
        self.norm = norms.LayerNorm(d_model, eps=eps)
        self.ffn = nn.FeedForward(d_model, d_ff, activation="relu", rng=rng)
        self.gamma, self.beta = self.norm.weight, self.norm.bias
        self.w1, self.b1 = ParameterView(self.ffn.fc1.weight, transpose=True), self.ffn.fc1.bias
        self.w2, self.b2 = ParameterView(self.ffn.fc2.weight, transpose=True), self.ffn.fc2.bias

    def forward(self, x):
        if self.position == "pre":
            return x + self.ffn(self.norm(x))
        return self.norm(x + self.ffn(x))

    def backward(self, dy):
        if self.position == "pre":
            return dy + self.norm.backward(self.ffn.backward(dy))
        dz = self.norm.backward(dy)
        return dz + self.ffn.backward(dz)


# --- qk_norm --------------------------------------------------------------------------------------
class QKNormSelfAttention(MultiheadSelfAttention):
    """normcore's ``nn.MultiheadSelfAttention(d_model, n_heads, causal, bias=False,
    qk_norm="rmsnorm")`` behind the practice contract: ``wq``, ``wk``, ``wv``, ``wo`` as in the
    attention exercise, and ``gamma_q``, ``gamma_k`` the weights (D,) of its children q_norm
    and k_norm (RMSNorm(D), eps the machine epsilon), shared by every head."""

    built_from = "MultiheadSelfAttention (bias=False, qk_norm='rmsnorm')"

    def __init__(self, d_model, n_heads, causal=False):
        self.layer = nn.MultiheadSelfAttention(d_model, n_heads, causal=causal, bias=False, rng=0,
                                               qk_norm="rmsnorm")
        for name in "qkvo":
            setattr(self, "w" + name, ParameterView(getattr(self.layer, name).weight, transpose=True))
        self.gamma_q = ParameterView(self.layer.q_norm.weight)
        self.gamma_k = ParameterView(self.layer.k_norm.weight)
