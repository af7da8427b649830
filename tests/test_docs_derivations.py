"""The docs' derivation pages: one per step-through, generated from its tape, linked from the API
entry of each class whose backward it derives."""

import pathlib
import re

import pytest

from normcore.derivations import KINDS, step_through
from normcore.derivations.graph import Graph
from normcore.derivations.blocks import POSITIONS
from normcore.docs import generate
from test_derivations import run_together

PAGES = list(KINDS) + [f"residual_{p}" for p in POSITIONS if p != "pre"]  # Pre-Norm is residual's own


def _placeholder(graph, path):
    """Stands in for Graph.save: a file naming the graph, instead of drawing it."""
    pathlib.Path(path).write_text(f"graph of {graph.title}", encoding="utf-8")


@pytest.fixture(scope="module")
def pages(tmp_path_factory):
    """The pages as the site build generates them, each graph written as a placeholder: drawing
    all of them took most of this fixture's time. Each kind's drawing is checked in
    test_graph_readable.py, each page's SVG in the built site by tests/test_docs.py."""
    folder = tmp_path_factory.mktemp("derivations")
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(Graph, "save", _placeholder)
        return folder, generate.derivation_pages(folder)


def test_a_page_and_a_graph_per_kind_and_an_index_linking_them(pages):
    folder, written = pages
    assert set(written) == {f"{page}.md" for page in PAGES} | {"index.md"}
    for page in PAGES:
        assert f"]({page}.md)" in written["index.md"]
        assert (folder / f"{page}.svg").read_text(encoding="utf-8").startswith("graph of ")  # one graph per page
        assert f"]({page}.svg)" in written[f"{page}.md"]
    toctree = written["index.md"].split("```{toctree}")[1]
    assert sorted(line for line in toctree.splitlines()[3:] if line and line != "```") == sorted(PAGES)


@pytest.mark.parametrize("page", PAGES)
def test_each_page_is_its_tape(pages, page):
    """Every node of the tape appears, in the table and in the backward; the math is balanced;
    the numbers are those step_through prints for the page's input (and norm position)."""
    _, written = pages
    text = written[f"{page}.md"]
    kind, _, position = page.partition("_") if page.startswith("residual_") else (page, "", "")
    shape = generate.DERIVATION_SHAPES.get(kind, (2, 3))
    st = step_through(kind, shape=shape, seed=0, **({"position": position} if position else {}))
    for node in st.tape:
        assert f"`{node.name}`" in text
    assert text.count("$$") % 2 == 0 and st.text(width=100, latex=False) in text
    assert not run_together(text), run_together(text)  # the header's lines stay apart
    assert "all pass" in written["index.md"].split(f"]({page}.md)")[1].splitlines()[0]
    if position:
        assert f"--position {position}" in text


def test_api_entries_link_their_derivation():
    api = "\n".join(generate.api_pages().values())
    linked = set(re.findall(r":doc:`/derivations/(\w+)`", api))
    expected = {kind for kind in generate.DERIVATION_OF.values() if kind in KINDS}
    assert linked == expected
    entry = api.split(".. autoclass:: normcore.LayerNorm")[1].split(".. auto")[0]
    assert ":doc:`/derivations/layernorm`" in entry


def test_every_kind_is_linked_from_some_class():
    """A new step-through gets an API link too: DERIVATION_OF names a class for each kind, or
    the kind derives a computation with no class of its own (GELU's tanh form is an option of
    GELU, QK-norm an option of the attention classes, the z-loss of CrossEntropyLoss)."""
    classless = {"gelu_tanh", "qk_norm", "z_loss"}
    assert set(KINDS) - set(generate.DERIVATION_OF.values()) <= classless
