"""A step-through's computation graph as a picture: the tape's nodes and edges, drawn with
matplotlib, with the paths from the input to the normalised value told apart.

    st = step_through("layernorm", shape=(3, 4))
    g = st.graph()          # the layout: g.nodes, g.edges, g.paths, g.positions
    g.save("layernorm.png") # the picture (g also shows itself in a notebook)

The input x reaches x_hat by more than one route, and the backward adds up what comes back along
each. In LayerNorm and BatchNorm there are three: straight through the centring (x -> xc ->
x_hat), through the mean (x -> mean -> xc) and through the variance (xc -> xc2 -> var -> var_eps
-> rstd -> x_hat). The picture gives each route a colour of the Okabe-Ito palette and a line
style of its own, so it reads in grey print and without telling red from green.

How the routes are found, for any tape: the *direct* route is the shortest path from the input
(the first node) to the *target* (``x_hat``, or the output if there is none); every other node
on a path from the input to the target belongs to a *branch*, a group of such nodes joined by
edges, named after the statistic it computes (its first reduction: mean, variance, max...).

In Chinese (``normcore --lang zh``) the picture's words are Chinese when matplotlib has a font
with Chinese glyphs (``normcore.i18n.figures``: Noto Sans CJK, Source Han Sans, WenQuanYi...); without
one they stay English, so that no character is drawn as an empty box, and ``Graph.note`` says
why and which font to install. Names, formulas and shapes are the same in both.
"""

import io
import textwrap
from dataclasses import dataclass, field

from ..i18n import N_, language, translator
from ..i18n.figures import figure_language, font_settings
from ..i18n.width import display_width, fill, wrap
from .tape import english

_ = translator("explain")

# The Okabe-Ito palette (Okabe & Ito 2008), safe for the common colour-vision deficiencies; each
# route also has its own line style.
ROUTE_STYLES = [("#0072B2", "-"), ("#E69F00", "--"), ("#009E73", "-.")]  # direct, above, below
OTHER_STYLE = ("#666666", "-")  # parameters and the steps after the target
HELD_STYLE = ("#D55E00", ":")  # Okabe-Ito's vermillion, dotted: an edge into a stop-gradient node
@dataclass(repr=False)
class Graph:
    """The layout of a tape's graph: which node sits where and which route each edge is on."""

    title: str
    nodes: list  # node names, in the tape's (forward) order
    edges: list  # (input name, node name), in the tape's order
    labels: dict  # node name -> the text in its box
    positions: dict  # node name -> (column, row); row 0 is the direct route, +1 above, -1 below
    routes: dict = field(default_factory=dict)  # route label -> its edges, direct route first
    captions: list = field(default_factory=list)  # the route labels in the language in use, for
                                                  # a terminal (the picture's may be English)
    target: str = ""
    legend: str = ""  # the legend's title
    others: str = ""  # the legend's entry for the edges on no route (parameters, later steps)
    font: str = ""  # the font of Chinese words, "" when the words are English
    note: str = ""  # why the words are English in Chinese mode (no Chinese font), else ""
    bands: int = 1  # a long tape's columns are cut into bands, one below the other (``arrange``)
    held: list = field(default_factory=list)  # the stop-gradient nodes: dashed boxes, dotted edges in
    stopped: str = ""  # the legend's entry for an edge into one ("stop-gradient: backward 0 ...")

    def __repr__(self):
        name = self.title.split(":")[0].split("：")[0]  # the title before its colon, in either language
        return f"<Graph {name}: {len(self.nodes)} nodes, {len(self.edges)} edges>"

    def route_of(self, edge):
        """The label of the route an edge is on, or None for a parameter's edge or a later step."""
        for label, edges in self.routes.items():
            if tuple(edge) in edges:
                return label
        return None

    def size(self):
        """The picture's (width, height) in inches: a column per step, as wide as the widest
        label needs (a tape laid out in bands: the whole READABLE_WIDTH, room its columns were
        cut to fit), and about 2.3 inches per row."""
        cols = max(c for c, _ in self.positions.values()) + 1
        rows = [r for _, r in self.positions.values()]
        low, high = min(min(rows), -1), max(max(rows), 1)  # three rows, or a lane's more
        width = READABLE_WIDTH if self.bands > 1 else max(9.0, _column_width(self, cols) * cols)
        return width, 7.5 * (high - low + 1.2) / 3.2

    def figure(self):
        """The picture, as a matplotlib Figure (not attached to pyplot)."""
        return _draw(self)

    def save(self, path):
        """Write the picture: SVG when ``path`` ends in .svg, PNG when it ends in .png (its text
        chunks list the nodes and the edges drawn); any other name is refused."""
        name = str(path).lower()
        if not name.endswith((".png", ".svg")):
            raise ValueError(_("the graph is written as .png or .svg, got {path!r}").format(path=str(path)))
        fig = self.figure()
        if name.endswith(".png"):
            fig.savefig(path, metadata={
                "Title": self.title,
                "Description": "nodes: " + ", ".join(self.nodes) + "; edges: "
                               + ", ".join(f"{a}->{b}" for a, b in self.edges)})
        else:
            fig.savefig(path, format="svg", metadata={"Title": self.title})
        return path

    def _repr_png_(self):  # a notebook shows the picture when a Graph is a cell's last value
        buffer = io.BytesIO()
        self.figure().savefig(buffer, format="png")
        return buffer.getvalue()


def _words():
    """The picture's font and its translator (``normcore.i18n.figures.figure_language``): Chinese
    when the language in use is and matplotlib has a font for it, else no font and English."""
    return figure_language(_)


def computation_graph(st):
    """The ``Graph`` of a ``StepThrough``'s tape (nodes, edges, layout and routes), its words in
    the language in use if the picture can show them (see the module's docstring)."""
    font, say = _words()
    text = str if font else english  # a sentence of the step-through (a Phrase) likewise
    note = "" if font or language() != "zh" else _(
        "no font with Chinese glyphs found for matplotlib (fc-list :lang=zh lists none), so the picture's "
        "words are in English; install one, e.g. Debian's fonts-noto-cjk")
    tape = st.tape
    nodes = list(tape)
    names = [n.name for n in nodes]
    edges = [(e.source.name, n.name) for n in nodes for e in n.edges]
    source = nodes[0]
    target = st.route_target or ("x_hat" if "x_hat" in names else tape.output.name)
    successors = {name: [b for a, b in edges if a == name] for name in names}

    # the direct route: the shortest path from the input to the target (breadth first)
    previous, frontier = {source.name: None}, [source.name]
    while target not in previous:
        step = []
        for a in frontier:
            for b in successors[a]:
                if b not in previous:
                    previous[b] = a
                    step.append(b)
        if not step:
            raise ValueError(f"expected a path from {source.name} to {target} on the tape (the output "
                             f"computed from the input), found none")
        frontier = step
    direct, name = [], target
    while name is not None:
        direct.insert(0, name)
        name = previous[name]

    # the branches: the other nodes on some path from the input to the target
    reaches_target = {target}
    for name in reversed(names):
        if any(b in reaches_target for b in successors[name]):
            reaches_target.add(name)
    inputs = {source.name, *st.inputs}  # QK-norm's k, SyncBatchNorm's other ranks: inputs too
    reached, from_source = set(inputs), {source.name}
    for a, b in edges:
        for found in (reached, from_source):
            if a in found:
                found.add(b)
    between = [n for n in names if n in reached and n in reaches_target and n not in direct]
    branches = []
    for name in between:  # join each node to the branch of a neighbour already placed
        joined = [br for br in branches if any((a, name) in edges or (name, a) in edges for a in br)]
        merged = [name] + [n for br in joined for n in br]
        branches = [br for br in branches if br not in joined] + [sorted(merged, key=names.index)]
    branches.sort(key=len)  # the longest branch (the variance's, the sum's) is drawn below

    # columns: the longest path from the input; a parameter sits just left of its first use
    column = {}
    for node in nodes:
        ins = [e.source.name for e in node.edges]
        column[node.name] = 1 + max((column[i] for i in ins if i in column), default=-1)
    for node in nodes[1:]:
        if node.is_leaf:
            column[node.name] = min(column[b] for b in successors[node.name]) - 1
    row = {name: 0 for name in names}
    for i, branch in enumerate(branches):
        for name in branch:
            row[name] = -1 if i == len(branches) - 1 else 1
    taken = {(column[n.name], row[n.name]) for n in nodes if not n.is_leaf}
    for node in nodes[1:]:  # a parameter above its first use, or below where a branch sits
        if node.is_leaf:
            row[node.name] = 1 if (column[node.name], 1) not in taken else -1
            taken.add((column[node.name], row[node.name]))
    row.update(st.lanes or {})  # a tape of parallel chains (q and k, the ranks) gives its own rows

    # each route: (its head, with the head's words to translate too), its edges as text, its edges
    found = [(lambda words: words(N_("direct")), " -> ".join(direct), [(a, b) for a, b in zip(direct, direct[1:])])]
    for branch in sorted(branches, key=lambda br: -row[br[0]]):
        inner = [(a, b) for a, b in edges if (a in branch or b in branch) and b in reaches_target
                 and not (tape[a].is_leaf and a not in inputs)]  # a parameter's edge stays grey, and
                 # one that leaves the routes (Batch Renorm's mean -> dev) too
        step = tape[next((n for n in branch if _reduces(tape[n])), branch[0])].step
        start = next((n for n in branch if n in inputs), None)  # a lane of its own: k's, not x's
        name = st.route_names.get(step, step)  # the statistic the branch computes
        if start and from_source.isdisjoint(branch):
            head = lambda words, start=start: words(N_("from {start}")).format(start=start)  # noqa: E731
        else:
            head = lambda words, name=name: words(N_("through the {step}")).format(step=words(name))  # noqa: E731
        found.append((head, ", ".join(_chain(inner)), inner))
    routes = dict(zip(route_labels(found, say), (edges for _h, _t, edges in found)))

    x = source.value.shape
    what = text(st.what) or {"softmax": say(N_("softmax over {over}")).format(over=st.over),
                             "dyt": say(N_("element by element")), "dropout": say(N_("element by element"))}.get(
        st.kind, say(N_("statistics over {over}")).format(over=st.over))
    title = say(N_("{title}: the computation graph of the tape, {x} of shape {shape}, {what}")).format(
        title=text(st.title), x=source.name, shape=_shape(x), what=what)
    labels, positions, bands = arrange(node_labels(nodes, inputs), {n: (column[n], row[n]) for n in names})

    # the legend: the routes, then the edges on none (a parameter's, the steps after the target)
    on_routes = {edge for route in routes.values() for edge in route}
    others = [(a, b) for a, b in edges if (a, b) not in on_routes and not tape[b].held]
    params = any(tape[a].is_leaf and a != source.name for a, _b in others)
    after = bool(others) and target != names[-1]
    others_label = say(N_(" and ")).join([say(N_("parameters"))] * params
                                     + [say(N_("the steps after {target}")).format(target=target)] * after)
    legend = say(N_("routes from {x} to {target} (the backward adds what each brings back)")).format(
        x=source.name, target=target)
    held = [n.name for n in nodes if n.held]
    stopped = say(N_("stop-gradient: backward 0 (held constant)")) if held else ""
    return Graph(title, names, edges, labels, positions, routes,
                 route_labels(found, _), target, legend, others_label, font or "", note, bands, held, stopped)


def route_labels(found, words):
    """The labels "head: edges" of the routes ``found`` ((head, edges as text, edges): a head is
    a function of the translator), in ``words``: the picture's (``say``) or the terminal's
    (``_``, the language in use)."""
    return [words(N_("{route}: {edges}")).format(route=head(words), edges=text) for head, text, _e in found]


def node_labels(nodes, inputs=()):
    """Each node's box: its name, its formula's right side ("input" for the first leaf and those
    named in ``inputs``, "parameter" for the other leaves, in the picture's language), its shape."""
    say = _words()[1]
    labels = {}
    for node in nodes:
        what = node.formula.split(" = ", 1)[1] if " = " in node.formula else node.formula
        kind = (say(node.step) if node.is_leaf and node.step != "input"  # a running statistic says so
                else say(N_("input")) if node is nodes[0] or node.name in inputs
                else say(N_("parameter")) if node.is_leaf else what)
        if node.held:  # a stop-gradient's box says what its backward is
            kind += "\n" + say(N_("backward: 0"))
        labels[node.name] = f"{node.name}\n{kind}\n{_shape(node.value.shape)}"
    return labels


def _reduces(node):
    return not node.is_leaf and node.value.size < node.edges[0].source.value.size


def _shape(shape):
    return "(" + ", ".join(str(s) for s in shape) + ")"


def _chain(edges):
    """'a -> b -> c' for a branch's edges (in tape order): the longest chain first, then, for a
    branch that uses a value twice (GELU's x in x + c * x**3), each edge left over."""
    left = list(edges)
    chains = []
    while left:
        chain = [left.pop(0)]
        nxt = next((e for e in left if e[0] == chain[-1][1]), None)
        while nxt is not None:
            left.remove(nxt)
            chain.append(nxt)
            nxt = next((e for e in left if e[0] == chain[-1][1]), None)
        chains.append(" -> ".join([chain[0][0]] + [b for _, b in chain]))
    return chains


# Text sizes (points), read at the PNG's own size or scaled to a page: the nodes' labels, the
# title, the legend. A column is as wide as the widest label line needs at NODE_FONT.
NODE_FONT, TITLE_FONT, LEGEND_FONT = 13, 16, 13


READABLE_WIDTH = 19.0  # inches: a wider picture, scaled to a page, shows its labels smaller than
                       # the text around it (13 pt on 19 in is 1% of the width)


def _column_width(graph, cols):
    """Inches per column: the widest line of any label (about half an em per column, a Chinese
    character taking two), plus a gap."""
    return _width_for(_widest(graph.labels), cols)


def _width_for(chars, cols):
    """At least 1.45 inches, or READABLE_WIDTH / cols for a tape of more columns (SyncBatchNorm's
    fifteen): narrower gaps rather than smaller text."""
    return max(min(1.45, READABLE_WIDTH / cols), 0.5 * chars * NODE_FONT / 72 + 0.3)


WRAP_AT = 14  # display columns: a long tape's label lines wrap between words at this width (or
               # at its longest word), so that a dozen columns fit READABLE_WIDTH


def arrange(labels, positions, least=1):
    """The labels and positions of a graph laid out to fit READABLE_WIDTH without smaller text.
    A tape whose columns fit as they are keeps them. A longer one (Peri-LN's block, attention
    with several heads) has its label lines wrapped between words, never inside one, to
    WRAP_AT columns, its longest word or ``least``, whichever is widest; if its columns still do
    not fit, they are cut into bands laid one below the other, as the lines of a text are: a
    band of columns 0 to k-1, then one of k to 2k-1 below it, an empty row between them.
    Returns the labels, the positions and the number of bands."""
    cols = int(max(c for c, _ in positions.values())) + 1
    if _width_for(_widest(labels), cols) * cols <= READABLE_WIDTH:
        return labels, positions, 1
    fit = max(least, WRAP_AT, max(display_width(word) for label in labels.values() for word in label.split()))
    labels = {name: "\n".join(part for line in label.split("\n") for part in _wrap_line(line, fit))
              for name, label in labels.items()}
    per_band = next(k for k in range(cols, 0, -1) if _width_for(_widest(labels), k) * k <= READABLE_WIDTH or k == 1)
    bands = -(-cols // per_band)
    if bands == 1:
        return labels, positions, 1
    per_band = -(-cols // bands)  # the bands as even as they can be
    band = {name: int(c // per_band) for name, (c, _r) in positions.items()}
    shift, bottom = [], None  # each band's top row one empty row below the band above it
    for b in range(bands):
        rows = [r for name, (_c, r) in positions.items() if band[name] == b] or [0]
        shift.append(0 if bottom is None else bottom - 2 - max(rows))
        bottom = min(rows) + shift[-1]
    return labels, {name: (c - per_band * band[name], r + shift[band[name]])
                    for name, (c, r) in positions.items()}, bands


def _widest(labels):
    """The display width of the widest line of any label."""
    return max(display_width(line) for label in labels.values() for line in label.split("\n"))


def _wrap_line(line, fit):
    """One line of a label in lines of at most ``fit`` columns, broken between words only (a
    word wider than ``fit`` keeps a line of its own); Chinese by display width."""
    if line.isascii():
        return textwrap.wrap(line, fit, break_on_hyphens=False, break_long_words=False) or [""]
    return wrap(line, fit)


def _draw(graph):
    from matplotlib import rc_context

    with rc_context(font_settings(graph.font or None)):  # Chinese, then the rest
        return _draw_words(graph)


def _draw_words(graph):
    from matplotlib.figure import Figure
    from matplotlib.lines import Line2D

    cols = max(c for c, _ in graph.positions.values()) + 1
    rows = [r for _, r in graph.positions.values()]
    low, high = min(min(rows), -1), max(max(rows), 1)  # three rows, or a lane's more
    fig = Figure(figsize=graph.size(), layout="constrained")
    ax = fig.subplots()
    ax.set_xlim(-0.6, cols - 0.4)
    ax.set_ylim(low - 0.6, high + 0.6)
    ax.set_axis_off()
    ax.set_title(graph.title, fontsize=TITLE_FONT, wrap=True)

    colour_of = {}  # the direct route, the branch above, the branch below: always the same style
    direct = {n for edge in next(iter(graph.routes.values())) for n in edge}
    for label, edges in graph.routes.items():
        rows = [graph.positions[n][1] for edge in edges for n in edge if n not in direct] or [0]
        colour_of[label] = ROUTE_STYLES[0 if not colour_of else 1 if max(rows) > 0 else 2]
    on_route = {}  # a node's box takes the colour of its route, the direct one first
    for label, edges in graph.routes.items():
        for name in (n for edge in edges for n in edge):
            on_route.setdefault(name, colour_of[label])
    boxes = {}
    for name in graph.nodes:
        colour = on_route.get(name, HELD_STYLE if name in graph.held else OTHER_STYLE)[0]
        boxes[name] = ax.text(*graph.positions[name], graph.labels[name], ha="center", va="center",
                              fontsize=NODE_FONT, linespacing=1.3, zorder=3,
                              bbox=dict(boxstyle="round,pad=0.4", facecolor="white", edgecolor=colour,
                                        linewidth=2.0, linestyle="--" if name in graph.held else "-"))
    for a, b in graph.edges:
        label = graph.route_of((a, b))
        colour, style = colour_of[label] if label else HELD_STYLE if b in graph.held else OTHER_STYLE
        ax.annotate("", xy=graph.positions[b], xytext=graph.positions[a], zorder=2,
                    arrowprops=dict(arrowstyle="-|>", color=colour, linestyle=style,
                                    linewidth=2.6 if label else 1.4, mutation_scale=16,
                                    patchA=boxes[a].get_bbox_patch(), patchB=boxes[b].get_bbox_patch(),
                                    shrinkA=2, shrinkB=2))
    handles = [Line2D([], [], color=c, linestyle=s, linewidth=2.6, label=fill(label, 150))
               for label, (c, s) in colour_of.items()]
    if any(graph.route_of(edge) is None and edge[1] not in graph.held for edge in graph.edges):
        handles.append(Line2D([], [], color=OTHER_STYLE[0], linestyle=OTHER_STYLE[1], linewidth=1.4,
                              label=graph.others))
    if graph.held:
        handles.append(Line2D([], [], color=HELD_STYLE[0], linestyle=HELD_STYLE[1], linewidth=1.4,
                              label=graph.stopped))
    fig.legend(handles=handles, loc="outside lower center", ncol=1, fontsize=LEGEND_FONT, frameon=False,
               handlelength=5, title=graph.legend, title_fontsize=LEGEND_FONT)
    return fig
