"""The attention twins: ``nn.MultiheadAttention`` for normcore's attention layers, and a
twin in torch ops for what torch's layer lacks: QK-norm (per head or over the whole
projection) and the soft-cap of the scores.

torch's layer stores q, k and v stacked in ``in_proj_weight``; ``attention_keys`` says where
each of normcore's arrays lives in it. ``attention_twins()`` builds, on first use, the torch
modules called as normcore's layers are (masks in normcore's convention, the causal flag,
the output alone unless the weights are asked for). ``from_torch`` builds normcore's
attention from torch's layer or from the QK-norm twin.
"""

import functools
import math

from .. import nn
from .core import _named_children, _torch, builds_from_torch, converts


def attention_keys(m):
    """normcore key -> (``nn.MultiheadAttention`` key, rows) for attention ``m`` (E channels):
    q, k, v are the row blocks [0:E], [E:2E], [2E:3E] of ``in_proj_weight`` when kdim == vdim
    == E, else ``q_proj_weight``, ``k_proj_weight``, ``v_proj_weight``; their biases the blocks
    of ``in_proj_bias`` (a normcore layer without a key bias leaves [E:2E] at 0, where it
    changes nothing); o is ``out_proj``; ``bias_k``, ``bias_v`` keep their names."""
    E = m.embed_dim
    packed = m.kdim == m.vdim == E
    keys = {"bias_k": ("bias_k", ...), "bias_v": ("bias_v", ...)}
    for i, name in enumerate("qkv"):
        block = slice(i * E, (i + 1) * E)
        keys[f"{name}.weight"] = ("in_proj_weight", block) if packed else (f"{name}_proj_weight", ...)
        keys[f"{name}.bias"] = ("in_proj_bias", block)
    keys.update({"o.weight": ("out_proj.weight", ...), "o.bias": ("out_proj.bias", ...)})
    return {k: keys[k] for k in m.state_dict()}


@converts(nn.MultiheadAttention, nn.MultiheadSelfAttention, nn.CausalSelfAttention)
def _multihead_attention(m, sub):
    """torch's own ``nn.MultiheadAttention`` (with the layer's ``batch_first``), called as
    normcore's layer: with (query, key, value) and the forward's options for
    ``MultiheadAttention``, with x alone for self-attention. With ``qk_norm``, which torch's
    layer lacks, or with ``attn_softcap``, the twin ``QKNormAttention`` written with torch ops."""
    if m.qk_norm is not None or m.attn_softcap is not None:
        cross = isinstance(m, nn.MultiheadAttention)
        t = (attention_twins().QKNormAttention if cross else attention_twins().QKNormSelfAttention)(
            m.embed_dim, m.num_heads, m.causal, m.add_zero_attn,
            {name: sub(child) for name, child in _named_children(m)},
            m.bias_k is not None, m.qk_norm_scope, m.attn_softcap)
        t.normcore_class = type(m)
        t.batch_first = getattr(m, "batch_first", True)
        options = dict(qk_norm=m.qk_norm, qk_norm_scope=m.qk_norm_scope, attn_softcap=m.attn_softcap)
        t.normcore_args = (dict(embed_dim=m.embed_dim, num_heads=m.num_heads, bias=m.q.bias is not None,
                                add_bias_kv=m.add_bias_kv, add_zero_attn=m.add_zero_attn, kdim=m.kdim, vdim=m.vdim,
                                causal=m.causal, batch_first=m.batch_first, **options) if cross else
                           dict(d_model=m.d_model, n_heads=m.n_heads, bias=m.q.bias is not None, **options,
                                **({} if isinstance(m, nn.CausalSelfAttention) else {"causal": m.causal})))
        return t
    twins = attention_twins()
    twin = twins.MultiheadAttention if isinstance(m, nn.MultiheadAttention) else twins.SelfAttention
    t = twin(m.embed_dim, m.num_heads, bias=m.q.bias is not None, add_bias_kv=m.add_bias_kv,
             add_zero_attn=m.add_zero_attn, kdim=m.kdim, vdim=m.vdim, batch_first=getattr(m, "batch_first", True))
    t.causal, t.normcore_keys, t.normcore_class = m.causal, attention_keys(m), type(m)
    return t


@functools.cache
def attention_twins():
    """torch modules called as normcore's attention layers, and ``torch_masks``, which turns
    normcore's masks into torch's (the blocks use it too)."""
    torch = _torch()
    F = torch.nn.functional

    def torch_masks(Tq, Tk, key_padding_mask, attn_mask, causal, dtype):
        """normcore's masks for torch's attention: the causal mask merged into attn_mask,
        (B, H, Tq, Tk) reshaped to torch's (B * H, Tq, Tk), and both masks made additive
        when one is boolean and the other floating (torch deprecates mixing the two)."""
        def additive(mask):
            if mask.dtype != torch.bool:
                return mask.to(dtype)
            return torch.zeros(mask.shape, dtype=dtype).masked_fill(mask, -torch.inf)
        if causal:
            future = torch.ones(Tq, Tk, dtype=torch.bool).triu(1)
            if attn_mask is None:
                attn_mask = future
            else:
                attn_mask = attn_mask | future if attn_mask.dtype == torch.bool else attn_mask + additive(future)
        if attn_mask is not None and attn_mask.dim() == 4:
            attn_mask = attn_mask.reshape(-1, Tq, Tk)
        if key_padding_mask is not None and attn_mask is not None and (
                (key_padding_mask.dtype == torch.bool) != (attn_mask.dtype == torch.bool)):
            key_padding_mask, attn_mask = additive(key_padding_mask), additive(attn_mask)
        return key_padding_mask, attn_mask

    def lengths(query, key, batch_first):
        """(Tq, Tk) of attention inputs, batched in either layout or unbatched."""
        axis = 0 if query.dim() == 2 or not batch_first else 1
        return query.shape[axis], key.shape[axis]

    class MultiheadAttention(torch.nn.MultiheadAttention):
        """``torch.nn.MultiheadAttention`` itself, called as normcore's layer:
        ``forward(query, key, value, key_padding_mask=None, attn_mask=None, *, need_weights=None,
        average_attn_weights=True, is_causal=False)``, with normcore's ``causal`` flag merged
        into attn_mask. need_weights left out returns only the output, on the math path
        (``need_weights=True``: a fully masked row gives NaN, as in normcore); given, it is
        torch's and the pair is returned."""

        causal = False

        def forward(self, query, key, value, key_padding_mask=None, attn_mask=None, *, need_weights=None,
                    average_attn_weights=True, is_causal=False):
            kpm, am = torch_masks(*lengths(query, key, self.batch_first), key_padding_mask, attn_mask,
                                  self.causal, query.dtype)
            out = super().forward(query, key, value, key_padding_mask=kpm, attn_mask=am,
                                  need_weights=True if need_weights is None else need_weights,
                                  average_attn_weights=average_attn_weights, is_causal=is_causal)
            return out[0] if need_weights is None else out

    class SelfAttention(MultiheadAttention):
        """``torch.nn.MultiheadAttention`` called as normcore's self-attention:
        ``forward(x, key_padding_mask=None, attn_mask=None)`` attends from x to x."""

        def forward(self, x, key_padding_mask=None, attn_mask=None):
            return super().forward(x, x, x, key_padding_mask, attn_mask)

    class QKNormAttention(torch.nn.Module):
        """normcore's ``MultiheadAttention`` with ``qk_norm`` or ``attn_softcap`` in plain torch ops
        (torch's layer has neither): q, k, v, o are ``nn.Linear``; q_norm and k_norm (None
        without QK-norm) torch's ``nn.RMSNorm`` or ``nn.LayerNorm``, over D per head after the
        split (``scope="head"``) or over all E channels before it (``scope="projection"``),
        before 1/sqrt(D); bias_k is appended before the norm (and normalised), the zero key after
        it. With ``softcap`` c the scores become c * tanh(S / c) before the mask. The softmax is
        explicit, so a fully masked row gives NaN, as normcore and torch's math path do. Masks
        in normcore's convention (boolean True = masked out, floating added)."""

        def __init__(self, embed_dim, num_heads, causal, add_zero_attn, children, add_bias_kv, scope="head",
                     softcap=None):
            super().__init__()
            self.embed_dim, self.num_heads, self.causal = embed_dim, num_heads, causal
            self.add_zero_attn, self.scope, self.softcap = add_zero_attn, scope, softcap
            if add_bias_kv:
                self.bias_k = torch.nn.Parameter(torch.empty(1, 1, embed_dim))
                self.bias_v = torch.nn.Parameter(torch.empty(1, 1, embed_dim))
            else:
                self.bias_k = self.bias_v = None
            for name, child in children.items():
                self.add_module(name, child)

        batch_first = True

        def forward(self, query, key, value, key_padding_mask=None, attn_mask=None, *, need_weights=None,
                    average_attn_weights=True, is_causal=False):
            """normcore's forward and its options: an unbatched query gains a batch axis, a
            sequence-first one is transposed; the weights as normcore and torch return them.
            is_causal changes nothing: normcore accepts it only with the causal mask itself."""
            unbatched = query.dim() == 2
            if unbatched:
                query, key, value = query[None], key[None], value[None]
                key_padding_mask = None if key_padding_mask is None else key_padding_mask[None]
            elif not self.batch_first:
                query, key, value = (t.transpose(0, 1) for t in (query, key, value))
            y, P = self.attend(query, key, value, key_padding_mask, attn_mask)
            y = y[0] if unbatched else y if self.batch_first else y.transpose(0, 1)
            if need_weights is None:
                return y
            if not need_weights:
                return y, None
            w = P.mean(1) if average_attn_weights else P
            return y, (w[0] if unbatched else w)

        def attend(self, query, key, value, key_padding_mask, attn_mask):
            """(output, P) on batch-first inputs."""
            (B, Tq, E), Tk, H = query.shape, key.shape[1], self.num_heads
            D = E // H

            def split(t):
                return t.reshape(B, t.shape[1], H, D).transpose(1, 2)

            q_norm, k_norm = getattr(self, "q_norm", None), getattr(self, "k_norm", None)  # with QK-norm only
            per_head, over_projection = (q_norm is not None and self.scope == s for s in ("head", "projection"))
            q = self.q(query)
            if over_projection:
                q = q_norm(q)  # (B, Tq, E), before the split
            q = q_norm(split(q)) if per_head else split(q)  # (B, H, Tq, D)
            k, v = self.k(key), self.v(value)
            if self.bias_k is not None:
                k = torch.cat([k, self.bias_k.expand(B, 1, E)], dim=1)
                v = torch.cat([v, self.bias_v.expand(B, 1, E)], dim=1)
            if over_projection:
                k = k_norm(k)  # (B, Tk', E), bias_k among them
            k, v = (k_norm(split(k)) if per_head else split(k)), split(v)  # (B, H, Tk', D)
            if self.add_zero_attn:
                zero = torch.zeros(B, H, 1, D, dtype=q.dtype)
                k, v = torch.cat([k, zero], dim=2), torch.cat([v, zero], dim=2)
            S = q @ k.transpose(-1, -2) / math.sqrt(D)
            if self.softcap is not None:
                S = self.softcap * torch.tanh(S / self.softcap)
            M = torch.zeros(Tq, Tk, dtype=S.dtype)
            if self.causal:
                M = M.masked_fill(torch.ones(Tq, Tk, dtype=torch.bool).triu(1), -torch.inf)
            for mask, padding in ((key_padding_mask, True), (attn_mask, False)):
                if mask is None:
                    continue
                add = (torch.zeros(mask.shape, dtype=S.dtype).masked_fill(mask, -torch.inf)
                       if mask.dtype == torch.bool else mask.to(S.dtype))
                if add.dim() == 3:  # torch's (B * H, Tq, Tk)
                    add = add.reshape(B, H, Tq, Tk)
                M = M + (add[:, None, None, :] if padding else add)
            S = S + F.pad(M, (0, k.shape[2] - Tk))  # the added keys are never masked
            P = torch.softmax(S, dim=-1)
            return self.o((P @ v).transpose(1, 2).reshape(B, Tq, E)), P

    class QKNormSelfAttention(QKNormAttention):
        """``QKNormAttention`` called as normcore's self-attention: ``forward(x, key_padding_mask=None,
        attn_mask=None)``."""

        def forward(self, x, key_padding_mask=None, attn_mask=None):
            return super().forward(x, x, x, key_padding_mask, attn_mask)

    return type("AttentionTwins", (), dict(
        MultiheadAttention=MultiheadAttention, SelfAttention=SelfAttention,
        QKNormAttention=QKNormAttention, QKNormSelfAttention=QKNormSelfAttention, torch_masks=torch_masks))


@builds_from_torch
def _from_torch(tnn):
    def attention(t, sub):
        if t.dropout:
            raise ValueError(f"from_torch: normcore's MultiheadAttention has no dropout on the attention "
                             f"weights; expected dropout=0.0, got {t.dropout}")
        if isinstance(t, attention_twins().SelfAttention):  # to_torch's twin of a self-attention layer
            return t.normcore_class(t.embed_dim, t.num_heads, **({} if t.normcore_class is nn.CausalSelfAttention
                                                                 else {"causal": t.causal}),
                                    bias=t.in_proj_bias is not None)
        return nn.MultiheadAttention(t.embed_dim, t.num_heads, bias=t.in_proj_bias is not None,
                                     add_bias_kv=t.bias_k is not None, add_zero_attn=t.add_zero_attn,
                                     kdim=t.kdim, vdim=t.vdim, causal=getattr(t, "causal", False),
                                     batch_first=t.batch_first)

    return {
        # to_torch's QK-norm twin: the attention class and the options it was made from
        attention_twins().QKNormAttention: lambda t, sub: t.normcore_class(**t.normcore_args),
        tnn.MultiheadAttention: attention,
    }
