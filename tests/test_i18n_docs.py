"""normcore's documents in Chinese: the site's Chinese section (its glossary and practice catalog
generated, its pages linked with the English ones both ways), the Chinese notebooks (built from
the English sources, their prose Chinese, each claim pointing to the write-up's heading) and the
README's Chinese introduction."""

import importlib.util
import os
import re
import tomllib
from pathlib import Path

import nbformat
import pytest

from normcore import i18n
from normcore.docs import generate
from normcore.i18n.glossary import terms
from normcore.i18n.width import display_width

ROOT = Path(__file__).resolve().parents[1]
PAGES = ROOT / "normcore" / "docs" / "pages"
ZH_PAGES = ("index", "reading_order", "practice")      # written by hand
ZH_GENERATED = ("glossary", "practice_catalog", "questions", "references")  # written at build time
ZH_NOTEBOOKS = ("interview_practice_zh", "claims_zh")


def _load(name, path):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


build = _load("notebook_build_i18n", ROOT / "notebooks" / "build.py")
CJK = re.compile(r"[\u4e00-\u9fff]")


# --- the site's Chinese section ---------------------------------------------------------------
def _rows(page):
    return [[c.strip() for c in line.strip().strip("|").split("|")]
            for line in page.splitlines() if line.startswith("| ")]


def test_the_glossary_page_lists_every_term_of_the_glossary():
    rows = _rows(generate.glossary_page())
    assert rows[0] == ["English", "中文", "d2l", "说明"]
    unescape = lambda cell: re.sub(r"\\(.)", r"\1", cell)  # noqa: E731
    listed = [[unescape(c) for c in row] for row in rows[1:]]
    assert len(listed) == len(terms())
    for row, term in zip(listed, terms()):
        assert row == [term.en, term.zh, term.d2l, " ".join(term.note.split())], term.en
    assert any(t.d2l for t in terms()), "no term says where d2l differs"


def test_the_chinese_practice_catalog_is_the_catalog_translated():
    from normcore.practice import CATALOG, EXERCISES

    zh = generate.practice_catalog("zh")
    assert i18n.language() == "en", "the page leaves the language as it found it"
    assert zh.startswith("# 练习题目录") and zh != generate.practice_catalog("en")
    for name in EXERCISES:
        assert f"`{name}`" in zh
    _ = i18n.translator("catalog")
    with i18n.speaking("zh"):
        titles = [generate._cell(_(m.title)) for m in CATALOG]
    for mistake, title in zip(CATALOG, titles):
        assert f"### `{mistake.id}`" in zh and f"**{title}**" in zh, mistake.id
    # a notebook the catalog points to is one folder up from the Chinese section
    assert "](../notebooks/" in zh and "](notebooks/" not in zh


def test_speaking_a_language_for_a_while_gives_back_the_choice_it_found(monkeypatch):
    monkeypatch.setenv("NORMCORE_LANG", "en")
    i18n.set_language(None)                      # the environment's choice
    with i18n.speaking("zh"):
        assert i18n.language() == "zh"
    monkeypatch.setenv("NORMCORE_LANG", "zh")
    assert i18n.language() == "zh", "the environment chooses again, as before the block"
    i18n.set_language("en")
    with pytest.raises(RuntimeError), i18n.speaking("zh"):
        raise RuntimeError("an error inside the block")
    assert i18n.language() == "en"


def test_the_chinese_pages_exist_and_are_linked_both_ways():
    for page in ZH_PAGES:
        assert (PAGES / "zh" / f"{page}.md").is_file(), page
    english = (PAGES / "index.md").read_text(encoding="utf-8")
    assert "](zh/index.md)" in english.split("\n\n", 3)[2], "the English index's first lines"
    assert re.search(r"```\{toctree\}[^`]*\nzh/index\n```", english)
    chinese = (PAGES / "zh" / "index.md").read_text(encoding="utf-8")
    assert "](../index.md)" in chinese
    toctree = re.search(r"```\{toctree\}\n(.*?)```", chinese, flags=re.S).group(1).split()
    for page in ZH_PAGES[1:] + ZH_GENERATED:
        assert page in toctree, page
    for nb in ZH_NOTEBOOKS:
        assert f"/notebooks/{nb}" in toctree, nb
    for page in ZH_PAGES:
        text = (PAGES / "zh" / f"{page}.md").read_text(encoding="utf-8")
        assert CJK.search(text.split("\n", 1)[0]), f"zh/{page}.md: its title is not Chinese"


def test_the_package_ships_the_chinese_pages():
    import configparser

    cfg = configparser.ConfigParser()
    cfg.read(ROOT / "setup.cfg")
    data = [p.strip() for p in cfg["options.package_data"]["normcore.docs"].split(",")]
    assert "pages/zh/*.md" in data


def test_chinese_code_blocks_fit_the_content_column():
    wide = []
    for page in sorted((PAGES / "zh").glob("*.md")):
        blocks = re.findall(r"^```[^\n]*\n(.*?)^```", page.read_text(encoding="utf-8"), flags=re.M | re.S)
        wide += [f"{page.name}: {line}" for block in blocks for line in block.splitlines()
                 if display_width(line) > 70]
    assert not wide, wide


docs = _load("test_docs_for_i18n", Path(__file__).with_name("test_docs.py"))


@pytest.mark.slow  # a whole Sphinx build
@docs.needs_docs
def test_the_site_builds_with_its_chinese_section(tmp_path):
    site = docs._build(tmp_path / "site")
    pages, _ = docs._crawl(site)
    for page in ZH_PAGES + ZH_GENERATED:
        assert (site / "zh" / f"{page}.html").resolve() in pages, page
    for nb in ZH_NOTEBOOKS:
        assert (site / "notebooks" / f"{nb}.html").resolve() in pages, nb
    glossary = docs._text((site / "zh" / "glossary.html").read_text(encoding="utf-8"))
    for term in terms():
        assert term.zh in glossary and term.en in glossary, term.en
    back = (site / "zh" / "index.html").read_text(encoding="utf-8")
    assert 'href="../index.html"' in back
    claims = docs._text((site / "notebooks" / "claims_zh.html").read_text(encoding="utf-8"))
    assert "原文位置" in claims


# --- the README -------------------------------------------------------------------------------
def test_the_readme_links_its_chinese_introduction_in_its_first_lines():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    top = "\n".join(readme.splitlines()[:6])
    assert "](#中文简介)" in top
    section = readme.split("\n## 中文简介\n", 1)[1].split("\n## ", 1)[0]
    for command in ("--lang zh", "normcore practice new", "normcore practice check", "explain"):
        assert command in section, command
    for target in re.findall(r"\]\(([^)#]+)\)", top + section):
        assert (ROOT / target).exists(), target


# --- the Chinese notebooks --------------------------------------------------------------------
@pytest.mark.parametrize("topic", ZH_NOTEBOOKS)
def test_a_chinese_notebook_is_built_from_its_english_source(topic):
    source, lang = build.source_and_language(topic)
    assert lang == "zh" and source in build.TOPICS and topic in build.TOPICS
    chinese, english = build.cells(topic), build.cells(source)
    assert [c.cell_type for c in chinese] == [c.cell_type for c in english]
    assert [c.source for c in chinese if c.cell_type == "code"] == \
        [c.source for c in english if c.cell_type == "code"], "the code cells are shared"
    nb = nbformat.read(ROOT / "notebooks" / f"{topic}.ipynb", as_version=4)
    assert nb.metadata["normcore"]["language"] == "zh"  # its kernel speaks Chinese


def test_a_markdown_cell_without_its_chinese_text_stops_the_build(tmp_path, monkeypatch):
    src = tmp_path / "src"
    src.mkdir()
    both = "md('# Title', zh='# 标题'), question('Why?', 'So.', zh=('为何？', '因此。'))"
    (src / "demo.py").write_text(f"from build import md, question\nCELLS = [{both}, md('Only English.')]\n")
    monkeypatch.setattr(build, "SOURCES", src)
    english = build.cells("demo")
    assert [c.source.split("\n")[0] for c in english[:2]] == ["# Title", "**Inline question 1.** Why?"]
    assert all("translations" not in c.metadata for c in english)
    with pytest.raises(ValueError, match="no zh text for demo_zh: 'Only English.'"):
        build.cells("demo_zh")
    (src / "demo.py").write_text(f"from build import md, question\nCELLS = [{both}]\n")
    title, asked = build.cells("demo_zh")
    assert title.source == "# 标题"
    assert asked.source.startswith("**随堂问题 1.** 为何？") and "<summary>答案</summary>" in asked.source


# What a Chinese cell may keep in English: code, formulas, links' targets, HTML tags, and the
# step-through's node tables (generated by normcore.derivations and translated with its
# messages, the explain domain, which tests/test_i18n.py checks).
KEPT = [re.compile(p, flags=re.S | re.M) for p in (
    r"^\| # \|.*?(?=\n\n|\Z)", r"```.*?```", r"`[^`]*`", r"\$\$.*?\$\$", r"\$[^$]*\$",
    r"\]\([^)]*\)", r"<[^>]+>")]
ENGLISH = re.compile(r"[A-Za-z][a-z]+(?:[\s,;:.()-]+[A-Za-z][a-z]+){3,}")  # four words in a row


def english_paragraphs(markdown):
    """The paragraphs (and table rows) of ``markdown`` that are English prose: four English
    words in a row and no Chinese, once code, formulas and link targets are taken out."""
    text = markdown
    for pattern in KEPT:
        text = pattern.sub(" ", text)
    pieces = [p for block in text.split("\n\n") for p in
              (block.splitlines() if block.lstrip().startswith("|") else [block])]
    return [p.strip() for p in pieces if ENGLISH.search(p) and not CJK.search(p)]


def test_the_english_detector_finds_english_and_spares_code_and_formulas():
    assert english_paragraphs("This paragraph was never translated.\n\n中文段落。")
    assert not english_paragraphs("用 `np.sqrt(var + self.eps)` 计算，$\\hat{x} = (x - \\mu)\\,r$。")
    assert not english_paragraphs("```python\nprint('hello there my friend')\n```\n\n## LayerNorm")
    assert english_paragraphs("| 练习 | 题目 |\n|---|---|\n| left in English as it was |")


@pytest.mark.parametrize("topic", ZH_NOTEBOOKS)
def test_the_chinese_notebooks_prose_is_chinese(topic):
    nb = nbformat.read(ROOT / "notebooks" / f"{topic}.ipynb", as_version=4)
    english = [p for c in nb.cells if c.cell_type == "markdown" for p in english_paragraphs(c.source)]
    assert not english, english


def _claims():
    import sys

    sys.path.insert(0, str(ROOT / "notebooks"))
    try:
        return _load("claims_source_i18n", ROOT / "notebooks" / "src" / "claims.py")
    finally:
        sys.path.remove(str(ROOT / "notebooks"))


def test_each_claim_in_chinese_names_a_heading_for_each_write_up_it_cites():
    claims = _claims()
    for c in claims.CLAIMS:
        z = c["zh"]
        assert list(z["headings"]) == c["sources"], c["id"]
        assert CJK.search(z["title"]) and CJK.search(z["text"]) and CJK.search(z["why"]), c["id"]
    nb = nbformat.read(ROOT / "notebooks" / "claims_zh.ipynb", as_version=4)
    shown = [cell.source for cell in nb.cells if cell.source.startswith("### ")]
    assert len(shown) == len(claims.CLAIMS)
    for text, c in zip(shown, claims.CLAIMS):
        assert f"**原文位置**：{claims.locators(c['zh']['headings'])}" in text, c["id"]


# The write-ups are not part of normcore; where a copy is at hand (NORMCORE_WRITEUPS, a folder
# of the four as text, W1 to W4 in the order of their file names), every heading is looked up.
WRITEUPS = Path(os.environ.get("NORMCORE_WRITEUPS", "/work/shared/seeds"))


def _headings(path):
    """The headings of a write-up: its Markdown headings or, in the one written without markup,
    its short unindented lines that end without punctuation (its headings stand on lines of
    their own; its text is indented, long, or a sentence leading into what follows)."""
    lines = path.read_text(encoding="utf-8").splitlines()
    found = {line.strip().lstrip("#").strip().strip("*").strip() for line in lines
             if line.strip().startswith("#")}
    if not found:
        found = {line.strip() for line in lines if 0 < len(line) <= 40 and not line[0].isspace()
                 and not line.rstrip().endswith((":", "：", "。", ",", "，"))}
    return found


@pytest.mark.skipif(not WRITEUPS.is_dir(), reason=f"the write-ups are not at {WRITEUPS} (NORMCORE_WRITEUPS)")
def test_each_heading_a_claim_names_occurs_in_its_write_up():
    claims = _claims()
    files = sorted(WRITEUPS.glob("*.txt"))
    assert len(files) == len(claims.WRITEUPS)
    headings = {w: _headings(f) for w, f in zip(claims.WRITEUPS, files)}
    missing = []
    for c in claims.CLAIMS:
        for source, where in c["zh"]["headings"].items():
            for heading in where if isinstance(where, tuple) else (where,):
                if heading is None:
                    continue  # the write-up's opening, before its first heading
                missing += [(c["id"], source, part) for part in heading.split(" › ")
                            if part not in headings[source]]
    # and every section of the listing of the write-ups' claims ("" is a write-up's opening)
    listing = tomllib.loads((ROOT / "notebooks" / "src" / "writeup_claims.toml").read_text(encoding="utf-8"))
    for source, sections in listing.items():
        missing += [("writeup_claims.toml", source, part) for section in sections if section["section"]
                    for part in section["section"].split(" › ") if part not in headings[source]]
    assert not missing, missing
