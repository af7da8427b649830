"""A tape of elementary operations: the forward one node at a time, the backward one node back.

Each ``Node`` is one small step (a mean, a subtraction, a square root...) with its value, its
formula and, for each of its inputs, the local derivative (plain text and LaTeX) and the rule
that turns the node's gradient into that input's share (its vector-Jacobian product).

``Tape.backward(dy)`` walks the nodes in reverse and applies each node's own rule, adding
(``+=``) every share into the input's gradient, so a value used twice (x in LayerNorm feeds
the mean and the centring) receives both shares. Nothing here knows any layer's compact
backward formula: the staged gradient is built from the elementary rules alone, which is what
makes comparing it with the compact one meaningful.

A stop-gradient node (``Tape.stop_gradient``, Batch Renorm's r and d) passes its input's value
on and sends nothing back: its backward is 0, the value is held constant. Its node is marked
``held``, and the numerical gradient holds it at its value too (see ``numerical_grad``).

One file, though longer than most: ``Tape`` is one class whose node methods each pair a
forward with its local derivative and backward rule, the way micrograd keeps an operation's
backward beside its forward; a reader looks a node up by its name, one method at a time.

``Tape.numerical_grad(node, dy)`` perturbs one node's value, replays the nodes after it and
takes finite differences of ``L = sum(y * dy)``: the gradient of the loss with respect to that
node, measured without any derivative at all.
"""

from dataclasses import dataclass, field

import numpy as np

from .._array import sum_to_shape
from ..i18n import N_, translator
from ..nn.activations import erf as _erf

_ = translator("explain")


class Phrase:
    """An English message and its fields (formulas, numbers, names), said in the language in use
    where it is shown: ``str()`` (and so an f-string) translates the message, then fills in the
    fields, which no language changes. A local derivative or rule with words in it is a Phrase;
    so are the step-through's sentences that carry numbers.

        Phrase(N_("{d} = 1 at the argmax, 0 elsewhere"), d="d m/d s_i")
    """

    def __init__(self, message, **fields):
        self.message, self.fields = message, fields

    def __str__(self):
        return _(self.message).format(**self.fields)

    @property
    def english(self):
        """The phrase in English whatever the language in use (fields that are phrases too)."""
        return self.message.format(**{k: english(v) for k, v in self.fields.items()})

    def __repr__(self):
        return repr(self.english)


INPUT = N_("input")  # a leaf's step, unless it says it is something else
COMMA = N_(", ")  # between the items of a list inside a sentence, as each language writes it


class Joined:
    """Phrases said one after another with ``sep`` between them (a list inside a sentence; the
    separator a message too, said in the language in use)."""

    def __init__(self, items, sep=COMMA):
        self.items, self.sep = list(items), sep

    def __str__(self):
        return _(self.sep).join(map(str, self.items))

    @property
    def english(self):
        return self.sep.join(str(english(item)) for item in self.items)


def english(text):
    """A Phrase (or Joined) in English; any other text as it is."""
    return text.english if isinstance(text, (Phrase, Joined)) else text


@dataclass
class Edge:
    """How a node depends on one of its inputs: the local derivative and the backward rule."""

    source: "Node"
    local: str  # plain text (or a Phrase, for words), e.g. "d xc/d mean = -1"
    local_tex: str  # LaTeX, e.g. r"\partial x_c / \partial \mu = -1"
    rule: str  # plain text (or a Phrase), e.g. "d_mean += -sum_N(d_xc)"
    vjp: object  # (g, out, *input values) -> this input's share of the gradient


@dataclass
class Node:
    """One value on the tape: a leaf (input or parameter) or the result of one elementary step."""

    name: str  # "xc"
    step: str  # "centre"; "input" for a leaf (English, marked N_, translated where shown)
    value: np.ndarray
    tex: str = ""  # its LaTeX symbol, e.g. r"x_c"
    formula: str = ""  # "xc = x - mean"
    formula_tex: str = ""
    edges: list = field(default_factory=list)
    fn: object = None  # forward: input values -> value (None for a leaf)
    index: int = 0
    grad: np.ndarray = None  # dL/d(this node), filled by Tape.backward
    shares: list = field(default_factory=list)  # [(input node, share)] sent by backward
    held: bool = False  # a stop-gradient: its backward sends 0, a replay keeps its value

    @property
    def inputs(self):
        return [e.source for e in self.edges]

    @property
    def is_leaf(self):
        return self.fn is None

    def share(self, name):
        """The share of this node's gradient that backward sent to its input ``name``."""
        for source, share in self.shares:
            if source.name == name:
                return share
        raise KeyError(f"{self.name} sent no share to {name!r}; its inputs: {[e.source.name for e in self.edges]}")


class Tape:
    """A list of nodes in forward order; the builders below append one node per elementary step."""

    def __init__(self):
        self.nodes = []

    def __iter__(self):
        return iter(self.nodes)

    def __getitem__(self, name):
        for node in self.nodes:
            if node.name == name:
                return node
        raise KeyError(f"no node named {name!r} on the tape; nodes: {[n.name for n in self.nodes]}")

    @property
    def output(self):
        return self.nodes[-1]

    def consumers(self, node):
        """The nodes that take ``node`` as an input, in forward order."""
        return [n for n in self.nodes if any(e.source is node for e in n.edges)]

    # --- building ----------------------------------------------------------------------------
    def leaf(self, name, value, tex=None, step=INPUT):
        """An input or parameter: a value with no formula; its gradient is the end of the road.
        ``step`` says what else a leaf may be: N_("running statistic") (a layer's buffer), or
        N_("parameter") for a parameter the tape starts at (WeightNorm's v)."""
        tex = tex or name
        return self._append(Node(name, step, np.array(value, dtype=np.float64), tex, name, tex))

    def _op(self, name, step, tex, fn, edges, formula, formula_tex):
        value = fn(*(e.source.value for e in edges))
        return self._append(Node(name, step, value, tex, formula, formula_tex, edges, fn))

    def _append(self, node):
        node.index = len(self.nodes)
        self.nodes.append(node)
        return node

    # --- the elementary operations -----------------------------------------------------------
    # Each returns the new node. ``over`` names the reduced axes in the text (e.g. "N" or "D"),
    # ``tex`` is the node's LaTeX symbol; the input symbols come from the input nodes.
    def mean(self, a, axes, name, step, over, tex):
        n = int(np.prod([a.value.shape[i] for i in axes]))
        return self._op(
            name, step, tex, lambda v: v.mean(axis=axes, keepdims=True),
            [Edge(a, f"d {name}/d {a.name}_i = 1/n = 1/{n}",
                  rf"\frac{{\partial {tex}}}{{\partial {{{a.tex}}}_{{i}}}} = \frac{{1}}{{{n}}}",
                  f"d_{a.name} += broadcast(d_{name}) / {n}",
                  lambda g, out, v: np.broadcast_to(g, v.shape) / n)],
            f"{name} = mean_{over}({a.name})", rf"{tex} = \frac{{1}}{{{n}}}\sum_{{{over}}} {a.tex}")

    def sum(self, a, axes, name, step, over, tex):
        return self._op(
            name, step, tex, lambda v: v.sum(axis=axes, keepdims=True),
            [Edge(a, f"d {name}/d {a.name}_i = 1", rf"\frac{{\partial {tex}}}{{\partial {{{a.tex}}}_{{i}}}} = 1",
                  f"d_{a.name} += broadcast(d_{name})", lambda g, out, v: np.broadcast_to(g, v.shape).copy())],
            f"{name} = sum_{over}({a.name})", rf"{tex} = \sum_{{{over}}} {a.tex}")

    def max(self, a, axes, name, step, over, tex):
        def first_argmax(v, out):  # 1 where v is the maximum (the first one on a tie), else 0
            hit = (v == out)
            first = np.cumsum(hit, axis=axes[0]) == 1
            return (hit & first).astype(v.dtype)

        return self._op(
            name, step, tex, lambda v: v.max(axis=axes, keepdims=True),
            [Edge(a, Phrase(N_("{d} = 1 at the argmax, 0 elsewhere"), d=f"d {name}/d {a.name}_i"),
                  rf"\frac{{\partial {tex}}}{{\partial {{{a.tex}}}_{{i}}}} = [\,i = \arg\max\,]",
                  Phrase(N_("{d} at the argmax"), d=f"d_{a.name} += d_{name}"),
                  lambda g, out, v: g * first_argmax(v, out))],
            f"{name} = max_{over}({a.name})", rf"{tex} = \max_{{{over}}} {a.tex}")

    def sub(self, a, b, name, step, tex, over=None):
        """a - b, with b broadcast over the axes named ``over`` (if any)."""
        red = f"sum_{over}(d_{name})" if over else f"d_{name}"
        return self._op(
            name, step, tex, lambda u, v: u - v,
            [Edge(a, f"d {name}/d {a.name} = 1", rf"\frac{{\partial {tex}}}{{\partial {a.tex}}} = 1",
                  f"d_{a.name} += d_{name}", lambda g, out, u, v: sum_to_shape(g, u.shape)),
             Edge(b, f"d {name}/d {b.name} = -1", rf"\frac{{\partial {tex}}}{{\partial {b.tex}}} = -1",
                  f"d_{b.name} += -{red}", lambda g, out, u, v: -sum_to_shape(g, v.shape))],
            f"{name} = {a.name} - {b.name}", rf"{tex} = {a.tex} - {b.tex}")

    def square(self, a, name, step, tex):
        return self._op(
            name, step, tex, lambda v: v * v,
            [Edge(a, f"d {name}/d {a.name} = 2 * {a.name}",
                  rf"\frac{{\partial {tex}}}{{\partial {a.tex}}} = 2\,{a.tex}",
                  f"d_{a.name} += d_{name} * 2 * {a.name}", lambda g, out, v: g * 2.0 * v)],
            f"{name} = {a.name}**2", rf"{tex} = {a.tex}^2")

    def add_constant(self, a, c, cname, name, step, tex, ctex=None):
        return self._op(
            name, step, tex, lambda v: v + c,
            [Edge(a, f"d {name}/d {a.name} = 1", rf"\frac{{\partial {tex}}}{{\partial {a.tex}}} = 1",
                  f"d_{a.name} += d_{name}", lambda g, out, v: g)],
            f"{name} = {a.name} + {cname}", rf"{tex} = {a.tex} + {ctex or cname}")

    def rsqrt(self, a, name, step, tex):
        return self._op(
            name, step, tex, lambda v: 1.0 / np.sqrt(v),
            [Edge(a, f"d {name}/d {a.name} = -1/2 * {a.name}**(-3/2)",
                  rf"\frac{{\partial {tex}}}{{\partial {a.tex}}} = -\tfrac{{1}}{{2}}\,{a.tex}^{{-3/2}}",
                  f"d_{a.name} += d_{name} * (-1/2) * {a.name}**(-3/2)",
                  lambda g, out, v: g * -0.5 * v ** -1.5)],
            f"{name} = 1 / sqrt({a.name})", rf"{tex} = 1/\sqrt{{{a.tex}}}")

    def sqrt(self, a, name, step, tex):
        return self._op(
            name, step, tex, np.sqrt,
            [Edge(a, f"d {name}/d {a.name} = 1 / (2 * sqrt({a.name})) = 1 / (2 * {name})",
                  rf"\frac{{\partial {tex}}}{{\partial {a.tex}}} = \frac{{1}}{{2\,{tex}}}",
                  f"d_{a.name} += d_{name} / (2 * {name})", lambda g, out, v: g / (2.0 * out))],
            f"{name} = sqrt({a.name})", rf"{tex} = \sqrt{{{a.tex}}}")

    def div(self, a, b, name, step, tex, over_a=None):
        """a / b with broadcasting; ``over_a`` names the axes b's share is summed over (where a
        is larger than b)."""
        rb = f"sum_{over_a}(d_{name} * {a.name})" if over_a else f"d_{name} * {a.name}"
        return self._op(
            name, step, tex, lambda u, v: u / v,
            [Edge(a, f"d {name}/d {a.name} = 1 / {b.name}",
                  rf"\frac{{\partial {tex}}}{{\partial {a.tex}}} = 1/{b.tex}",
                  f"d_{a.name} += d_{name} / {b.name}", lambda g, out, u, v: sum_to_shape(g / v, u.shape)),
             Edge(b, f"d {name}/d {b.name} = -{a.name} / {b.name}**2",
                  rf"\frac{{\partial {tex}}}{{\partial {b.tex}}} = -{a.tex}/{b.tex}^2",
                  f"d_{b.name} += -{rb} / {b.name}**2",
                  lambda g, out, u, v: -sum_to_shape(g * u, v.shape) / (v * v))],
            f"{name} = {a.name} / {b.name}", rf"{tex} = {a.tex}/{b.tex}")

    def clip(self, a, low, high, name, step, tex, bounds=None, bounds_tex=None):
        """a clipped to [low, high]; its derivative is 1 inside and 0 where a value was clipped.
        The bounds are constants, written as ``bounds`` = (low's name, high's name), e.g.
        ("1/r_max", "r_max"), and ``bounds_tex`` in LaTeX (default: their values)."""
        lo, hi = bounds or (f"{low:.4g}", f"{high:.4g}")
        lo_tex, hi_tex = bounds_tex or (lo, hi)
        return self._op(
            name, step, tex, lambda v: np.clip(v, low, high),
            [Edge(a, Phrase(N_("{d} = 1 inside the bounds, 0 where {a} was clipped"),
                            d=f"d {name}/d {a.name}", a=a.name),
                  rf"\frac{{\partial {tex}}}{{\partial {a.tex}}} = [\,{lo_tex} < {a.tex} < {hi_tex}\,]",
                  f"d_{a.name} += d_{name} * [{lo} < {a.name} < {hi}]",
                  lambda g, out, v: np.where((v > low) & (v < high), g, 0.0))],
            f"{name} = clip({a.name}, {lo}, {hi})", rf"{tex} = \mathrm{{clip}}({a.tex}, {lo_tex}, {hi_tex})")

    def stop_gradient(self, a, name, step, tex):
        """a's value, held constant: the backward sends 0 to a (Batch Renorm's r and d). The
        node is ``held``: a replay for the numerical gradient keeps its value too."""
        node = self._op(
            name, step, tex, lambda v: v.copy(),
            [Edge(a, f"d {name}/d {a.name} := 0",
                  rf"\frac{{\partial {tex}}}{{\partial {a.tex}}} := 0",
                  Phrase(N_("backward: 0 (held constant): {d}"), d=f"d_{a.name} += 0"),
                  lambda g, out, v: np.zeros_like(v))],
            f"{name} = stop_gradient({a.name})", rf"{tex} = \mathrm{{sg}}({a.tex})")
        node.held = True
        return node

    def reciprocal(self, a, name, step, tex):
        return self._op(
            name, step, tex, lambda v: 1.0 / v,
            [Edge(a, f"d {name}/d {a.name} = -1 / {a.name}**2",
                  rf"\frac{{\partial {tex}}}{{\partial {a.tex}}} = -1/{a.tex}^2",
                  f"d_{a.name} += d_{name} * (-1) / {a.name}**2", lambda g, out, v: -g / (v * v))],
            f"{name} = 1 / {a.name}", rf"{tex} = 1/{a.tex}")

    def exp(self, a, name, step, tex):
        return self._op(
            name, step, tex, np.exp,
            [Edge(a, f"d {name}/d {a.name} = exp({a.name}) = {name}",
                  rf"\frac{{\partial {tex}}}{{\partial {a.tex}}} = e^{{{a.tex}}} = {tex}",
                  f"d_{a.name} += d_{name} * {name}", lambda g, out, v: g * out)],
            f"{name} = exp({a.name})", rf"{tex} = e^{{{a.tex}}}")

    def tanh(self, a, name, step, tex):
        """tanh(a); its derivative is written with the output: 1 - tanh(a)**2 = 1 - out**2."""
        return self._op(
            name, step, tex, np.tanh,
            [Edge(a, f"d {name}/d {a.name} = 1 - tanh({a.name})**2 = 1 - {name}**2",
                  rf"\frac{{\partial {tex}}}{{\partial {a.tex}}} = 1 - {tex}^2",
                  f"d_{a.name} += d_{name} * (1 - {name}**2)", lambda g, out, v: g * (1.0 - out * out))],
            f"{name} = tanh({a.name})", rf"{tex} = \tanh {a.tex}")

    def mul(self, a, b, name, step, tex, over_a=None, over_b=None):
        """a * b with broadcasting; ``over_a``/``over_b`` name the axes a's / b's share is summed over."""
        ra = f"sum_{over_a}(d_{name} * {b.name})" if over_a else f"d_{name} * {b.name}"
        rb = f"sum_{over_b}(d_{name} * {a.name})" if over_b else f"d_{name} * {a.name}"
        return self._op(
            name, step, tex, lambda u, v: u * v,
            [Edge(a, f"d {name}/d {a.name} = {b.name}", rf"\frac{{\partial {tex}}}{{\partial {a.tex}}} = {b.tex}",
                  f"d_{a.name} += {ra}", lambda g, out, u, v: sum_to_shape(g * v, u.shape)),
             Edge(b, f"d {name}/d {b.name} = {a.name}", rf"\frac{{\partial {tex}}}{{\partial {b.tex}}} = {a.tex}",
                  f"d_{b.name} += {rb}", lambda g, out, u, v: sum_to_shape(g * u, v.shape))],
            f"{name} = {a.name} * {b.name}", rf"{tex} = {a.tex}\,{b.tex}")

    def add(self, a, b, name, step, tex, over_b=None):
        rb = f"sum_{over_b}(d_{name})" if over_b else f"d_{name}"
        return self._op(
            name, step, tex, lambda u, v: u + v,
            [Edge(a, f"d {name}/d {a.name} = 1", rf"\frac{{\partial {tex}}}{{\partial {a.tex}}} = 1",
                  f"d_{a.name} += d_{name}", lambda g, out, u, v: sum_to_shape(g, u.shape)),
             Edge(b, f"d {name}/d {b.name} = 1", rf"\frac{{\partial {tex}}}{{\partial {b.tex}}} = 1",
                  f"d_{b.name} += {rb}", lambda g, out, u, v: sum_to_shape(g, v.shape))],
            f"{name} = {a.name} + {b.name}", rf"{tex} = {a.tex} + {b.tex}")

    def reshape(self, a, shape, name, step, tex):
        """The same values in another shape: each element's derivative is 1 to itself."""
        shape = tuple(shape)
        return self._op(
            name, step, tex, lambda v: v.reshape(shape),
            [Edge(a, Phrase(N_("{d} = 1 (the same element, moved)"), d=f"d {name}/d {a.name}"),
                  rf"\frac{{\partial {tex}}}{{\partial {a.tex}}} = 1",
                  f"d_{a.name} += reshape(d_{name}, {_shape_text(a.value.shape)})",
                  lambda g, out, v: g.reshape(v.shape))],
            f"{name} = reshape({a.name}, {_shape_text(shape)})",
            rf"{tex} = \mathrm{{reshape}}({a.tex})")

    # --- matrix products (Linear, attention) ------------------------------------------------
    def matmul(self, a, b, name, step, tex):
        """a @ b over the last two axes, leading axes broadcast (a batch of heads); each input's
        share is the gradient times the other input, transposed, summed back to its shape."""
        t = lambda v: np.swapaxes(v, -1, -2)  # noqa: E731  (the transpose of the last two axes)
        return self._op(
            name, step, tex, lambda u, v: u @ v,
            [Edge(a, Phrase(N_("{d} (on the right)"), d=f"d {name}/d {a.name} = {b.name}^T"),
                  rf"\frac{{\partial {tex}}}{{\partial {a.tex}}} = {b.tex}^{{\top}}",
                  f"d_{a.name} += d_{name} @ {b.name}^T",
                  lambda g, out, u, v: sum_to_shape(g @ t(v), u.shape)),
             Edge(b, Phrase(N_("{d} (on the left)"), d=f"d {name}/d {b.name} = {a.name}^T"),
                  rf"\frac{{\partial {tex}}}{{\partial {b.tex}}} = {a.tex}^{{\top}}",
                  f"d_{b.name} += {a.name}^T @ d_{name}",
                  lambda g, out, u, v: sum_to_shape(t(u) @ g, v.shape))],
            f"{name} = {a.name} @ {b.name}", rf"{tex} = {a.tex}\,{b.tex}")

    def transpose(self, a, axes, name, step, tex):
        """The same values with their axes permuted by ``axes``; the gradient goes back through
        the inverse permutation."""
        axes = tuple(axes)
        inverse = tuple(np.argsort(axes))
        return self._op(
            name, step, tex, lambda v: np.transpose(v, axes),
            [Edge(a, Phrase(N_("{d} = 1 (the same element, moved)"), d=f"d {name}/d {a.name}"),
                  rf"\frac{{\partial {tex}}}{{\partial {a.tex}}} = 1",
                  f"d_{a.name} += transpose(d_{name}, {axes})", lambda g, out, v: np.transpose(g, inverse))],
            f"{name} = transpose({a.name}, {axes})", rf"{tex} = \mathrm{{transpose}}({a.tex})")

    # --- log-softmax, cross-entropy and GELU ---------------------------------------------------
    def log(self, a, name, step, tex):
        return self._op(
            name, step, tex, np.log,
            [Edge(a, f"d {name}/d {a.name} = 1 / {a.name}",
                  rf"\frac{{\partial {tex}}}{{\partial {a.tex}}} = 1/{a.tex}",
                  f"d_{a.name} += d_{name} / {a.name}", lambda g, out, v: g / v)],
            f"{name} = log({a.name})", rf"{tex} = \log {a.tex}")

    def erf(self, a, name, step, tex):
        """erf(a); its derivative is the Gaussian bell 2/sqrt(pi) * exp(-a**2)."""
        two_over_sqrt_pi = 2.0 / np.sqrt(np.pi)
        return self._op(
            name, step, tex, _erf,
            [Edge(a, f"d {name}/d {a.name} = 2/sqrt(pi) * exp(-{a.name}**2)",
                  rf"\frac{{\partial {tex}}}{{\partial {a.tex}}} = \tfrac{{2}}{{\sqrt{{\pi}}}}\,e^{{-{a.tex}^2}}",
                  f"d_{a.name} += d_{name} * 2/sqrt(pi) * exp(-{a.name}**2)",
                  lambda g, out, v: g * two_over_sqrt_pi * np.exp(-v * v))],
            f"{name} = erf({a.name})", rf"{tex} = \operatorname{{erf}} {a.tex}")

    def scale(self, a, c, cname, name, step, tex, ctex=None, constant_first=True):
        """c * a for a constant c named ``cname`` (e.g. "0.5", "k", dropout's "mask"): a fixed
        number or array, not on the tape, so it gets no gradient. ``constant_first`` writes
        c * a, else a * c."""
        ctex = ctex or cname
        text, latex = ((f"{cname} * {a.name}", rf"{ctex}\,{a.tex}") if constant_first
                       else (f"{a.name} * {cname}", rf"{a.tex}\,{ctex}"))
        return self._op(
            name, step, tex, lambda v: c * v,
            [Edge(a, f"d {name}/d {a.name} = {cname}", rf"\frac{{\partial {tex}}}{{\partial {a.tex}}} = {ctex}",
                  f"d_{a.name} += d_{name} * {cname}", lambda g, out, v: g * c)],
            f"{name} = {text}", rf"{tex} = {latex}")

    def relu(self, a, name, step, tex):
        """max(a, 0); its derivative is the indicator [a > 0]: 0 at a = 0 exactly, where ReLU
        has no derivative, as normcore's (and PyTorch's) ReLU takes it."""
        return self._op(
            name, step, tex, lambda v: np.maximum(v, 0.0),
            [Edge(a, Phrase(N_("{d} = [{a} > 0]: 1 where {a} > 0, else 0 (at {a} = 0 too)"),
                            d=f"d {name}/d {a.name}", a=a.name),
                  rf"\frac{{\partial {tex}}}{{\partial {a.tex}}} = [\,{a.tex} > 0\,]",
                  f"d_{a.name} += d_{name} * [{a.name} > 0]", lambda g, out, v: np.where(v > 0, g, 0.0))],
            f"{name} = max({a.name}, 0)", rf"{tex} = \max({a.tex}, 0)")

    def cube(self, a, name, step, tex):
        return self._op(
            name, step, tex, lambda v: v * v * v,
            [Edge(a, f"d {name}/d {a.name} = 3 * {a.name}**2",
                  rf"\frac{{\partial {tex}}}{{\partial {a.tex}}} = 3\,{a.tex}^2",
                  f"d_{a.name} += d_{name} * 3 * {a.name}**2", lambda g, out, v: g * 3.0 * v * v)],
            f"{name} = {a.name}**3", rf"{tex} = {a.tex}^3")

    def pick(self, a, index, name, step, tex):
        """Row n's entry at column index[n] of a 2-D ``a`` (the target's log-probability); the
        index is data, not a node: it has no gradient."""
        index = np.asarray(index)
        rows = np.arange(index.size)

        def scatter(g, out, v):  # the share goes back to the picked entries only
            share = np.zeros_like(v)
            share[rows, index] = g[:, 0]
            return share

        return self._op(
            name, step, tex, lambda v: v[rows, index][:, None],
            [Edge(a, Phrase(N_("{d} = 1 where j = y_n, 0 elsewhere"), d=f"d {name}_n/d {a.name}_nj"),
                  rf"\frac{{\partial {tex}_n}}{{\partial {{{a.tex}}}_{{nj}}}} = [\,j = y_n\,]",
                  Phrase(N_("{d} at the target, 0 elsewhere"), d=f"d_{a.name} += d_{name}"), scatter)],
            f"{name} = {a.name}[n, y_n]", rf"{tex}_n = {{{a.tex}}}_{{n, y_n}}")

    def gather(self, a, index, name, step, tex):
        """The rows of ``a`` at the integer ids ``index`` (an embedding's lookup); the ids are
        data, not a node. The backward scatters each row's gradient back to the row it came
        from, adding up where an id repeats (np.add.at: a plain d_a[index] += g would keep only
        one of them)."""
        index = np.asarray(index)

        def scatter_add(g, out, v):
            share = np.zeros_like(v)
            np.add.at(share, index, g)
            return share

        return self._op(
            name, step, tex, lambda v: v[index],
            [Edge(a, Phrase(N_("{d} = 1 where idx_n = i, 0 elsewhere"), d=f"d {name}_n/d {a.name}_i"),
                  rf"\frac{{\partial {tex}_n}}{{\partial {{{a.tex}}}_{{i}}}} = [\,i = \mathrm{{idx}}_n\,]",
                  Phrase(N_("{d} for every position n (a repeated id adds up)"),
                         d=f"d_{a.name}[idx_n] += d_{name}[n]"), scatter_add)],
            f"{name} = {a.name}[idx]", rf"{tex}_n = {{{a.tex}}}_{{\mathrm{{idx}}_n}}")

    # --- across ranks (SyncBatchNorm) --------------------------------------------------------
    def all_reduce(self, parts, name, step, tex):
        """The sum of one vector per rank, which every rank receives: a message, not arithmetic
        on one worker. Its backward sends the gradient that reached the total, already summed
        over every rank's use of it, back to each rank unchanged."""
        return self._op(
            name, step, tex, lambda *values: sum(values[1:], values[0].copy()),  # in rank order
            [Edge(p, f"d {name}/d {p.name} = 1",
                  rf"\frac{{\partial {tex}}}{{\partial {p.tex}}} = 1",
                  Phrase(N_("{d} (rank {r} receives the summed gradient)"), d=f"d_{p.name} += d_{name}", r=r),
                  lambda g, out, *values: g.copy())
             for r, p in enumerate(parts)],
            f"{name} = all_reduce({_listed(parts)})",
            rf"{tex} = " + " + ".join(p.tex for p in parts))

    def concat(self, parts, axis, name, step, tex):
        """The parts side by side along ``axis`` (each rank's rows, for the loss); each part's
        gradient is its own slice of the total's."""
        bounds = np.cumsum([0] + [p.value.shape[axis] for p in parts])

        def piece(start, stop):  # the vjp of one part: its slice of the gradient
            return lambda g, out, *values: np.take(g, range(start, stop), axis=axis)

        return self._op(
            name, step, tex, lambda *values: np.concatenate(values, axis=axis),
            [Edge(p, Phrase(N_("{d} = 1 on its rows {a}:{b}"), d=f"d {name}/d {p.name}", a=a, b=b),
                  rf"\frac{{\partial {tex}}}{{\partial {p.tex}}} = 1",
                  f"d_{p.name} += d_{name}[{a}:{b}]", piece(a, b))
             for p, a, b in zip(parts, bounds[:-1], bounds[1:])],
            f"{name} = concat({_listed(parts)})",
            rf"{tex} = [" + "; ".join(p.tex for p in parts) + "]")

    # --- backward, replay and the numerical gradient -------------------------------------------
    def backward(self, dy):
        """Fill every node's ``grad`` (dL/d node) for L = sum(output * dy), one node at a time."""
        dy = np.asarray(dy, dtype=np.float64)
        if dy.shape != self.output.value.shape:
            raise ValueError(f"the upstream gradient must have the output's shape "
                             f"{self.output.value.shape}, got {dy.shape}")
        for node in self.nodes:
            node.grad = np.zeros_like(node.value)
            node.shares = []
        self.output.grad = dy.copy()
        for node in reversed(self.nodes):
            values = [e.source.value for e in node.edges]
            for edge in node.edges:
                share = np.asarray(edge.vjp(node.grad, node.value, *values), dtype=np.float64)
                edge.source.grad += share  # a value used twice receives both shares
                node.shares.append((edge.source, share))
        return {n.name: n.grad for n in self.nodes if n.is_leaf}

    def replay(self, overrides, hold=True):
        """The output when the nodes named in ``overrides`` take the given values instead. With
        ``hold`` (the default) a stop-gradient node keeps its forward value, as its backward
        treats it; ``hold=False`` recomputes it: the forward itself."""
        values = {}
        for node in self.nodes:
            if node.name in overrides:
                values[node.name] = overrides[node.name]
            elif node.is_leaf or (hold and node.held):
                values[node.name] = node.value
            else:
                values[node.name] = node.fn(*(values[e.source.name] for e in node.edges))
        return values[self.output.name]

    def numerical_grad(self, node, dy, h=1e-6, hold=True):
        """dL/d node, measured: nudge one element at a time, replay the nodes after it and take
        differences of L = sum(output * dy).

        The five-point stencil (L(z-2h) - 8 L(z-h) + 8 L(z+h) - L(z+2h)) / (12 h) has an error of
        order h**4, so it stays accurate where plain central differences, with an error of order
        h**2, are not: a small variance (say 2e-4) bends 1/sqrt(var + eps) sharply within 1e-6.

        A stop-gradient node keeps its value in the replay (``hold``): the differences then
        measure the function the backward differentiates, its held values constants. With
        ``hold=False`` they measure the forward itself, held values recomputed.
        """
        dy = np.asarray(dy, dtype=np.float64)
        z = node.value.astype(np.float64).copy()
        grad = np.zeros_like(z)

        def loss_at(idx, value):
            z[idx] = value
            return float(np.sum(self.replay({node.name: z}, hold) * dy))

        for idx in np.ndindex(z.shape):
            old = z[idx]
            grad[idx] = (loss_at(idx, old - 2 * h) - 8 * loss_at(idx, old - h)
                         + 8 * loss_at(idx, old + h) - loss_at(idx, old + 2 * h)) / (12 * h)
            z[idx] = old
        return grad


def _listed(nodes):
    """'a, b, c' for up to three nodes, 'a, ..., z' for more: a formula that fits a line."""
    names = [n.name for n in nodes]
    return ", ".join(names if len(names) <= 3 else [names[0], "...", names[-1]])


def _shape_text(shape):
    """(3, 4) as '(3, 4)' and (6,) as '(6,)': a shape in a node's formula."""
    return str(tuple(int(n) for n in shape))
