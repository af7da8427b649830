"""``normcore explain NORM``: one norm's gradient, from the loss back to x, one node at a time;
with ``--graph FILE.png``, the picture of its computation graph instead."""

import argparse
import math
import sys

from ..derivations import KINDS, step_through
from ..derivations.blocks import POSITIONS
from ..derivations.normalization import DROPOUT_P
from ..derivations.registry import find, options
from ..derivations.render import (backward_intro, backward_order, export_markdown, header,
                                  node_lines, render_latex, render_summary)
from ..i18n import N_, translator
from ..i18n.width import fill, wrap
from ..nn.attention import QK_NORMS
from ._options import positive_int, seed

_ = translator("cli")
said = translator("explain")  # the derivations' own words: the computations' titles and descriptions

DESCRIPTION = N_("""\
Step through one layer's backward (a norm's, an activation's such as ReLU's or
GELU's, a loss's such as cross-entropy's, softmax's, Linear's, Embedding's,
dropout's or self-attention's), from the loss back to x, one node at a
time: the forward as a tape of elementary nodes with their values, then each
node's local derivative and the gradient it passes on, with the numbers, and
checks of every staged gradient against the layer's compact backward and a
numerical gradient. With --step, one backward node at a time, paced by Enter;
with --summary, the nodes and their rules without values; with --graph, draw the
tape instead; with --format md or tex, the derivation for lecture notes
(Markdown with LaTeX math, or a LaTeX fragment with one align* per backward
node; needs amsmath).""")

EPILOG = N_("""\
examples:
  normcore explain layernorm --shape 2x4
  normcore explain batchnorm --shape 4x3 --graph batchnorm_graph.png
  normcore explain softmax --shape 4x4 --causal --no-latex
  normcore explain layernorm --step      (Enter: next node, b: back, q: quit)
  normcore explain batchnorm --summary
  normcore explain layernorm --format md > layernorm.md
  normcore explain rmsnorm --format tex > rmsnorm.tex
  normcore explain layernorm --graph layernorm_graph.svg
  normcore explain groupnorm --shape 2x6x2 --groups 3
  normcore explain cross_entropy --shape 4x3
  normcore explain dropout --p 0.25
  normcore explain attention --shape 2x3x4 --heads 2 --causal
  normcore explain residual --position post --shape 2x3x4
  normcore explain residual --position reordered
  normcore explain residual --layer-index 4      (LayerNorm Scaling)
  normcore explain qk_norm --shape 2x3x4 --qk-norm layernorm
  normcore explain sync_batchnorm --shape 5x2 --ranks 3
  normcore explain batch_renorm --shape 4x3 --graph batch_renorm.png""")

FORMATS = {"md": export_markdown, "tex": render_latex}
GRAPH_SUFFIXES = (".png", ".svg")


# The step-through prints every node's values and checks each element's gradient by nudging it
# and replaying the tape: work that grows as the square of the input's size (16x16, 256
# values, takes about a second; 200x300 would take hours), and arrays of over 60 values print
# summarised anyway. A larger shape is refused before any work is done.
MAX_VALUES = 256
# From this many values on, the checks take seconds (attention at 256 values, a few seconds on
# an idle machine): explain says so on stderr before it starts, rather than wait in silence.
NOTICE_VALUES = 96


def parse_shape(text):
    """'2x4' -> (2, 4); argparse reports anything else, or a shape of over ``MAX_VALUES``
    values, as a usage error."""
    try:
        shape = tuple(int(n) for n in text.lower().split("x"))
    except ValueError:
        shape = ()
    if not shape or min(shape) < 1:
        raise argparse.ArgumentTypeError(
            _("expected a shape: positive integers joined by x, such as 2x4 or 2x3x4, got "
              "{text!r}").format(text=text))
    size = math.prod(shape)
    if size > MAX_VALUES:
        raise argparse.ArgumentTypeError(
            _("{text} has {size} values; explain prints every value and checks each one "
              "numerically, so it takes at most {most} values (e.g. 16x16, 4x8x8 or "
              "4x4x4x4): try a smaller shape").format(text=text, size=size, most=MAX_VALUES))
    return shape


def kind_name(text):
    """The step-through named ``text``, in any case ("LayerNorm", "log-softmax"); argparse
    reports an unknown name, with the names there are, as a usage error."""
    try:
        return find(text).name
    except ValueError as err:
        raise argparse.ArgumentTypeError(str(err)) from None


def probability(text):
    """Dropout's p: a number with 0 <= p < 1 (p = 1 would drop every element)."""
    try:
        value = float(text)
    except ValueError:
        value = float("nan")
    if not 0.0 <= value < 1.0:
        raise argparse.ArgumentTypeError(
            _("expected a number with 0 <= p < 1 (p = 1 drops every element), got {text!r}").format(text=text))
    return value


# the options that only some computations take, with what they mean there
HELP_POSITION = N_("residual only: where the LayerNorm sits, as in TransformerBlock: pre "
                   "(default; y = x + f(LN(x))), post (y = LN(x + f(x))), deepnorm (y = "
                   "LN(alpha * x + f(x))), peri (y = x + LN(f(LN(x)))), reordered (y = x + "
                   "LN(f(x))) or none")
HELP_LAYER_INDEX = N_("residual with position pre only: LayerNorm Scaling at depth L >= 1, "
                      "y = x + f(LN(x) / sqrt(L))")
HELP_GROUPS = N_("groupnorm only: the number of groups G, which must divide the C channels "
                 "(default 2 when C is even and a group keeps 3 values or more, else 1)")
HELP_P = N_("dropout only: the probability of dropping an element, 0 <= p < 1 (default {p})")


def computations(width=80):
    """The lines that list every computation of the registry with what it computes."""
    lines = [_("computations (NAME, in any case):")]
    for kind in KINDS.values():
        lines += wrap(said(kind.description), width, indent=f"  {kind.name:<16}", subsequent_indent=" " * 18)
    return lines


def add_arguments(parser):
    parser.description = _(DESCRIPTION)
    parser.epilog = "\n\n".join([_(EPILOG), "\n".join(computations())])
    parser.add_argument("norm", type=kind_name, metavar="NAME",
                        help=_("which computation to step through, in any case (listed below)"))
    parser.add_argument("--shape", type=parse_shape, default=(3, 4), metavar="AxB",
                        help=_("input shape, e.g. 2x4 (default 3x4), at most {most} values. BatchNorm "
                               "and GroupNorm take (N, C), (N, C, L) or (N, C, H, W), InstanceNorm "
                               "(C, L), (N, C, L) or (N, C, H, W), cross_entropy (N, C) logits; "
                               "dropout works element by element, the others over the last "
                               "axis").format(most=MAX_VALUES))
    parser.add_argument("--seed", type=seed, default=0,
                        help=_("seed of x, gamma, beta, dy, dropout's mask and cross_entropy's "
                               "targets (default %(default)s)"))
    parser.add_argument("--causal", action="store_true",
                        help=_("softmax and attention: mask the scores above the diagonal with -inf, "
                               "as causal attention does (softmax needs a square shape such as 4x4)"))
    parser.add_argument("--heads", type=positive_int, default=None, metavar="H",
                        help=_("attention only: the number of heads (default 1), which must divide "
                               "D of its shape (T, D) or (B, T, D), e.g. explain attention --shape "
                               "2x3x4 --heads 2"))
    parser.add_argument("--position", choices=list(POSITIONS), metavar="POS", help=_(HELP_POSITION))
    parser.add_argument("--layer-index", type=positive_int, metavar="L", help=_(HELP_LAYER_INDEX))
    parser.add_argument("--groups", type=positive_int, metavar="G", help=_(HELP_GROUPS))
    parser.add_argument("--p", type=probability, metavar="P", help=_(HELP_P).format(p=DROPOUT_P))
    parser.add_argument("--qk-norm", choices=QK_NORMS, metavar="NORM",
                        help=_("qk_norm only: the norm of q and k, rmsnorm (default) or layernorm; "
                               "--shape is q's, (T, D), (H, T, D) or (B, H, T, D)"))
    parser.add_argument("--ranks", type=positive_int, metavar="R",
                        help=_("sync_batchnorm only: the simulated ranks (default 2); --shape is the "
                               "whole batch, its rows split among them"))
    parser.add_argument("--no-latex", action="store_true", help=_("leave out the LaTeX lines"))
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument("--step", action="store_true",
                      help=_("paced for a classroom: the backward one node at a time, waiting "
                             "for a line between nodes (Enter: next, b: back, q: quit); "
                             "without input (stdin closed) it runs to the end"))
    mode.add_argument("--summary", action="store_true",
                      help=_("only the nodes and their rules (formula, local derivative, rule), "
                             "no values, and each check's verdict on one line"))
    mode.add_argument("--graph", metavar="FILE.png",
                      help=_("draw the computation graph (the tape's nodes and edges, each route "
                             "from x to x_hat in its own colour and line style) into FILE.png, "
                             "or FILE.svg, instead of printing the step-through"))
    mode.add_argument("--format", choices=["text", *FORMATS], default="text", metavar="FMT",
                      help=_("text, md or tex. text (default): the step-through for a terminal; "
                             "md: Markdown with LaTeX math; tex: a LaTeX fragment (amsmath's "
                             "align*), for lecture notes, e.g. --format tex > layernorm.tex"))


def _error(message):
    print(fill(_("normcore explain: error: {message}").format(message=message), 80,
               subsequent_indent="  "), file=sys.stderr)


def _option_error(args):
    """The message for --groups that does not divide the channels of --shape, or None (an option
    given to a computation it does not fit is step_through's to refuse: the registry says which
    computations take it)."""
    if args.groups is not None and len(args.shape) > 1 and args.shape[1] % args.groups:
        return _("argument --groups: G = {g} must divide the C = {c} channels of --shape {shape}").format(
            g=args.groups, c=args.shape[1], shape="x".join(map(str, args.shape)))
    return None


def run(args):
    message = _option_error(args)
    if message:
        _error(message)
        return 2
    if math.prod(args.shape) >= NOTICE_VALUES:
        print(fill(_("normcore explain: checking the gradient of every node of the {norm} tape "
                     "numerically, value by value ({size} input values): this takes a few "
                     "seconds").format(norm=args.norm, size=math.prod(args.shape)), 80),
              file=sys.stderr, flush=True)
    try:
        st = step_through(args.norm, shape=args.shape, seed=args.seed, causal=args.causal,
                          position=args.position, groups=args.groups, p=args.p, heads=args.heads,
                          qk_norm=args.qk_norm, ranks=args.ranks, layer_index=args.layer_index)
    except ValueError as err:  # the shape does not suit the norm, or an option does not apply
        given = [("--causal", "causal", args.causal)] + [
            ("--" + name.replace("_", "-"), name, getattr(args, name, None) is not None)
            for name in options() if name != "causal"]  # those explain has (not alpha, not target)
        option = next((flag for flag, word, used in given if used and str(err).startswith(word)), None)
        option = option or next((flag for flag, word, used in given if used and word in str(err)), "--shape")
        _error(_("argument {option}: {message}").format(
            option=option, message=str(err).replace("causal=True needs", "needs")))
        return 2
    if args.graph:
        if not args.graph.lower().endswith(GRAPH_SUFFIXES):
            _error(_("argument {option}: {message}").format(option="--graph", message=_(
                "expected a file name ending in .png or .svg, got {name!r}").format(name=args.graph)))
            return 2
        graph = st.graph()
        try:
            graph.save(args.graph)
        except (OSError, ValueError) as err:
            _error(_("cannot write {name}: {reason}").format(name=args.graph, reason=err))
            return 2
        print(_("wrote {name}").format(name=args.graph))
        if graph.note:  # Chinese asked for, but no font to draw it: the picture's words are English
            print(fill(graph.note, 80))
        print(fill(_("{title}'s computation graph: {nodes} nodes, {edges} edges; the routes from "
                     "{start} to {target}:").format(title=st.title, nodes=len(graph.nodes),
                                                   edges=len(graph.edges), start=graph.nodes[0],
                                                   target=graph.target), 80))
        for label in graph.captions:  # in the language in use, whatever the picture's words
            print(fill(label, 80, indent="  ", subsequent_indent="    "))
        return 0 if st.passed else 1
    if args.summary:
        print(render_summary(st, width=80))
    elif args.format in FORMATS:
        print(FORMATS[args.format](st))
    elif args.step:
        step(st, latex=not args.no_latex)
    else:
        print(st.text(width=80, latex=not args.no_latex))
    return 0 if st.passed else 1


def step(st, latex=True, width=80):
    """The header, then the backward one node at a time, reading a line of stdin between nodes:
    an empty line goes on, b goes back one node, q quits. At the end of stdin (a script, a
    pipe) the rest runs without waiting; after the last node come the checks."""
    print("\n".join(header(st, width) + backward_intro(st, width)))
    nodes, i, waiting = backward_order(st), 0, True
    while i < len(nodes):
        print("\n".join(node_lines(st, nodes[i], width, latex)))
        if waiting:
            print(_("[node {i}/{n}] Enter: next, b: back, q: quit ").format(i=i + 1, n=len(nodes)),
                  end="", flush=True)
            answer = sys.stdin.readline()
            if not answer:  # stdin is closed: no one to wait for
                print()
                waiting = False
            elif answer.strip().lower() == "q":
                return
            elif answer.strip().lower() == "b":
                i = max(0, i - 1)
                continue
        i += 1
    print()
    print(st.text(width=width, latex=latex, parts=("checks",)))
