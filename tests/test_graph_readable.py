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
