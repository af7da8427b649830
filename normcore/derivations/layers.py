"""Step-throughs of the layers around the norms: Linear, the activations ReLU, Sigmoid and Tanh,
the mean squared error, the Transformer's feed-forward (Linear, ReLU, Linear) and Embedding.

    st = step_through("linear", shape=(3, 4))        # x (3, 4) @ W (4, 5) + b: Linear(4, 5)
    st = step_through("relu", shape=(3, 4))          # y = max(x, 0)
    st = step_through("sigmoid", shape=(3, 4))       # negate, exp, add 1, reciprocal
    st = step_through("mse", shape=(3, 4))           # mean((pred - target)**2), a scalar loss
    st = step_through("feedforward", shape=(2, 3))   # Linear(3, 6), ReLU, Linear(6, 3)
    st = step_through("embedding", shape=(4, 3))     # the table W (4, 3) looked up at 5 ids

Each kind is registered with ``layer_step_through`` as its builder (see ``registry``) and checked
as the other step-throughs are (``core.check``): against the normcore layer's own forward and backward (dx
and every parameter's gradient) and against central differences of every node.

The tape holds a Linear's weight transposed, W = weight.T of shape (in, out), so that the
product reads x @ W + b, a matrix product of the shapes as they are; its gradient is compared
with weight.grad transposed.
"""

from dataclasses import dataclass, field

import numpy as np

from ..i18n import N_, translator
from ..layer_cases import randomize_parameters
from ..nn import Embedding, Linear, MSELoss, ReLU, Sigmoid, Tanh
from ..nn.transformer import FeedForward
from .core import StepThrough, check, letters, no_gamma_beta, scalar_upstream, upstream
from .registry import register
from .tape import Phrase, Tape

_ = translator("explain")

LAYER_KINDS = ("linear", "relu", "sigmoid", "tanh", "mse", "feedforward", "embedding")
ACTIVATIONS = {"relu": ReLU, "sigmoid": Sigmoid, "tanh": Tanh}
EXP_OVERFLOW = float(np.log(np.finfo(np.float64).max))  # about 709.78: exp of more is inf
FF_EXPANSION = 2  # the feed-forward step-through's d_ff = 2 * D (Transformers use 4: a longer tape)
COMPACT = {
    "linear": Phrase(N_("{dx}, {dw} (summed over the rows), {db}"), dx="dx = dy @ W^T",
                     dw="dW = x^T @ dy", db="db = sum_rows(dy)"),
    "relu": "dx = dy * [x > 0]",
    "sigmoid": "dx = dy * y * (1 - y)",
    "tanh": "dx = dy * (1 - y**2)",
    "mse": "dpred = dloss * 2 * (pred - target) / N",
    "feedforward": "dh = dy @ W2^T; da = dh * [a > 0]; dx = da @ W1^T; dW2 = h^T @ dy, dW1 = x^T @ da",
    "embedding": Phrase(N_("{dw}: each position's dy added into its id's row, a repeated id's adding up"),
                        dw="dW = 0; np.add.at(dW, idx, dy)"),
}


# --- the tapes -------------------------------------------------------------------------------
def linear_nodes(t, x, W, b, over_params, u, out):
    """A Linear's two nodes after ``x``: the product u = x @ W, then the bias, y = u + b, with
    b shared over the rows (``over_params``); ``u`` and ``out`` are (name, TeX) pairs."""
    product = t.matmul(x, W, u[0], N_("matmul"), u[1])
    return t.add(product, b, out[0], N_("bias"), out[1], over_b=over_params)


def linear_tape(x, W, b, over_params):
    """y = x @ W + b: a matrix product and a bias."""
    t = Tape()
    x = t.leaf("x", x)
    W, b = t.leaf("W", W), t.leaf("b", b)
    linear_nodes(t, x, W, b, over_params, ("u", "u"), ("y", "y"))
    return t


def activation_nodes(t, x, kind, name="y", tex="y"):
    """An activation's nodes after ``x``: ReLU and tanh one node each; sigmoid as the chain
    1 / (1 + exp(-x)): negate, exp, add 1, reciprocal. Returns the last node."""
    if kind == "relu":
        return t.relu(x, name, N_("relu"), tex)
    if kind == "tanh":
        return t.tanh(x, name, N_("tanh"), tex)
    n = t.scale(x, -1.0, "-1", "n", N_("negate"), "n", "-1")
    e = t.exp(n, "e", N_("exp"), "e")
    d = t.add_constant(e, 1.0, "1", "d", N_("add 1"), "d")
    return t.reciprocal(d, name, N_("reciprocal"), tex)


def activation_tape(x, kind):
    t = Tape()
    activation_nodes(t, t.leaf("x", x), kind)
    return t


def mse_tape(pred, target, over):
    """diff = pred - target, its square, the mean over every element: the scalar loss."""
    t = Tape()
    pred, target = t.leaf("pred", pred, "p"), t.leaf("target", target, "t")
    diff = t.sub(pred, target, "diff", N_("difference"), "d")
    sq = t.square(diff, "sq", N_("square"), "q")
    t.mean(sq, tuple(range(pred.value.ndim)), "loss", N_("mean"), over, "L")
    return t


def feedforward_tape(x, W1, b1, W2, b2, over_params):
    """FeedForward with ReLU: a = x @ W1 + b1, h = relu(a), y = h @ W2 + b2."""
    t = Tape()
    x = t.leaf("x", x)
    W1, b1 = t.leaf("W1", W1, "W_1"), t.leaf("b1", b1, "b_1")
    W2, b2 = t.leaf("W2", W2, "W_2"), t.leaf("b2", b2, "b_2")
    a = linear_nodes(t, x, W1, b1, over_params, ("u1", "u_1"), ("a", "a"))
    hidden = activation_nodes(t, a, "relu", "h", "h")
    linear_nodes(t, hidden, W2, b2, over_params, ("u2", "u_2"), ("y", "y"))
    return t


def embedding_tape(table, idx):
    """y = W[idx]: one row of the table per id."""
    t = Tape()
    t.gather(t.leaf("W", table), idx, "y", N_("look up"), "y")
    return t


# --- the step-throughs -----------------------------------------------------------------------
@dataclass
class _Built:
    """What a kind's builder hands to ``layer_step_through``: the tape, the upstream gradient,
    the layer's own forward output and gradients (named as on the tape), and what the header
    says (``StepThrough``'s what, notes, loss_line and inputs)."""

    tape: Tape
    dy: np.ndarray
    layer: object
    y_ref: np.ndarray
    reference: dict
    what: object
    notes: list = field(default_factory=list)
    loss_line: object = ""
    inputs: tuple = ()
    idx: np.ndarray = None  # the embedding's ids


def layer_step_through(kind, title, x, rng, *, dy, h, gamma=None, beta=None):
    """The step-through of ``kind`` (one of ``LAYER_KINDS``) on the input ``x``, drawing its
    parameters (and mse's target, embedding's ids) from ``rng`` after x; see
    ``steps.step_through``."""
    no_gamma_beta(title, gamma, beta)
    build = {"linear": _linear, "feedforward": _feedforward, "embedding": _embedding, "mse": _mse}.get(
        kind, _activation)
    b = build(kind, x, rng, dy, h)
    st = StepThrough(kind, title, b.tape, b.dy, 0.0, "", f"{type(b.layer).__name__}.backward", COMPACT[kind],
                     what=b.what, loss_line=b.loss_line, notes=b.notes, inputs=b.inputs)
    check(st, b.y_ref, b.reference, h)
    st.properties = layer_properties(kind, b.tape, b.idx)
    return st


def _against(layer, params, x, dy):
    """The layer's forward on x and backward from dy: its output and its gradients of x and of
    ``params`` (tape name -> Parameter), a Linear's weight gradient transposed as the tape's W."""
    layer.zero_grad()
    y_ref = layer.forward(x)
    reference = {"x": layer.backward(dy)}
    reference.update({name: p.grad.T if name.startswith("W") else p.grad for name, p in params.items()})
    return y_ref, reference


def _linear(kind, x, rng, dy, h):
    d_in = x.shape[-1]
    layer = randomize_parameters(Linear(d_in, d_in + 1), rng)  # out != in: W's shape shows
    tape = linear_tape(x, layer.weight.data.T, layer.bias.data, _over_rows(x))
    dy = upstream(dy, rng, tape.output.value.shape)
    y_ref, reference = _against(layer, {"W": layer.weight, "b": layer.bias}, x, dy)
    what = Phrase(N_("{forward} on the last axis, {i} features in, {o} out"),
                  forward="y = x @ W + b", i=d_in, o=d_in + 1)
    notes = [Phrase(N_("{w} is the Linear's weight transposed, (in, out): {ours} is its {theirs}."),
                    w="W", ours="x @ W + b", theirs="x @ weight.T + bias")]
    return _Built(tape, dy, layer, y_ref, reference, what, notes)


def _feedforward(kind, x, rng, dy, h):
    d_ff = FF_EXPANSION * x.shape[-1]
    layer = randomize_parameters(FeedForward(x.shape[-1], d_ff, activation="relu"), rng)
    fc1, fc2 = layer.fc1, layer.fc2
    tape = feedforward_tape(x, fc1.weight.data.T, fc1.bias.data, fc2.weight.data.T, fc2.bias.data, _over_rows(x))
    dy = upstream(dy, rng, tape.output.value.shape)
    params = {"W1": fc1.weight, "b1": fc1.bias, "W2": fc2.weight, "b2": fc2.bias}
    y_ref, reference = _against(layer, params, x, dy)
    what = Phrase(N_("{forward} with d_ff = {d_ff}, ReLU as its activation"),
                  forward="y = relu(x @ W1 + b1) @ W2 + b2", d_ff=d_ff)
    notes = [Phrase(N_("{w} is the Linear's weight transposed, (in, out): {ours} is its {theirs}."),
                    w="W1 (W2)", ours="x @ W1 + b1", theirs="x @ fc1.weight.T + fc1.bias")]
    return _Built(tape, dy, layer, y_ref, reference, what, notes)


def _over_rows(x):
    """The axes a bias is shared over: every axis but the last ("N", "B,T"...)."""
    return ",".join(letters("linear", x.ndim)[:-1])


def _embedding(kind, x, rng, dy, h):
    """x is the table (V, D); V + 1 ids from V rows, so at least one id repeats."""
    layer = Embedding(*x.shape)
    layer.weight.data[...] = x
    idx = rng.integers(0, x.shape[0], size=x.shape[0] + 1)
    tape = embedding_tape(x, idx)
    dy = upstream(dy, rng, tape.output.value.shape)
    layer.zero_grad()
    y_ref = layer.forward(idx)
    layer.backward(dy)  # returns None: the ids have no gradient
    what = Phrase(N_("a table of V = {v} rows, looked up at T = {t} ids"), v=x.shape[0], t=idx.size)
    counts = np.bincount(idx, minlength=x.shape[0])
    notes = [Phrase(N_("The ids idx (one per position): {ids}; row {row} is looked up {k} times, "
                       "so its gradient adds {k} rows of dy."),
                    ids=idx.tolist(), row=int(counts.argmax()), k=int(counts.max()))]
    return _Built(tape, dy, layer, y_ref, {"W": layer.weight.grad}, what, notes, idx=idx)


def _mse(kind, x, rng, dy, h):
    target = rng.standard_normal(x.shape)
    tape, layer = mse_tape(x, target, ",".join(letters(kind, x.ndim))), MSELoss()
    dy = scalar_upstream(dy, kind, tape.output.value.shape)
    y_ref = layer.forward(x, target)
    reference = {"pred": layer.backward(dy.item())}
    what = Phrase(N_("the mean over all N = {n} elements of {sq}, against a random target"),
                  n=x.size, sq="(pred - target)**2")
    loss_line = Phrase(N_("The output is the loss itself: L = loss, so dL/dloss = dy = {dy}."), dy=f"{dy.item():g}")
    return _Built(tape, dy, layer, y_ref, reference, what, loss_line=loss_line, inputs=("target",))


def _activation(kind, x, rng, dy, h):
    """ReLU, Sigmoid or Tanh, element by element."""
    if kind == "sigmoid" and (x < -EXP_OVERFLOW).any():
        raise ValueError(_("the sigmoid step-through computes exp(-x), which overflows for x below "
                           "{limit:.1f}; got x down to {low:g}").format(limit=-EXP_OVERFLOW, low=x.min()))
    layer, tape = ACTIVATIONS[kind](), activation_tape(x, kind)
    dy = upstream(dy, rng, x.shape)
    y_ref, reference = _against(layer, {}, x, dy)
    notes = []
    if kind == "relu":
        notes.append(Phrase(N_("At {x} exactly ReLU has no derivative; normcore's ReLU, like PyTorch's, "
                               "takes it as 0 there."), x="x = 0"))
        near = int(np.sum(np.abs(x) <= 2 * h))
        if near:  # the differences straddle the kink: they measure about dy/2, not 0 or dy
            notes.append(Phrase(N_("{k} entries of x lie within {reach} of 0, where the central "
                                   "differences straddle the kink: their numerical checks differ."),
                                k=near, reach=f"2h = {2 * h:g}"))
    return _Built(tape, dy, layer, y_ref, reference, Phrase(N_("element by element, no statistics")), notes)


def layer_properties(kind, tape, idx=None):
    """What the gradients must satisfy, measured: each value should be 0 up to rounding
    (``idx``: the embedding's ids)."""
    first = tape.nodes[0]
    dx, x = first.grad, first.value
    dy, y = tape.output.grad, tape.output.value
    worst = lambda a: float(np.max(np.abs(a))) if np.size(a) else 0.0  # noqa: E731
    if kind == "linear":
        W, b = tape["W"], tape["b"]
        return [(Phrase(N_("{diff}: both are {both}, the product is linear in each factor"),
                        diff="sum(dx * x) - sum(dW * W)", both="sum(dy * (x @ W))"),
                 worst(np.sum(dx * x) - np.sum(W.grad * W.value))),
                (Phrase(N_("{diff}: every row adds its dy into the bias"), diff="db - sum_rows(dy)"),
                 worst(b.grad - dy.reshape(-1, dy.shape[-1]).sum(axis=0)))]
    if kind in ("relu", "feedforward"):  # ReLU's input a (x itself, or the feed-forward's)
        a, out = (tape["a"], tape["h"]) if kind == "feedforward" else (first, tape.output)
        on = a.value > 0
        props = [(Phrase(N_("{d} where {a} <= 0: no gradient passes a unit switched off"),
                         d=f"d_{a.name}", a=a.name), worst(a.grad[~on])),
                 (Phrase(N_("{diff} where {a} > 0: an active unit passes its gradient untouched"),
                         diff=f"d_{a.name} - d_{out.name}", a=a.name), worst(a.grad[on] - out.grad[on]))]
        if kind == "feedforward":
            props.append((Phrase(N_("{diff}: every row adds its dy into the bias"), diff="db2 - sum_rows(dy)"),
                          worst(tape["b2"].grad - dy.reshape(-1, dy.shape[-1]).sum(axis=0))))
        return props
    if kind == "sigmoid":
        return [(Phrase(N_("{diff}: the chain of four rules lands on {slope}"),
                        diff="dx - dy * y * (1 - y)", slope="y * (1 - y)"), worst(dx - dy * y * (1 - y)))]
    if kind == "tanh":
        s = 1.0 / (1.0 + np.exp(-2.0 * np.clip(x, -EXP_OVERFLOW / 2, None)))
        return [(Phrase(N_("{diff} with {s}: tanh is a stretched sigmoid, {form}"),
                        diff="dx - 4 * dy * s * (1 - s)", s="s = sigmoid(2x)", form="2 * sigmoid(2x) - 1"),
                 worst(dx - 4.0 * dy * s * (1.0 - s)))]
    if kind == "embedding":  # each row's gradient: the dy of every position that looked it up
        rows = range(len(x))
        summed = np.array([dy[idx == i].sum(axis=0) for i in rows])
        unused = np.array([i not in idx for i in rows])
        return [(Phrase(N_("{diff}: a row looked up twice gets both gradients"),
                        diff="dW[i] - sum(dy[n] for n with idx_n = i)"), worst(dx - summed)),
                (Phrase(N_("{d} at the rows no id looks up: they receive nothing"), d="dW"),
                 worst(dx[unused]))]
    # mse: the loss depends on pred - target only
    n = x.size
    return [(Phrase(N_("{sum}: the loss depends on the difference only"), sum="dpred + dtarget"),
             worst(dx + tape["target"].grad)),
            (Phrase(N_("{diff}: the staged gradient is the compact one"), diff="dpred - dloss * 2 * diff / N"),
             worst(dx - dy.item() * 2.0 * tape["diff"].value / n))]


# --- the kinds -------------------------------------------------------------------------------
register("linear", "Linear", (2, 3, 4), layer_step_through,
         description=N_("x @ W + b, Linear(D, D + 1) on the last axis"))
register("relu", "ReLU", (1, 2, 3, 4), layer_step_through, description=N_("max(x, 0), element by element"))
register("sigmoid", "Sigmoid", (1, 2, 3, 4), layer_step_through,
         description=N_("1 / (1 + exp(-x)), element by element"))
register("tanh", "Tanh", (1, 2, 3, 4), layer_step_through, description=N_("tanh(x), element by element"))
register("mse", "MSELoss", (1, 2, 3, 4), layer_step_through,
         description=N_("the mean squared error against a random target"))
register("feedforward", "FeedForward", (2, 3, 4), layer_step_through,
         description=N_("Linear(D, 2D), ReLU, Linear(2D, D)"))
register("embedding", "Embedding", (2,), layer_step_through,
         description=N_("the table (V, D) looked up at V + 1 ids"))
