"""The documentation site builds offline with warnings as errors, every page, notebook and
figure is reachable from its index, and no page loads a script from the internet (MathJax comes
with the site). Needs the docs extra (Sphinx, myst-nb, furo, sphinx-mathjax-offline); skips
without it. One build (10 to 20 s) serves every check of the site. The notebooks exported by
``python -m normcore.docs.notebooks`` load only local scripts too (needs nbconvert)."""

import html.parser
import importlib.util
import json
import os
import re
import subprocess
import sys
import urllib.parse
from pathlib import Path

import pytest

from normcore.docs.build import notebook_language

ROOT = Path(__file__).resolve().parents[1]


def _needs(extra, *tools):
    missing = [t for t in tools if importlib.util.find_spec(t) is None]
    return pytest.mark.skipif(
        bool(missing), reason=f"{', '.join(missing)} not installed: pip install -e \".[{extra}]\"")


needs_docs = _needs("docs", "sphinx", "myst_nb", "furo", "sphinx-mathjax-offline")
needs_export = _needs("notebooks", "nbconvert", "sphinx-mathjax-offline")
SPECIAL = {"genindex.html", "search.html", "py-modindex.html"}  # Sphinx's own, not our pages


def _run(*args, timeout=300):  # a safety net: the build takes 10 to 20 s
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]))
    return subprocess.run([sys.executable, *args], cwd=ROOT, env=env, capture_output=True, text=True,
                          timeout=timeout)


def _build(out):
    run = _run("-m", "normcore.docs", str(out), "-q")
    log = run.stdout + run.stderr
    assert run.returncode == 0, log
    assert "WARNING" not in log and "ERROR" not in log, log
    return out


class _Links(html.parser.HTMLParser):
    def __init__(self):
        super().__init__()
        self.hrefs, self.images = [], []
        self.scripts, self.inline_scripts, self._in_script = [], [], False

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if tag == "a" and attrs.get("href"):
            self.hrefs.append(attrs["href"])
        if tag == "img" and attrs.get("src"):
            self.images.append(attrs["src"])
        if tag == "script":
            self._in_script = True
            if attrs.get("src"):
                self.scripts.append(attrs["src"])

    def handle_endtag(self, tag):
        if tag == "script":
            self._in_script = False

    def handle_data(self, data):
        if self._in_script and data.strip():
            self.inline_scripts.append(data)


def _local(page, ref):
    parts = urllib.parse.urlsplit(ref)
    if parts.scheme or parts.netloc or not parts.path:
        return None
    return (page.parent / urllib.parse.unquote(parts.path)).resolve()


def _crawl(site):
    """Every page reachable from index.html by links, and the images they show."""
    seen, images, todo = set(), set(), [(site / "index.html").resolve()]
    while todo:
        page = todo.pop()
        if page in seen:
            continue
        seen.add(page)
        parser = _Links()
        parser.feed(page.read_text(encoding="utf-8"))
        images |= {_local(page, src) for src in parser.images} - {None}
        for href in parser.hrefs:
            target = _local(page, href)
            if target and target.suffix == ".html" and target.is_file():
                todo.append(target)
    return seen, images


@pytest.mark.slow  # a whole Sphinx build
@needs_docs
def test_the_site_builds_without_a_warning_and_shows_everything(tmp_path):
    # One test, so that pytest-xdist builds the site once, not once per worker.
    site = _build(tmp_path / "site")
    assert (site / "index.html").is_file()
    check_every_page_notebook_and_figure_is_reachable_from_the_index(site)
    check_notebooks_show_their_committed_outputs(site)
    check_api_reference_shows_the_norms_formulas(site)
    check_practice_catalog_is_generated_from_the_catalog(site)
    check_pages_load_only_local_scripts_and_mathjax_is_in_the_site(site)
    check_every_local_link_leads_to_a_file(site)
    check_the_chinese_section_is_built_in_chinese(site)
    check_every_derivation_page_shows_its_graph_as_an_svg(site)


def check_every_page_notebook_and_figure_is_reachable_from_the_index(site):
    pages, images = _crawl(site)
    built = {p.resolve() for p in site.rglob("*.html") if p.name not in SPECIAL}
    assert built - pages == set(), "pages no link from the index reaches"
    for nb in sorted((ROOT / "notebooks").glob("*.ipynb")):
        section = "zh" if notebook_language(nb.stem) == "zh" else ""
        assert (site / section / "notebooks" / f"{nb.stem}.html").resolve() in pages, nb.name
    missing = [img for img in images if not img.is_file()]
    assert not missing, f"images the pages show but the site lacks: {missing}"
    shown = {img.name for img in images}
    for png in sorted((ROOT / "figures").glob("*.png")):
        assert png.name in shown, f"figures/{png.name} is on no page"


def check_every_derivation_page_shows_its_graph_as_an_svg(site):
    """Each derivation page shows the computation graph generate.derivation_pages drew for it,
    an SVG (tests/test_docs_derivations.py checks the pages' text without drawing)."""
    pages = sorted(p for p in (site / "derivations").glob("*.html") if p.name != "index.html")
    assert len(pages) >= 30, [p.name for p in pages]
    for page in pages:
        parser = _Links()
        parser.feed(page.read_text(encoding="utf-8"))
        graphs = [_local(page, src) for src in parser.images if src.endswith(f"/{page.stem}.svg")]
        assert len(graphs) == 1, (page.name, parser.images)
        assert graphs[0].read_bytes().lstrip().startswith((b"<?xml", b"<svg")), page.name


def check_notebooks_show_their_committed_outputs(site):
    nb = json.loads((ROOT / "notebooks" / "layernorm.ipynb").read_text(encoding="utf-8"))
    texts = [line.strip() for cell in nb["cells"] if cell["cell_type"] == "code"
             for out in cell["outputs"] if out.get("name") == "stdout"
             for line in "".join(out["text"]).splitlines() if len(line.strip()) > 20]
    assert texts, "the LayerNorm notebook has no printed output to look for"
    page = (site / "notebooks" / "layernorm.html").read_text(encoding="utf-8")
    assert html.escape(texts[0], quote=False) in page


def check_api_reference_shows_the_norms_formulas(site):
    page = (site / "api" / "norms.html").read_text(encoding="utf-8")
    for line in ("x_hat = (x - mean) * rstd", "dx_hat = dy * gamma"):
        assert line in _text(page), line
    assert "normcore.LayerNorm" in page and "normcore.BatchNorm1d" in page
    for api in (site / "api").glob("*.html"):  # signatures name numpy.typing's aliases
        assert "_SupportsArray" not in api.read_text(encoding="utf-8"), api.name


def _text(page):
    parser = html.parser.HTMLParser()
    chunks = []
    parser.handle_data = chunks.append
    parser.feed(page)
    return "".join(chunks)


def check_practice_catalog_is_generated_from_the_catalog(site):
    from normcore.practice import CATALOG, EXERCISES

    page = _text((site / "practice_catalog.html").read_text(encoding="utf-8"))
    for mistake in CATALOG:
        assert mistake.id in page and " ".join(mistake.title.split()) in page, mistake.id
    for name in EXERCISES:
        assert name in page


# What a page loading a script from the internet looks like: a URL with a scheme or a host
# (//cdn...), or one of the usual MathJax hosts named inside a script (an import(), a loader).
REMOTE = re.compile(r"https?://|cdn\.jsdelivr|cdnjs|mathjax\.org|unpkg\.com", re.IGNORECASE)


def check_pages_load_only_local_scripts(pages):
    """Every script of ``pages`` is a local file that exists; returns the MathJax ones."""
    mathjax = set()
    for page in pages:
        parser = _Links()
        parser.feed(page.read_text(encoding="utf-8"))
        for src in parser.scripts:
            target = _local(page, src)
            assert target is not None and not src.startswith("//"), f"{page.name} loads {src}"
            assert target.is_file(), f"{page.name} loads {src}, which is not there"
            if "mathjax" in src.lower():
                mathjax.add(target)
        remote = [code for code in parser.inline_scripts if REMOTE.search(code)]
        assert not remote, f"{page.name} has a script naming a remote address: {remote}"
    return mathjax


def check_pages_load_only_local_scripts_and_mathjax_is_in_the_site(site):
    pages = sorted(site.rglob("*.html"))
    mathjax = check_pages_load_only_local_scripts(pages)
    sections = (site, site / "zh")  # each section, a Sphinx build of its own, has its MathJax
    assert mathjax == {(s / "_static" / "mathjax" / "tex-chtml.js").resolve() for s in sections}
    with_math = [p for p in pages if 'class="math' in p.read_text(encoding="utf-8")]
    assert len(with_math) >= 9, "the notebooks' formulas are not on the site"  # one per notebook
    for page in with_math:
        assert "mathjax/tex-chtml.js" in page.read_text(encoding="utf-8"), page.name
    # MathJax fetches its fonts from beside its script: they ship with the site too
    assert list((site / "_static" / "mathjax" / "output" / "chtml" / "fonts").rglob("*.woff"))


def check_every_local_link_leads_to_a_file(site):
    """No link of any page is broken, the links between the two sections included (Sphinx
    checks the links inside a build, not those to the other one)."""
    broken = []
    for page in sorted(site.rglob("*.html")):
        parser = _Links()
        parser.feed(page.read_text(encoding="utf-8"))
        for href in parser.hrefs:
            target = _local(page, href)
            if target is not None and not target.exists():
                broken.append(f"{page.relative_to(site)} -> {href}")
    assert not broken, broken


def check_the_chinese_section_is_built_in_chinese(site):
    """zh/ is a Sphinx build in zh_CN: every page says lang="zh-CN" (the English ones "en"),
    Sphinx's own words are Chinese and its search index is the Chinese section's."""
    from normcore.i18n.glossary import terms

    for page in sorted(site.rglob("*.html")):
        chinese = page.is_relative_to(site / "zh")
        lang = re.search(r'<html[^>]*\slang="([^"]+)"', page.read_text(encoding="utf-8")).group(1)
        assert lang == ("zh-CN" if chinese else "en"), f"{page.relative_to(site)}: lang={lang}"
    index = (site / "zh" / "index.html").read_text(encoding="utf-8")
    assert "搜索" in index and 'href="../index.html' in index
    assert "原文位置" in _text((site / "zh" / "notebooks" / "claims_zh.html").read_text(encoding="utf-8"))
    glossary = _text((site / "zh" / "glossary.html").read_text(encoding="utf-8"))
    for term in terms():
        assert term.zh in glossary and term.en in glossary, term.en
        assert term.note_zh in glossary and (not term.note or term.note not in glossary), term.en


@needs_export
def test_exported_notebooks_load_mathjax_from_beside_them(tmp_path):
    from normcore.docs.notebooks import MATHJAX_SCRIPT, export

    index = export(tmp_path / "out", ["layernorm"])
    page = index.parent / "layernorm.html"
    assert {p.name for p in index.parent.glob("*.html")} == {"index.html", "layernorm.html"}
    nb = json.loads((ROOT / "notebooks" / "layernorm.ipynb").read_text(encoding="utf-8"))
    heading = nb["cells"][0]["source"][0]  # "# LayerNorm, ..."
    assert f'href="layernorm.html">{heading[2:].strip()}</a>' in index.read_text(encoding="utf-8")
    formulas = [f for cell in nb["cells"] if cell["cell_type"] == "markdown"
                for f in re.findall(r"(?<!\$)\$[^$\n]{8,}\$", "".join(cell["source"]))]
    assert formulas, "the LayerNorm notebook has no $...$ formula to look for"
    assert html.escape(formulas[0], quote=False) in page.read_text(encoding="utf-8")
    mathjax = check_pages_load_only_local_scripts([index, page])
    assert mathjax == {(index.parent / MATHJAX_SCRIPT).resolve()}, mathjax
    assert "data:image/png;base64," in page.read_text(encoding="utf-8"), "figures not inside"


@needs_export
def test_exporting_an_unknown_notebook_names_the_ones_there_are(tmp_path):
    from normcore.docs import DocsBuildError
    from normcore.docs.notebooks import export

    with pytest.raises(DocsBuildError, match=r"(?s)no notebook named layrnorm;.*layernorm"):
        export(tmp_path, ["layrnorm"])
    assert not list(tmp_path.iterdir()), "nothing is written for a wrong name"


@pytest.mark.slow  # a Sphinx build
@needs_docs
def test_a_broken_link_or_image_fails_the_build(tmp_path):
    src = tmp_path / "src"
    src.mkdir()
    (src / "index.md").write_text("# Broken\n\n[nowhere](missing.md)\n\n![gone](gone.png)\n\n"
                                  "{py:class}`normcore.NoSuchLayer`\n")
    run = _run("-m", "sphinx", "-b", "html", "-W", "--keep-going", "-n", "-q", "-c",
               str(ROOT / "normcore" / "docs"), str(src), str(tmp_path / "out"))
    assert run.returncode != 0
    for what in ("missing.md", "gone.png", "normcore.NoSuchLayer"):
        assert what in run.stderr, run.stderr


def test_the_default_build_folder_is_git_ignored():
    from normcore.docs import DEFAULT_OUTDIR

    ignored = (ROOT / ".gitignore").read_text().split()
    assert f"{DEFAULT_OUTDIR.split('/')[0]}/" in ignored


def _readme_block(extra):
    blocks = re.findall(r"```bash\n(.*?)```", (ROOT / "README.md").read_text(), flags=re.S)
    command = [b for b in blocks if f".[{extra}]" in b]
    assert len(command) == 1, f"the README has {len(command)} commands installing .[{extra}]"
    return command[0]


def test_readme_says_how_to_build_and_open_the_site():
    command = _readme_block("docs")
    assert "python -m normcore.docs" in command and "build/docs/index.html" in command


def test_readme_says_how_to_export_the_notebooks_for_offline_use():
    from normcore.docs.notebooks import DEFAULT_OUTDIR

    command = _readme_block("notebooks")
    assert "python -m normcore.docs.notebooks" in command
    assert f"{DEFAULT_OUTDIR}/index.html" in command


def test_api_reference_documents_every_public_name_once():
    import importlib
    import inspect

    import normcore
    from normcore.docs import generate

    targets = [line.split("::")[1].strip() for text in generate.api_pages().values()
               for line in text.splitlines() if line.startswith((".. autoclass::", ".. autofunction::"))]
    objects = []
    for target in targets:
        module, _, name = target.rpartition(".")
        objects.append(getattr(importlib.import_module(module), name))
    assert len({id(o) for o in objects}) == len(objects), "an object is documented twice"
    public = [getattr(normcore, n) for n in normcore.__all__]
    import normcore.distributed

    for sub in (normcore.nn, normcore.optim, normcore.derivations, normcore.fast, normcore.distributed):
        public += [getattr(sub, n) for n in sub.__all__]
    missing = [o.__name__ for o in public
               if (inspect.isclass(o) or inspect.isfunction(o)) and all(o is not d for d in objects)]
    assert not missing, f"public names the API reference lacks: {missing}"
