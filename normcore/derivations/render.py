"""Printing a step-through: plain text for a terminal (at most ``width`` display columns) and
Markdown with LaTeX for the notebooks, in the language in use (formulas and numbers as they are)."""

import textwrap

import numpy as np

from .._array import flag
from ..i18n import N_, language, translator
from ..i18n.width import display_width, fill, pad

_ = translator("explain")
# a check's verdict and what it is against, as the table and the summary show them
VERDICTS = {"exact": N_("exact"), "close": N_("close"), "DIFFERS": N_("DIFFERS")}
AGAINST = {"compact": N_("compact"), "numerical": N_("numerical"), "batchnorm": N_("batchnorm")}

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


def _wrap(text, width, indent=0, hang=0, label=""):
    """``text`` filled to ``width`` display columns after ``indent`` spaces and ``label`` (kept
    as it is, spaces and all); the lines after the first are indented by ``hang`` more."""
    return fill(str(text), width, indent=" " * indent + label, subsequent_indent=" " * (indent + hang))


def _rule(title, width):
    return f"== {title} " + "=" * max(0, width - display_width(title) - 4)


def _received(tape, node):
    """'share from a + share from b': where a node's gradient comes from."""
    if node is tape.output:
        return _("dy, the upstream gradient")
    return " + ".join(_("share from {name}").format(name=c.name) for c in tape.consumers(node))


def _step(node):
    """A node's step in words ("centre", "add eps"; "input" for a leaf)."""
    return _(node.step)


def _verdict(check):
    return _(VERDICTS.get(check.verdict, check.verdict))


def _against(against):
    return _(AGAINST.get(against, against))


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
    what = st.what or {"softmax": _("softmax over {over}").format(over=st.over),
                       "dyt": _("element by element, no statistics")}.get(
        st.kind, _("statistics over {over}, eps = {eps}").format(over=st.over, eps=f"{st.eps:.3g}"))
    out += [_wrap(_("{title} step by step: {x} of shape {shape}, {what}").format(
                title=st.title, x=x.name, shape=x.value.shape, what=what), width),
            _wrap(st.loss_line or _("Loss L = sum({y} * dy) with a random dy, so dL/d{y} = dy.").format(
                y=tape.output.name), width)]
    out += [_wrap(note, width) for note in st.notes]
    out += abbreviation_note(st, width)
    if np.isneginf(x.value).any():
        out.append(_wrap(_("The -inf scores are masked (a causal mask): they get probability 0 and "
                           "no gradient."), width))
    if st.mask is not None:  # dropout: the fixed mask the forward and the backward share
        out.append(_wrap(_("The mask (1 keeps an element, 0 drops it), drawn once from the seed:"), width))
        out.append(_array(st, st.mask.astype(int), 4, width))
    out.append("")
    return out


def _forward(st, width, latex):
    tape, out = st.tape, header(st, width)
    out.append(_rule(_("Forward: {n} nodes, one elementary step each").format(n=len(tape.nodes)), width))
    for node in tape:
        head = f"[{node.index:>2}] {node.name:<8} {pad(_step(node), 11)} "
        shape = str(node.value.shape)
        formula = "" if node.is_leaf else node.formula
        out.append(f"{head}{formula:<{max(1, width - display_width(head) - len(shape) - 1)}} {shape}")
        if latex and not node.is_leaf:
            out.append(_wrap(node.formula_tex, width, indent=4, hang=9, label="TeX: "))
        out.append(_array(st, node.value, 4, width))
    out.append("")
    return out


def backward_intro(st, width=80):
    """The heading of the backward and how a node passes its gradient on."""
    return [_rule(_("Backward: from dL/d{y} to the inputs, one node at a time").format(y=st.tape.output.name),
                  width),
            _wrap(_("Each node receives dL/d(node) from the nodes that used it, multiplies by "
                    "its local derivative and passes one share to each of its inputs. A value "
                    "used twice adds up both shares."), width)]


def backward_order(st):
    """The tape's nodes in the order the backward visits them: from the output back to x."""
    return list(reversed(st.tape.nodes))


def node_lines(st, node, width=80, latex=True, numbers=True):
    """One node of the backward: its formula, where its gradient comes from and, for each input,
    the local derivative and the rule; with ``numbers``, the gradient and each share's values."""
    tape = st.tape
    out = ["", f"[{node.index:>2}] {node.name}: " + (_step(node) if node.is_leaf else f"{_step(node)}, {node.formula}")]
    out.append(_wrap(f"dL/d{node.name} = {_received(tape, node)}", width, indent=4, hang=4))
    if numbers:
        out.append(_array(st, node.grad, 6, width))
    local, rule = _("local"), _("rule")  # the labels of an edge's lines, in a column of their own
    hang = max(display_width(local), display_width(rule)) + 2
    for edge, (_source, share) in zip(node.edges, node.shares):
        out.append("    " + _("to {name}:").format(name=edge.source.name))
        out.append(_wrap(edge.local, width, indent=6, hang=hang, label=pad(local, hang)))
        if latex:
            out.append(_wrap(edge.local_tex, width, indent=6, hang=hang, label=pad("TeX", hang)))
        out.append(_wrap(edge.rule, width, indent=6, hang=hang, label=pad(rule, hang)))
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
    out.append(_rule(_("Checks"), width))
    out.append(_wrap(_("The staged gradients against {reference} (compact) and against central differences "
                       "of L (numerical, every node replayed from a nudged value). The compact formula:").format(
        reference=st.reference), width))
    out.append(_wrap(st.compact, width, indent=4, hang=5))
    held = [node.name for node in tape if node.held]
    if held:
        out.append(_wrap(_("The stop-gradient nodes ({names}) keep their values when the tape is replayed: "
                           "the numerical gradients are those of the function the backward differentiates, "
                           "with them held constant.").format(names=", ".join(held)), width))
    out.append("")
    out.append(pad(_("node"), 10) + pad(_("shape"), 12) + pad(_("vs compact"), 24) + _("vs numerical"))
    checks = {(c.node, c.against): c for c in st.checks}
    for node in tape:
        cells = []
        for against in ("compact", "numerical"):
            c = checks.get((node.name, against))
            diff = "0" if c and c.max_diff == 0 else f"{c.max_diff:.1e}" if c else ""
            cells.append(pad(_verdict(c), 8) + pad(diff, 16) if c else pad("-", 24))
        label = node.name + (_(" (fwd)") if node is tape.output else "")
        out.append(f"{pad(label, 9)} {str(node.value.shape):<12}{cells[0]}{cells[1]}".rstrip())
    out.append(_wrap(_("(exact: bit for bit; close: relative error within tolerance, or an absolute difference "
                       "at rounding level where the gradient is about 0; the numbers are the largest absolute "
                       "differences. The output row compares the forward values.)"), width))
    out.append("")
    out.append(_wrap(_("Properties of dL/d{x} (each about 0):").format(x=x.name), width))
    for description, value in st.properties:
        out.append(_wrap(_("{description}: max |.| = {value}").format(description=description, value=f"{value:.1e}"),
                         width, indent=2, hang=4))
    out.append("")
    out.append(_overall(st, width))
    return out


def verdict_lines(st, width=80):
    """One line per check, its verdict only (no numbers), then the overall verdict."""
    out = [_rule(_("Checks"), width),
           _wrap(_("The staged gradients against {reference} (compact) and against central differences of L "
                   "(numerical):").format(reference=st.reference), width)]
    vs = _("vs")
    out += [f"  {pad(c.node, 10)} {vs} {pad(_against(c.against), 10)} {_verdict(c)}" for c in st.checks]
    out.append(_overall(st, width))
    return out


def _overall(st, width):
    bad = [c for c in st.checks if c.verdict == "DIFFERS"]
    if not bad:
        return _wrap(_("All {n} checks are exact or close.").format(n=len(st.checks)), width)
    which = ", ".join(f"{c.node} ({_against(c.against)})" for c in bad)
    return _wrap(_("{bad} of {n} checks DIFFER: {which}").format(bad=len(bad), n=len(st.checks), which=which),
                 width)


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
    head = ["#", _("step"), _("node"), _("forward"), _("local derivative"), _("backward rule")]
    rows = ["| " + " | ".join(head) + " |", "|---|---|---|---|---|---|"]
    for node in st.tape:
        local = "<br>".join(f"${e.local_tex}$" for e in node.edges)
        rule = "<br>".join(f"`{e.rule}`" for e in node.edges)
        step = f"**{_step(node)}**" if node.held else _step(node)  # a stop-gradient stands out
        rows.append(f"| {node.index} | {step} | `{node.name}` | ${_forward_tex(node)}$ | {local} | {rule} |")
    return "\n".join(rows)


def export_markdown(st):
    """The derivation as a Markdown document for lecture notes: the heading, the tape's table
    (``render_markdown``), the backward node by node with display math, the checks' verdict."""
    # what is computed and how L is made: a list item each, since consecutive lines of Markdown
    # run into one paragraph
    out = ["# " + _("{title}: the backward step by step").format(title=st.title), "",
           *(f"- {line}" for line in header(st, width=10**6)[:2]),
           "", "## " + _("The tape"), "", render_markdown(st), "", "## " + _("Backward, from the output to the inputs")]
    source = _("from:")
    for node in backward_order(st):
        out += ["", f"### [{node.index}] `{node.name}`", "",
                f"$$\\frac{{\\partial L}}{{\\partial {node.tex}}} \\text{{ {source} }} "
                f"\\text{{{_tex_escape(_received(st.tape, node))}}}$$"]
        for edge in node.edges:
            out += ["", f"$${edge.local_tex}$$", "", _("rule: {rule}").format(rule=f"`{edge.rule}`")]
    out += ["", "## " + _("Checks"), "", _overall(st, width=10**6)]
    return "\n".join(out)


_TEX_SPECIAL = {c: "\\" + c for c in "_&%#$"}
_TEX_SPECIAL.update({"{": r"\{", "}": r"\}", "^": r"\^{}", "~": r"\~{}", "\\": r"\textbackslash{}"})


def _tex_escape(text):
    """Plain text (a rule, a node's name) made safe inside \\text{} or \\texttt{}."""
    return "".join(_TEX_SPECIAL.get(c, c) for c in str(text))


def _texttt(text):
    return f"\\texttt{{{_tex_escape(text)}}}"


def render_latex(st):
    """The derivation as a LaTeX fragment (needs amsmath): the forward as a list, then one
    ``align*`` per backward node with each input's local derivative and the rule."""
    out = [f"% normcore explain {st.kind}: {_tex_escape(st.title)}"]
    if language() == "zh":  # pdflatex stops at the first Chinese character
        out.append("% " + _("the words are in Chinese: compile with xelatex and the xeCJK package (or the ctex "
                            "class)"))
    title = _("{title}: the backward step by step").format(title=_tex_escape(st.title))
    out += ["\\section*{" + title + "}", "\\subsection*{" + _("Forward") + "}", "\\begin{enumerate}"]
    for node in st.tape:
        step = _tex_escape(_step(node))
        out.append(f"  \\item {_texttt(node.name)} ({step}): ${_forward_tex(node)}$")
    out += ["\\end{enumerate}", "\\subsection*{" + _("Backward, from the output to the inputs") + "}"]
    for node in backward_order(st):
        receives = _("[{index}] {name} receives").format(index=node.index, name=_texttt(node.name))
        lines = [f"  \\text{{{receives}}} &\\ \\text{{{_tex_escape(_received(st.tape, node))}}}"]
        for edge in node.edges:
            rule = _("rule: {rule}").format(rule=_texttt(edge.rule))
            lines.append(f"  {edge.local_tex} &&\\text{{{rule}}}")
        out += ["\\begin{align*}", " \\\\\n".join(lines), "\\end{align*}"]
    out.append(_tex_escape(_overall(st, width=10**6)))
    return "\n".join(out)
