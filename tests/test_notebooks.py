"""Every classroom notebook runs top to bottom, without an error, in a fresh kernel of this
interpreter, from a clone (the repository on PYTHONPATH, nothing installed); and the committed
notebooks are the ones their sources in notebooks/src/ build, saved with their outputs."""

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


@pytest.mark.parametrize("topic", build.TOPICS)
def test_notebook_runs_top_to_bottom(topic):
    nb = nbformat.read(ROOT / "notebooks" / f"{topic}.ipynb", as_version=4)
    nb.cells.append(nbformat.v4.new_code_cell("import sys, normcore\nprint(sys.executable)\nprint(normcore.__file__)"))
    build.execute(nb)  # raises nbclient's CellExecutionError on the first failing cell
    executable, package = nb.cells[-1].outputs[0]["text"].split()
    assert executable == sys.executable  # the kernel is this interpreter
    assert Path(package).resolve().is_relative_to(ROOT)  # and imports this clone's normcore


def test_committed_notebooks_match_their_sources(capsys):
    assert build.main(["--check"]) == 0, capsys.readouterr().out


@pytest.mark.parametrize("topic", build.TOPICS)
def test_committed_notebooks_carry_their_outputs(topic):
    nb = nbformat.read(ROOT / "notebooks" / f"{topic}.ipynb", as_version=4)
    code_cells = [c for c in nb.cells if c.cell_type == "code"]
    assert code_cells and all(c.execution_count is not None for c in code_cells)
    assert not [o for c in code_cells for o in c.outputs if o.output_type == "error"]
    assert sum(bool(c.outputs) for c in code_cells) >= len(code_cells) // 2


@pytest.mark.parametrize("topic", build.TOPICS)
def test_notebooks_are_valid_and_their_images_exist(topic):
    nb = nbformat.read(ROOT / "notebooks" / f"{topic}.ipynb", as_version=4)
    nbformat.validate(nb)
    for cell in nb.cells:
        if cell.cell_type == "markdown":
            for target in re.findall(r"!\[[^\]]*\]\(([^)\s]+)", cell.source):
                assert (ROOT / "notebooks" / target).resolve().is_file(), f"{topic}: missing image {target}"
