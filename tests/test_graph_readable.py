"""``normcore explain --graph``: the picture's text is readable at the size the PNG is shown."""

import itertools

import pytest

from normcore.derivations import KINDS, step_through


@pytest.mark.parametrize("kind", list(KINDS))
def test_graph_text_is_large_for_the_picture_and_the_boxes_do_not_overlap(kind):
    fig = step_through(kind, shape=(3, 4)).graph().figure()
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    renderer = FigureCanvasAgg(fig).get_renderer()
    fig.draw(renderer)  # lays out the figure, as saving it does
    width = fig.get_size_inches()[0]
    ax = fig.axes[0]
    nodes = [t for t in ax.texts if t.get_bbox_patch() is not None]
    assert nodes
    # a label's height against the picture's width: at least 1% (a graph scaled to fit a page of
    # text shows its labels about as large as the text around it)
    assert all(t.get_fontsize() / 72 / width >= 0.0095 for t in nodes), (width, nodes[0].get_fontsize())
    assert ax.title.get_fontsize() > nodes[0].get_fontsize()
    assert fig.legends[0].get_texts()[0].get_fontsize() >= nodes[0].get_fontsize()
    boxes = [t.get_window_extent(renderer).expanded(1.1, 1.1) for t in nodes]  # the text and a margin
    for a, b in itertools.combinations(boxes, 2):
        assert not a.overlaps(b)


# --- the layout of every kind, every option and every rank, without drawing -----------------
def _cases():
    """(kind, options): every kind at its default shape and at its highest rank, and each
    option's values (norm positions, LayerNorm Scaling, heads, masks, norms, ranks, groups)."""
    from normcore.derivations.blocks import POSITIONS
    from normcore.nn.attention import QK_NORMS

    ranked = (2, 3, 2, 2)
    cases = [(kind, {}) for kind in KINDS]
    cases += [(kind, {"shape": ranked[:max(spec.ranks)]}) for kind, spec in KINDS.items()]
    cases += [("residual", {"position": p, "shape": (2, 3, 4)}) for p in POSITIONS]
    cases += [("residual", {"layer_index": 4, "shape": (2, 3, 4)})]  # LayerNorm Scaling's extra node
    cases += [("attention", {"shape": (2, 3, 4), "heads": h, "causal": c}) for h in (2, 4) for c in (False, True)]
    cases += [("qk_norm", {"shape": (2, 3, 4), "qk_norm": n}) for n in QK_NORMS]
    cases += [("sync_batchnorm", {"shape": (8, 2), "ranks": r}) for r in (3, 8)]
    cases += [("softmax", {"shape": (4, 4), "causal": True}), ("groupnorm", {"shape": (2, 6, 2), "groups": 3}),
              ("dropout", {"p": 0.25})]
    return cases


def _case_id(case):
    kind, options = case
    return kind + "".join(f"-{k}={'x'.join(map(str, v)) if k == 'shape' else v}" for k, v in options.items())


@pytest.mark.parametrize("case", _cases(), ids=_case_id)
def test_the_layout_is_readable_without_breaking_a_word(case):
    """The picture fits READABLE_WIDTH at the labels' full size (a long tape takes several
    bands of columns instead), no label line breaks inside a word, no two boxes share a place,
    and no box is taller than a row holds."""
    from normcore.derivations.graph import READABLE_WIDTH, node_labels

    kind, options = case
    st = step_through(kind, **options)
    graph = st.graph()
    width, height = graph.size()
    assert width <= READABLE_WIDTH + 1e-9, (width, graph.positions)
    slots = list(graph.positions.values())
    assert len(slots) == len(set(slots))
    whole = node_labels(st.tape.nodes, st.inputs)  # the labels before any wrapping
    for name, label in graph.labels.items():
        assert label.split() == whole[name].split(), (name, label)  # broken between words only
        assert len(label.split("\n")) <= 6, label
    rows = [r for _c, r in slots]
    assert height / (max(max(rows), 1) - min(min(rows), -1) + 1.2) >= 6 * 13 * 1.3 / 72  # six lines a row


def test_the_words_check_sees_a_word_broken_across_lines():
    assert "parame\nter".split() != "parameter".split()
    assert "1 /\nsqrt(v)".split() == "1 / sqrt(v)".split()
