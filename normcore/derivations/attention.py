"""Self-attention's backward step by step: one head first, then how heads split and merge.

    st = step_through("attention", shape=(3, 4), seed=0)               # x (T, D), one head
    st = step_through("attention", shape=(2, 3, 4), heads=2, causal=True)
    st.tape["x"].grad          # three shares added: through q, through k and through v
    st.tape["s"].grad          # 0 exactly where the causal mask hides key j > query i

The tape, for x of shape (T, D) or (B, T, D), H heads of d_k = D / H channels:

    q = x Wq + bq,  k = x Wk,  v = x Wv + bv          the three projections of x
    (H > 1) q, k, v: reshape (.., T, H, d_k), transpose to (.., H, T, d_k)   the heads
    s = (q k^T) / sqrt(d_k)  (+ M, the causal mask: -inf where key j > query i)
    p = softmax_j(s)                                  softmax's own nodes (max, shift, exp...)
    o = p v                                           (H > 1: transpose and reshape back)
    y = o Wo + bo

It is checked against ``MultiheadSelfAttention`` with the same parameters: its Linear layers
keep W as (out, in) and compute x W^T + b, so the tape's Wq is the layer's q.weight.T (and so
for k, v, o). The layer's key projection has no bias: a key bias adds q_i . bk to every score
of row i, a constant that softmax ignores, so its gradient would be exactly 0.
"""

import numpy as np

from .._array import positive_int
from ..i18n import N_, translator
from ..layer_cases import randomize_parameters
from ..nn import MultiheadAttention, MultiheadSelfAttention
from .graph import _chain, _words, arrange, computation_graph, node_labels, route_labels
from .core import StepThrough, check, input_upstream, softmax_nodes
from .registry import register
from .tape import Phrase, Tape

_ = translator("explain")


class AttentionStepThrough(StepThrough):
    """A ``StepThrough`` whose graph lays the three routes of x (through q, k and v) in lanes."""

    def graph(self):
        return attention_graph(self)


# --- the tape --------------------------------------------------------------------------------
def _project(t, a, weight, bias, key, name, step, tex, over):
    """a @ W (+ b), one Linear with W stored (in, out): the leaves W<key> (and b<key>), the
    product (named ``name`` when there is no bias) and the bias' addition."""
    w = t.leaf(f"W{key}", weight, f"W_{key}")
    if bias is None:
        return t.matmul(a, w, name, step, tex)
    b = t.leaf(f"b{key}", bias, f"b_{key}")
    product = t.matmul(a, w, f"{a.name}W{key}", step, f"{a.tex}W_{key}")
    return t.add(product, b, name, N_("add bias"), tex, over_b=over)


def _swap(ndim, i, j):
    """The permutation of ``ndim`` axes that swaps axes i and j (its own inverse)."""
    axes = list(range(ndim))
    axes[i], axes[j] = axes[j], axes[i]
    return tuple(axes)


def _split_heads(t, a, heads):
    """(.., T, D) -> (.., H, T, d_k): reshape to (.., T, H, d_k), then bring the heads forward."""
    *lead, length, width = a.value.shape
    r = t.reshape(a, (*lead, length, heads, width // heads), f"{a.name}_r", N_("split heads"), f"{a.tex}_r")
    return t.transpose(r, _swap(r.value.ndim, -3, -2), f"{a.name}h", N_("heads first"), f"{a.tex}_h")


def _merge_heads(t, a, name, tex):
    """(.., H, T, d_k) -> (.., T, D): bring the heads back after T, then reshape."""
    *lead, heads, length, dk = a.value.shape
    back = t.transpose(a, _swap(a.value.ndim, -3, -2), f"{name}_t", N_("heads back"), f"{tex}_t")
    return t.reshape(back, (*lead, length, heads * dk), name, N_("merge heads"), tex)


def causal_mask(length):
    """M (T, T): -inf where key j > query i (the future), 0 elsewhere; added to the scores."""
    return np.where(np.triu(np.ones((length, length), dtype=bool), 1), -np.inf, 0.0)


def attention_tape(x, params, heads=1, causal=False):
    """Self-attention on x (T, D) or (B, T, D) as elementary nodes. ``params`` maps Wq, bq, Wk,
    bk, Wv, bv, Wo, bo to arrays, the weights (in, out); a bias may be None (no node)."""
    t = Tape()
    x = t.leaf("x", x)
    over = "B,T" if x.value.ndim == 3 else "T"  # the axes a bias is broadcast along
    q = _project(t, x, params["Wq"], params["bq"], "q", "q", N_("project q"), "q", over)
    k = _project(t, x, params["Wk"], params["bk"], "k", "k", N_("project k"), "k", over)
    v = _project(t, x, params["Wv"], params["bv"], "v", "v", N_("project v"), "v", over)
    if heads > 1:
        q, k, v = (_split_heads(t, a, heads) for a in (q, k, v))
    dk = q.value.shape[-1]
    kt_tex = rf"{{{k.tex}^{{\top}}}}"  # braced, so that its own transpose reads {k^T}^T
    kt = t.transpose(k, _swap(k.value.ndim, -2, -1), f"{k.name}T", N_("transpose"), kt_tex)
    scores = t.matmul(q, kt, "qkT", N_("scores"), rf"({q.tex}{k.tex}^{{\top}})")
    s = t.scale(scores, 1.0 / np.sqrt(dk), "1/sqrt(d_k)", "s", N_("scale"), "s", r"\tfrac{1}{\sqrt{d_k}}")
    if causal:
        s = t.add_constant(s, causal_mask(x.value.shape[-2]), "M", "s_m", N_("causal mask"), "s_M")
    p = softmax_nodes(t, s, s.value.ndim - 1, "j")
    o = t.matmul(p, v, "oh" if heads > 1 else "o", N_("attend"), "o_h" if heads > 1 else "o")
    if heads > 1:
        o = _merge_heads(t, o, "o", "o")
    _project(t, o, params["Wo"], params["bo"], "o", "y", N_("project out"), "y", over)
    return t


# --- the step-through ------------------------------------------------------------------------
LINEARS = ("q", "k", "v", "o")  # the layer's four projections, each a Linear(D, D)
COMPACT = ("do = dy Wo^T; dp = do v^T, dv = p^T do; ds = p * (dp - sum_j(dp * p)); "
           "dq = ds k / sqrt(d_k), dk = ds^T q / sqrt(d_k); dx = dq Wq^T + dk Wk^T + dv Wv^T")


def attention_step_through(kind, title, x, rng, *, dy, h, gamma=None, beta=None, causal=False, heads=None):
    """``step_through("attention", ...)``: the tape of ``attention_tape``, checked against
    ``MultiheadSelfAttention`` (dx and every parameter's gradient) and central differences.

    x : (T, D) or (B, T, D) (by default standard normal, from the seed).
    heads : H, which must divide D (default 1). causal : mask key j > query i.
    The parameters are drawn from ``rng``: the weights normal with variance 1/D (so the
    scores are of order 1 and the softmax is neither flat nor one-hot), the biases normal.
    """
    given = [name for name, value in (("gamma", gamma), ("beta", beta)) if value is not None]
    if given:
        raise ValueError(_("the attention step-through takes no {given}: its parameters Wq, bq, Wk, Wv, bv, "
                           "Wo, bo are drawn from the seed").format(given=", ".join(given)))
    heads = 1 if heads is None else positive_int(heads, "heads", "step_through")
    width = x.shape[-1]
    if width % heads:
        raise ValueError(_("heads ({heads}) must divide the width D = {width} of x (shape {shape}): each head "
                           "takes d_k = D / heads channels").format(heads=heads, width=width, shape=x.shape))
    layer = MultiheadSelfAttention(width, heads, causal=causal)
    randomize_parameters(layer, rng)
    for name in LINEARS:
        getattr(layer, name).weight.data[...] /= np.sqrt(width)
    dy = input_upstream(dy, rng, x.shape)

    params = {}
    for name in LINEARS:
        linear = getattr(layer, name)
        params[f"W{name}"] = linear.weight.data.T  # (in, out): the tape computes a @ W
        params[f"b{name}"] = None if linear.bias is None else linear.bias.data
    tape = attention_tape(x, params, heads, causal)

    # the reference: the layer's forward and compact backward, on a batch of one for (T, D)
    batched = (lambda a: a[None]) if x.ndim == 2 else (lambda a: a)  # noqa: E731
    unbatched = (lambda a: a[0]) if x.ndim == 2 else (lambda a: a)  # noqa: E731
    layer.zero_grad()
    y_ref = unbatched(layer.forward(batched(x)))
    reference = {"x": unbatched(layer.backward(batched(dy)))}
    for name in LINEARS:
        linear = getattr(layer, name)
        reference[f"W{name}"] = linear.weight.grad.T
        if linear.bias is not None:
            reference[f"b{name}"] = linear.bias.grad

    dk = width // heads
    st = AttentionStepThrough(
        "attention", Phrase(N_("self-attention")), tape, dy, 0.0, "j", f"{type(layer).__name__}.backward",
        COMPACT, what=_what(heads, dk, causal), notes=_notes(tape, heads, dk, causal))
    check(st, y_ref, reference, h)
    st.properties = _properties(tape, layer, batched, unbatched, causal)
    return st


def _what(heads, dk, causal):
    """The heads and the mask, as a Phrase (said in the language in use where it is shown)."""
    what = Phrase(N_("{h} head of d_k = {dk} channels") if heads == 1 else
                  N_("{h} heads of d_k = {dk} channels each"), h=heads, dk=dk)
    return Phrase(N_("{heads}, causal"), heads=what) if causal else what


def _notes(tape, heads, dk, causal):
    """The lines under the heading: the parameters' layout, x's three shares, heads, the mask."""
    q, k, v = (Phrase(N_("share from {name}"), name=c.name) for c in tape.consumers(tape["x"]))
    notes = [Phrase(N_("Wq, Wk, Wv, Wo are the layer's q.weight.T, k.weight.T, v.weight.T, o.weight.T "
                       "(a Linear keeps W as (out, in)). k has no bias: it would add q_i . bk to every "
                       "score of row i, a constant that softmax ignores.")),
             Phrase(N_("x feeds three projections, so dL/dx adds three shares, through q, k and v: "
                       "dL/dx = {q} + {k} + {v}."), q=q, k=k, v=v)]
    if heads > 1:
        notes.append(Phrase(N_("The heads: reshape and transpose split q, k and v into {h} heads of d_k = "
                               "{dk} channels; each head attends on its own (one matmul over the heads); "
                               "transpose and reshape merge them before Wo."), h=heads, dk=dk))
    if causal:
        notes.append(Phrase(N_("The causal mask M is -inf where key j > query i and 0 elsewhere, added to "
                               "the scores: p = 0 there, so those scores get gradient exactly 0.")))
    return notes


def _properties(tape, layer, batched, unbatched, causal):
    """What the gradients must satisfy, measured: each value should be 0 up to rounding."""
    worst = lambda a: float(np.max(np.abs(a))) if np.size(a) else 0.0  # noqa: E731
    x = tape["x"]
    softmax_in = tape["s_m"] if causal else tape["s"]
    props = [(Phrase(N_("sum_j(ds): each softmax row's gradient sums to 0 (softmax ignores a shift of "
                        "its row)")), worst(softmax_in.grad.sum(axis=-1)))]
    if causal:
        future = causal_mask(x.value.shape[-2]) < 0
        props.append((Phrase(N_("ds where key j > query i: the masked scores get no gradient")),
                      worst(tape["s"].grad[..., future])))
    # the three shares against the general layer's dquery, dkey, dvalue (query = key = value = x)
    general = MultiheadAttention(layer.embed_dim, layer.num_heads, causal=causal)
    general.load_state_dict(layer.state_dict())
    xb = batched(x.value)
    general.forward(xb, xb, xb)
    parts = [unbatched(d) for d in general.backward(batched(tape.output.grad))]
    shares = [c.share("x") for c in tape.consumers(x)]  # through q, k, v: the tape's order
    props.append((Phrase(N_("dx's shares through q, k, v - dquery, dkey, dvalue of "
                            "MultiheadAttention.backward (query = key = value = x)")),
                  max(worst(s - d) for s, d in zip(shares, parts))))
    props.append((Phrase(N_("dx - (share through q + through k + through v): the fan-out adds them")),
                  worst(x.grad - sum(shares))))
    return props


# --- the graph -------------------------------------------------------------------------------
# The lanes (rows) of the picture: x's three projections each in a lane of its own, q above,
# k in the middle, joining q at the scores, v below; the steps after the softmax one lane below
# the scores. A parameter sits next to its first use, on the side away from the middle.
LANES = {"Wq": 2, "Wk": 0, "Wv": -2}
LABEL_CHARS = 12  # the labels wrap to fit READABLE_WIDTH, but no narrower than the narrowest column holds


def attention_graph(st):
    """The tape's ``Graph`` with attention's own layout and its three routes from x to y."""
    graph = computation_graph(st)  # the nodes, edges and labels; the layout is redone below
    tape = st.tape
    x, p = tape["x"], tape["p"]
    lane = {}
    for weight, row in LANES.items():  # follow each projection until it meets another route
        node = next(c for c in tape.consumers(tape[weight]))
        while True:
            lane[node.name] = row
            (nxt,) = tape.consumers(node)
            if sum(not e.source.is_leaf for e in nxt.edges) > 1:
                break
            node = nxt
    for node in tape:  # the scores and the softmax, its row statistics (max, sum) a lane above
        if not node.is_leaf and node.name not in lane:
            lane[node.name] = (-1 if node.index > p.index else 0 if node.value.shape == p.value.shape
                               else 1)
    # columns: the longest path from x, where a step into or out of the softmax's statistics
    # (lane 1, above the scores) counts half, so that they sit between the steps they join
    column = {x.name: 0}
    for node in tape:
        ins = [column[e.source.name] + (0.5 if 1 in (lane.get(e.source.name), lane[node.name])
                                        and lane.get(e.source.name) != lane[node.name] else 1)
               for e in node.edges if e.source.name in column]
        if ins:
            column[node.name] = max(ins)
    positions = {x.name: (0, 0)}
    for node in tape:
        if node.is_leaf and node is not x:
            user = tape.consumers(node)[0]
            row = lane[user.name]
            positions[node.name] = (column[user.name], row + 1 if row >= 0 else row - 1)
        elif node is not x:
            positions[node.name] = (column[node.name], lane[node.name])
    # the routes: x's edges to each lane, along it, and on to y; q's goes on through the scores
    lanes = {row: {n for n, r in lane.items() if r == row} for row in (2, 1, 0, -1, -2)}
    scores = {n for n in lanes[0] | lanes[1] if tape[n].index >= tape["qkT"].index}  # q k^T ... p
    q_lane, k_lane, v_lane, after = lanes[2], lanes[0] - scores, lanes[-2], lanes[-1]
    edges = [(a, b) for a, b in graph.edges if a == x.name or not tape[a].is_leaf]  # no parameter's
    route = lambda starts, ends: [(a, b) for a, b in edges if a in starts and b in ends]  # noqa: E731
    say = _words()[1]  # the picture's words: Chinese only with a font for them
    lanes = [(N_("through v"), route({x.name} | v_lane | after, v_lane | after)),
             (N_("through q"), route({x.name} | q_lane | scores, q_lane | scores | after)),
             (N_("through k"), route({x.name} | k_lane, k_lane | scores))]
    found = [(lambda words, head=head: words(head), ", ".join(_chain(edges)), edges) for head, edges in lanes]
    graph.labels, graph.positions, graph.bands = arrange(node_labels(tape.nodes), positions, least=LABEL_CHARS)
    graph.routes = dict(zip(route_labels(found, say), (edges for _h, _t, edges in found)))
    graph.captions = route_labels(found, _)
    return graph


register("attention", "self-attention", (2, 3), attention_step_through, options=("causal", "heads"),
         description=N_("self-attention with H heads, causal or not"), spread=1.0, mean=0.0,
         shapes="(T, D) or (B, T, D)")
