"""One way to install PyTorch, said everywhere: the README's line for the CPU build.

A plain ``pip install torch`` (or the ``torch`` extra alone) may fetch the CUDA build, several
GB, which normcore never uses; the README says so and gives the CPU line. Every message that
asks for PyTorch ends with ``normcore._install.torch_hint()``, which carries that line; no other
install line for torch may appear in normcore, its notebooks' sources or the tests' skip reasons.
"""

import re
from pathlib import Path

import pytest

from normcore._install import TORCH_CPU, torch_hint
from normcore.i18n import speaking
from normcore.i18n.width import display_width

ROOT = Path(__file__).resolve().parents[1]
INSTALL_LINE = re.compile(r"pip install[^\n]*torch", re.IGNORECASE)  # pip install ... torch ...


@pytest.mark.parametrize("page", ["README.md", "CONTRIBUTING.md"])
def test_the_hint_is_the_cpu_line_of_the_readme_and_contributing(page):
    text = (ROOT / page).read_text()
    lines = set(re.findall(r"pip install torch --index-url \S+?(?=`|\s|$)", text))
    assert lines == {TORCH_CPU}


def searched_files():
    """Where a user reads an install line: the package's code and pages, the notebooks' sources,
    the tests (their skip reasons)."""
    for folder, pattern in (("normcore", "*.py"), ("normcore/docs/pages", "*.md"),
                            ("notebooks/src", "*.py"), ("tests", "*.py")):
        yield from sorted((ROOT / folder).rglob(pattern))


def test_no_other_torch_install_line():
    own = {ROOT / "normcore" / "_install.py", Path(__file__).resolve()}
    found = [f"{path.relative_to(ROOT)}:{number}: {line.strip()}"
             for path in searched_files() if path not in own
             for number, line in enumerate(path.read_text().splitlines(), 1)
             if INSTALL_LINE.search(line) and TORCH_CPU not in line]
    assert not found, "install PyTorch through normcore._install.torch_hint():\n" + "\n".join(found)


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_hint_fits_80_columns_indented(lang):
    with speaking(lang):
        hint = torch_hint("    ")
    assert hint.splitlines()[-1] == f"        {TORCH_CPU}"
    assert all(display_width(line) <= 80 for line in hint.splitlines())
