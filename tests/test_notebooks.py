"""Every classroom notebook runs top to bottom, without an error, in a fresh kernel of this
interpreter, from a clone (the repository on PYTHONPATH, nothing installed); and the committed
notebooks are the ones their sources in notebooks/src/ build, saved with their outputs."""

import base64
import importlib.util
import re
import sys
from pathlib import Path

import nbformat
import pytest

ROOT = Path(__file__).resolve().parents[1]
_spec = importlib.util.spec_from_file_location("notebook_build", ROOT / "notebooks" / "build.py")
build = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(build)


def _code(topic):
    nb = nbformat.read(ROOT / "notebooks" / f"{topic}.ipynb", as_version=4)
    return [cell.source for cell in nb.cells if cell.cell_type == "code"]


# An English notebook whose Chinese edition runs the same code is run once, in Chinese: the run
# differs only in the words printed (their fields are the English ones': test_i18n.py), and the
# Chinese run is the one that also goes through normcore's Chinese output.
RUN_IN_CHINESE = [t for t in build.TOPICS if f"{t}_zh" in build.TOPICS and _code(t) == _code(f"{t}_zh")]


@pytest.mark.slow  # executes the notebook in a fresh kernel
@pytest.mark.parametrize("topic", [t for t in build.TOPICS if t not in RUN_IN_CHINESE])
def test_notebook_runs_top_to_bottom(topic):
    nb = nbformat.read(ROOT / "notebooks" / f"{topic}.ipynb", as_version=4)
    nb.cells.append(nbformat.v4.new_code_cell("import sys, normcore\nprint(sys.executable)\nprint(normcore.__file__)"))
    build.execute(nb)  # raises nbclient's CellExecutionError on the first failing cell
    # the kernel may send the two lines as one stream output or as two (it does under load)
    printed = "".join(o.get("text", "") for o in nb.cells[-1].outputs)
    executable, package = printed.split()
    assert executable == sys.executable  # the kernel is this interpreter
    assert Path(package).resolve().is_relative_to(ROOT)  # and imports this clone's normcore


def test_the_chinese_editions_run_the_english_code():
    """What lets RUN_IN_CHINESE skip the English run: the same code cells, cell for cell (a
    Chinese edition that ran other code would have its English twin run too)."""
    twins = [t for t in build.TOPICS if f"{t}_zh" in build.TOPICS]
    assert len(twins) >= 6 and RUN_IN_CHINESE == twins


def test_committed_notebooks_match_their_sources(capsys):
    assert build.main(["--check"]) == 0, capsys.readouterr().out
    out = capsys.readouterr().out  # one line saying so, not silence
    assert out == f"{len(build.TOPICS)} notebooks checked against notebooks/src/: all current\n"


@pytest.mark.parametrize("topic", build.TOPICS)
def test_committed_notebooks_carry_their_outputs(topic):
    nb = nbformat.read(ROOT / "notebooks" / f"{topic}.ipynb", as_version=4)
    code_cells = [c for c in nb.cells if c.cell_type == "code"]
    assert code_cells and all(c.execution_count is not None for c in code_cells)
    assert not [o for c in code_cells for o in c.outputs if o.output_type == "error"]
    assert sum(bool(c.outputs) for c in code_cells) >= len(code_cells) // 2


# What a backslash sequence becomes in a source that is not a raw string: \t of \text, \b of
# \beta, \f of \frac, \v of \varepsilon, \a of \alpha, \r of \rho. No cell has any of them.
CONTROL = re.compile(r"[\x00-\x09\x0b-\x1f]")  # all but the newline


@pytest.mark.parametrize("topic", build.TOPICS)
def test_no_cell_carries_a_control_character(topic):
    nb = nbformat.read(ROOT / "notebooks" / f"{topic}.ipynb", as_version=4)
    found = [(i, CONTROL.search(cell.source).group()) for i, cell in enumerate(nb.cells)
             if CONTROL.search(cell.source)]
    assert not found, f"cells with a control character (a backslash lost in a non-raw string): {found}"


@pytest.mark.parametrize("topic", build.TOPICS)
def test_notebooks_are_valid_and_carry_their_images(topic):
    """A notebook copied elsewhere or exported to HTML still shows its figures: no image is
    referenced by a path, each is an attachment of its cell, a PNG."""
    nb = nbformat.read(ROOT / "notebooks" / f"{topic}.ipynb", as_version=4)
    nbformat.validate(nb)
    for cell in nb.cells:
        if cell.cell_type == "markdown":
            targets = re.findall(r"!\[[^\]]*\]\(([^)\s]+)", cell.source)
            targets += re.findall(r"<img[^>]*\bsrc=[\"']?([^\"'\s>]+)", cell.source)
            for target in targets:
                assert target.startswith("attachment:"), f"{topic}: image by path only: {target}"
                data = cell.attachments[target.removeprefix("attachment:")]["image/png"]
                assert base64.b64decode(data).startswith(b"\x89PNG")
            assert "../figures/" not in cell.source, f"{topic}: a figure referenced by path"


def test_images_are_embedded_and_questions_numbered(tmp_path, monkeypatch):
    """The builder turns an image path into an attachment and numbers the inline questions,
    each with its answer folded away."""
    src = tmp_path / "src"
    src.mkdir()
    (src / "demo.py").write_text(
        "from build import md, question\n"
        "CELLS = [md('![speed](../figures/speed.png)'), question('Why?', 'Because.'),\n"
        "         question('And $x$?', '$0$.')]\n")
    monkeypatch.setattr(build, "SOURCES", src)
    image, first, second = build.cells("demo")
    assert image.source == "![speed](attachment:speed.png)"
    assert base64.b64decode(image.attachments["speed.png"]["image/png"]) == (
        ROOT / "figures" / "speed.png").read_bytes()
    assert first.source.startswith("**Inline question 1.** Why?")
    assert second.source.startswith("**Inline question 2.** And $x$?")
    assert "<details>\n<summary>Answer</summary>\n\n$0$.\n\n</details>" in second.source


@pytest.mark.parametrize("topic", build.TOPICS)
def test_every_notebook_asks_inline_questions(topic):
    nb = nbformat.read(ROOT / "notebooks" / f"{topic}.ipynb", as_version=4)
    label, answer = build.LABELS[build.source_and_language(topic)[1]]  # in the notebook's language
    asked = [c.source for c in nb.cells if c.cell_type == "markdown" and f"**{label}" in c.source]
    assert 2 <= len(asked) <= 3  # the README says two or three
    assert all("<details>" in q and f"<summary>{answer}</summary>" in q for q in asked)
