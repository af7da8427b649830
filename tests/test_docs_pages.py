"""The site's hand-written and generated pages, checked on their Markdown (no Sphinx needed):
the practice catalog lists the exercises in `normcore practice list`'s order, in a table narrow
enough for the page, with the catalog's emphasis rendered; code blocks fit without a scrollbar."""

import re
from pathlib import Path

from normcore import cli
from normcore.docs import generate

PAGES = Path(generate.__file__).resolve().parent / "pages"
CODE_WIDTH = 70  # characters of a code block the site's content column shows without scrolling


def exercise_rows():
    text = generate.practice_catalog()
    table = text.split("## The exercises", 1)[1].split("\n## ", 1)[0]
    return [line for line in table.splitlines() if line.startswith("| ")]


def test_the_catalog_lists_the_exercises_in_the_order_practice_list_shows(capsys):
    assert cli.main(["practice", "list"]) == 0
    listed = re.findall(r"^\s+\d+\. (\w+)", capsys.readouterr().out, flags=re.M)
    documented = [re.search(r"`(\w+)`", row).group(1) for row in exercise_rows()[1:]]
    assert len(listed) >= 15 and documented == listed


def test_the_exercise_table_has_no_column_the_task_repeats():
    """The task begins with the class to write: a class column would only push the task off
    the page."""
    head, *rows = exercise_rows()
    assert [c.strip() for c in head.strip("|").split("|")] == ["", "exercise", "level", "task"]
    assert all(row.count(" | ") == 3 for row in rows)


def test_a_word_in_asterisks_is_emphasis_and_other_asterisks_stay_literal():
    text = generate.practice_catalog()
    assert "the weight of the *new* batch" in text
    assert "\\*new\\*" not in text
    assert "input (\\*, \\*normalized\\_shape)" in text  # a shape, not emphasis


def test_code_blocks_of_the_pages_fit_the_content_column():
    for page in sorted(PAGES.glob("*.md")):
        blocks = re.findall(r"^```[^\n]*\n(.*?)^```", page.read_text(encoding="utf-8"), flags=re.M | re.S)
        wide = [line for block in blocks for line in block.splitlines() if len(line) > CODE_WIDTH]
        assert not wide, f"{page.name}: {wide}"
