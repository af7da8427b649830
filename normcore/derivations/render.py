"""Printing a step-through: plain text for a terminal (at most ``width`` columns) and Markdown
with LaTeX for the notebooks."""

import textwrap

import numpy as np

from .._array import flag
from ..i18n import translator

_ = translator("explain")

# One abbreviation rule for every array a step-through prints (values, gradients, statistics,
# shares, dropout's mask): when any array on the tape has more than ABBREVIATE_OVER values,
# every array shows its corners, the first and last EDGE entries along each axis longer than
# 2 * EDGE; otherwise every array prints whole. So a statistic (N, 1) is cut like its input.
ABBREVIATE_OVER, EDGE = 60, 2


def abbreviated(st):
    """Whether ``st`` prints its arrays by their corners (see ABBREVIATE_OVER)."""
    return any(node.value.size > ABBREVIATE_OVER for node in st.tape)


def abbreviation_note(st, width=80):
    """The one line that says the arrays are abbreviated, and how (none when they are not)."""
    if not abbreviated(st):
        return []
    return [_wrap(_("Arrays abbreviated: the tape holds arrays of more than {n} values, so every "
                    "array shows its corners, the first and last {k} entries along each axis "
                    "longer than {m} (... stands for the rest).").format(
                        n=ABBREVIATE_OVER, k=EDGE, m=2 * EDGE), width)]


def _array(st, a, indent, width):
    """An array of ``st`` as text, every line indented and at most ``width`` columns, cut to its
    corners when ``abbreviated(st)``; a value that rounds to zero prints as 0.0000, never
    -0.0000."""
    a = np.asarray(a)
    if a.dtype.kind == "f":
        a = np.round(a, 4) + 0.0
    text = np.array2string(a, precision=4, floatmode="fixed", sign=" ", suppress_small=True,
                           max_line_width=width - indent, edgeitems=EDGE,
                           threshold=0 if abbreviated(st) else a.size)
    return textwrap.indent(text, " " * indent)


def _wrap(text, width, indent=0, hang=0):
    return textwrap.fill(text, width, initial_indent=" " * indent,
                         subsequent_indent=" " * (indent + hang), break_on_hyphens=False)


def _rule(title, width):
    return f"== {title} " + "=" * max(0, width - len(title) - 4)


def _received(tape, node):
    """'share from a + share from b': where a node's gradient comes from."""
    if node is tape.output:
        return "dy, the upstream gradient"
    return " + ".join(f"share from {c.name}" for c in tape.consumers(node))


PARTS = ("forward", "backward", "checks")


def render_text(st, width=80, latex=True, parts=PARTS):
    """The step-through as text: ``parts`` picks among the forward, backward and checks sections."""
    latex = flag(latex, "latex", "render_text")
    unknown = set(parts) - set(PARTS)
    if unknown:
        raise ValueError(f"parts must be among {PARTS}, got {sorted(unknown)}")
    out = []
    if "forward" in parts:
        out += _forward(st, width, latex)
    if "backward" in parts:
        out += [] if "forward" in parts else abbreviation_note(st, width)
        out += _backward(st, width, latex)
    if "checks" in parts:
        out += _checks(st, width)
    return "\n".join(out).strip("\n")


def header(st, width=80):
    """The lines above the forward: what is computed, how L is made, notes, dropout's mask."""
    tape, out = st.tape, []
    x = tape.nodes[0]
    what = st.what or {"softmax": f"softmax over {st.over}",
                       "dyt": "element by element, no statistics"}.get(st.kind, f"statistics over {st.over}, "
                                                                                f"eps = {st.eps:.3g}")
    out += [_wrap(f"{st.title} step by step: {x.name} of shape {x.value.shape}, {what}", width),
            _wrap(st.loss_line or f"Loss L = sum({tape.output.name} * dy) with a random dy, so "
                                  f"dL/d{tape.output.name} = dy.", width)]
    out += [_wrap(note, width) for note in st.notes]
    out += abbreviation_note(st, width)
    if np.isneginf(x.value).any():
        out.append(_wrap("The -inf scores are masked (a causal mask): they get probability 0 and "
                         "no gradient.", width))
    if st.mask is not None:  # dropout: the fixed mask the forward and the backward share
        out.append("The mask (1 keeps an element, 0 drops it), drawn once from the seed:")
        out.append(_array(st, st.mask.astype(int), 4, width))
    out.append("")
    return out


def _forward(st, width, latex):
    tape, out = st.tape, header(st, width)
    out.append(_rule(f"Forward: {len(tape.nodes)} nodes, one elementary step each", width))
    for node in tape:
        head = f"[{node.index:>2}] {node.name:<8} {node.step:<11} "
        shape = str(node.value.shape)
        formula = "" if node.is_leaf else node.formula
        out.append(f"{head}{formula:<{max(1, width - len(head) - len(shape) - 1)}} {shape}")
        if latex and not node.is_leaf:
            out.append(_wrap(f"TeX: {node.formula_tex}", width, indent=4, hang=9))
        out.append(_array(st, node.value, 4, width))
    out.append("")
    return out


def backward_intro(st, width=80):
    """The heading of the backward and how a node passes its gradient on."""
    return [_rule(f"Backward: from dL/d{st.tape.output.name} to the inputs, one node at a time", width),
            _wrap("Each node receives dL/d(node) from the nodes that used it, multiplies by "
                  "its local derivative and passes one share to each of its inputs. A value "
                  "used twice adds up both shares.", width)]


def backward_order(st):
    """The tape's nodes in the order the backward visits them: from the output back to x."""
    return list(reversed(st.tape.nodes))


def node_lines(st, node, width=80, latex=True, numbers=True):
    """One node of the backward: its formula, where its gradient comes from and, for each input,
    the local derivative and the rule; with ``numbers``, the gradient and each share's values."""
    tape = st.tape
    out = ["", f"[{node.index:>2}] {node.name}: " + ("input" if node.is_leaf else f"{node.step}, {node.formula}")]
    out.append(_wrap(f"dL/d{node.name} = {_received(tape, node)}", width, indent=4, hang=4))
    if numbers:
        out.append(_array(st, node.grad, 6, width))
    for edge, (_, share) in zip(node.edges, node.shares):
        out.append(f"    to {edge.source.name}:")
        out.append(_wrap(f"local  {edge.local}", width, indent=6, hang=7))
        if latex:
            out.append(_wrap(f"TeX    {edge.local_tex}", width, indent=6, hang=7))
        out.append(_wrap(f"rule   {edge.rule}", width, indent=6, hang=7))
        if numbers:
            out.append(_array(st, share, 8, width))
    return out


def _backward(st, width, latex):
    out = backward_intro(st, width)
    for node in backward_order(st):
        out += node_lines(st, node, width, latex)
    out.append("")
    return out


def _checks(st, width):
    tape, out = st.tape, []
    x = tape.nodes[0]
    out.append(_rule("Checks", width))
    out.append(_wrap(f"The staged gradients against {st.reference} (compact) and against "
                     f"central differences of L (numerical, every node replayed from a nudged "
                     f"value). The compact formula:", width))
    out.append(_wrap(st.compact, width, indent=4, hang=5))
    out.append("")
    out.append(f"{'node':<10}{'shape':<12}{'vs compact':<24}vs numerical")
    checks = {(c.node, c.against): c for c in st.checks}
    for node in tape:
        cells = []
        for against in ("compact", "numerical"):
            c = checks.get((node.name, against))
            diff = "0" if c and c.max_diff == 0 else f"{c.max_diff:.1e}" if c else ""
            cells.append(f"{c.verdict:<8}{diff:<16}" if c else f"{'-':<24}")
        label = node.name + (" (fwd)" if node is tape.output else "")
        out.append(f"{label:<9} {str(node.value.shape):<12}{cells[0]}{cells[1]}".rstrip())
    out.append(_wrap("(exact: bit for bit; close: relative error within tolerance, or an "
                     "absolute difference at rounding level where the gradient is about 0; the "
                     "numbers are the largest absolute differences. The output row compares "
                     "the forward values.)", width))
    out.append("")
    out.append(f"Properties of dL/d{x.name} (each about 0):")
    for description, value in st.properties:
        out.append(_wrap(f"{description}: max |.| = {value:.1e}", width, indent=2, hang=4))
    out.append("")
    out.append(_overall(st, width))
    return out


def verdict_lines(st, width=80):
    """One line per check, its verdict only (no numbers), then the overall verdict."""
    out = [_rule("Checks", width),
           _wrap(f"The staged gradients against {st.reference} (compact) and against central "
                 f"differences of L (numerical):", width)]
    out += [f"  {c.node:<10} vs {c.against:<10} {c.verdict}" for c in st.checks]
    out.append(_overall(st, width))
    return out


def _overall(st, width):
    bad = [c for c in st.checks if c.verdict == "DIFFERS"]
    return _wrap(f"All {len(st.checks)} checks are exact or close." if not bad else
                 f"{len(bad)} of {len(st.checks)} checks DIFFER: "
                 + ", ".join(f"{c.node} ({c.against})" for c in bad), width)


def render_summary(st, width=80):
    """The nodes and their rules without any values: each node's formula, local derivatives and
    backward rules, then each check's verdict on one line."""
    out = header(st, width)[:2] + [""] + backward_intro(st, width)
    for node in backward_order(st):
        out += node_lines(st, node, width, latex=False, numbers=False)
    out += [""] + verdict_lines(st, width)
    return "\n".join(out)


def _forward_tex(node):
    """A node's forward in LaTeX: its symbol for an input, its formula otherwise."""
    return node.tex if node.is_leaf else node.formula_tex


def render_markdown(st):
    """The tape as a Markdown table with LaTeX: forward formula, local derivatives, rules."""
    rows = ["| # | step | node | forward | local derivative | backward rule |",
            "|---|---|---|---|---|---|"]
    for node in st.tape:
        step = "input" if node.is_leaf else node.step
        local = "<br>".join(f"${e.local_tex}$" for e in node.edges)
        rule = "<br>".join(f"`{e.rule}`" for e in node.edges)
        rows.append(f"| {node.index} | {step} | `{node.name}` | ${_forward_tex(node)}$ | {local} | {rule} |")
    return "\n".join(rows)


def export_markdown(st):
    """The derivation as a Markdown document for lecture notes: the heading, the tape's table
    (``render_markdown``), the backward node by node with display math, the checks' verdict."""
    out = [f"# {st.title}: the backward step by step", "", *header(st, width=10**6)[:2], "",
           "## The tape", "", render_markdown(st), "", "## Backward, from the output to the inputs"]
    for node in backward_order(st):
        out += ["", f"### [{node.index}] `{node.name}`", "",
                f"$$\\frac{{\\partial L}}{{\\partial {node.tex}}} \\text{{ from: }} "
                f"\\text{{{_tex_escape(_received(st.tape, node))}}}$$"]
        for edge in node.edges:
            out += ["", f"$${edge.local_tex}$$", "", f"rule: `{edge.rule}`"]
    out += ["", "## Checks", "", _overall(st, width=10**6)]
    return "\n".join(out)


_TEX_SPECIAL = {c: "\\" + c for c in "_&%#$"}
_TEX_SPECIAL.update({"{": r"\{", "}": r"\}", "^": r"\^{}", "~": r"\~{}", "\\": r"\textbackslash{}"})


def _tex_escape(text):
    """Plain text (a rule, a node's name) made safe inside \\text{} or \\texttt{}."""
    return "".join(_TEX_SPECIAL.get(c, c) for c in text)


def render_latex(st):
    """The derivation as a LaTeX fragment (needs amsmath): the forward as a list, then one
    ``align*`` per backward node with each input's local derivative and the rule."""
    out = [f"% normcore explain {st.kind}: {_tex_escape(st.title)}",
           f"\\section*{{{_tex_escape(st.title)}: the backward step by step}}",
           "\\subsection*{Forward}", "\\begin{enumerate}"]
    for node in st.tape:
        step = "input" if node.is_leaf else _tex_escape(node.step)
        out.append(f"  \\item \\texttt{{{_tex_escape(node.name)}}} ({step}): ${_forward_tex(node)}$")
    out += ["\\end{enumerate}", "\\subsection*{Backward, from the output to the inputs}"]
    for node in backward_order(st):
        lines = [f"  \\text{{[{node.index}] \\texttt{{{_tex_escape(node.name)}}} receives}} "
                 f"&\\ \\text{{{_tex_escape(_received(st.tape, node))}}}"]
        lines += [f"  {edge.local_tex} &&\\text{{rule: \\texttt{{{_tex_escape(edge.rule)}}}}}"
                  for edge in node.edges]
        out += ["\\begin{align*}", " \\\\\n".join(lines), "\\end{align*}"]
    out.append(_tex_escape(_overall(st, width=10**6)))
    return "\n".join(out)
