"""Stage the site's sources in a temporary folder and build them with Sphinx."""

import base64
import json
import pathlib
import re
import shutil
import sys
import tempfile

from ..i18n.width import join_wide_lines
from . import generate

HERE = pathlib.Path(__file__).resolve().parent
CHECKOUT = HERE.parents[1]          # the repository: normcore/, notebooks/, figures/
DEFAULT_OUTDIR = "build/docs"       # relative to the checkout; build/ is git-ignored
MATHJAX_PACKAGE = "sphinx-mathjax-offline"  # its import name has hyphens, as conf.py names it


class DocsBuildError(RuntimeError):
    """The site could not be built: a missing tool or folder, or a Sphinx warning or error."""


def need_tools(names, extra="docs"):
    """Raise :class:`DocsBuildError` naming the packages of ``names`` that are not installed."""
    missing = []
    for name in names:
        try:
            __import__(name)
        except ImportError:
            missing.append(name)
    if missing:
        raise DocsBuildError(f"this needs {', '.join(missing)}; install the {extra} extra:\n"
                             f"  pip install -e \".[{extra}]\"")


def mathjax_folder():
    """The folder of MathJax that the sphinx-mathjax-offline package installs (tex-chtml.js
    and the fonts and extensions it loads), copied beside the pages so they work offline."""
    import importlib.util

    package = importlib.util.find_spec(MATHJAX_PACKAGE)
    return pathlib.Path(package.submodule_search_locations[0]) / "static" / "mathjax"


# The site is two Sphinx projects, each built in its own language (its search, its "lang"
# attribute, Sphinx's own words): the English one at the site's root and the Chinese section,
# built with language zh_CN, in zh/. A hand-written page links to the other section as a file
# of the repository would ("../notebooks/dropout.ipynb" from pages/zh/, "zh/index.md" from
# pages/); staging turns such a link into one of the URL schemes that conf.py defines,
# "en:" and "zh:", to the other section's HTML page.
LANGUAGES = {"en": ("", "en"), "zh": ("zh", "zh_CN")}  # language: (folder in the site, Sphinx's)
OTHER_SECTION = {"en": ("zh/", "zh"), "zh": ("../", "en")}  # a link's prefix there, its scheme
_LINK = re.compile(r"\]\((?P<target>[^)\s:#]+?)(?P<suffix>\.md|\.rst|\.ipynb)(?P<fragment>#[^)]*)?\)")


def stage(src, lang="en", checkout=CHECKOUT):
    """Fill folder ``src`` with every page of the ``lang`` section of the site; returns ``src``."""
    src = pathlib.Path(src)
    notebooks, figures = checkout / "notebooks", checkout / "figures"
    for folder in (notebooks, figures):
        if not folder.is_dir():
            raise DocsBuildError(
                f"{folder} not found: the docs build from a source checkout of normcore, "
                f"which has notebooks/ and figures/ beside normcore/")
    src.mkdir(parents=True, exist_ok=True)
    pages = HERE / "pages" / LANGUAGES[lang][0]
    for page in sorted(pages.glob("*.md")):
        text = other_section_links(page.read_text(encoding="utf-8"), lang)
        (src / page.name).write_text(join_wide_lines(text), encoding="utf-8")  # no gaps in Chinese
    (src / "notebooks").mkdir(exist_ok=True)
    for nb in sorted(notebooks.glob("*.ipynb")):
        if notebook_language(nb.stem) == lang:
            _stage_notebook(nb, src / "notebooks")
    if lang == "en":
        (src / "figures").mkdir(exist_ok=True)
        for png in sorted(figures.glob("*.png")):
            shutil.copy2(png, src / "figures" / png.name)
    generate.write_all(src, lang)
    return src


def notebook_language(stem):
    """'claims_zh' -> 'zh', 'claims' -> 'en': the section of the site a notebook belongs to."""
    base, _, suffix = stem.rpartition("_")
    return suffix if base and suffix in LANGUAGES else "en"


def other_section_links(text, lang):
    """A hand-written page of section ``lang`` with its links to the other section's pages
    ("../notebooks/dropout.ipynb" from zh/, "zh/practice.md" from the root) turned into links
    of the other section's URL scheme ("en:notebooks/dropout.html", "zh:practice.html"); a
    link to a notebook of its own language ("../notebooks/claims_zh.ipynb") stays in it."""
    prefix, scheme = OTHER_SECTION[lang]

    def link(match):
        target, suffix = match.group("target"), match.group("suffix")
        if not target.startswith(prefix):
            return match.group(0)
        target, fragment = target[len(prefix):], match.group("fragment") or ""
        if suffix == ".ipynb" and notebook_language(pathlib.Path(target).name) == lang:
            return f"]({target}{suffix}{fragment})"  # a notebook of this section, staged here
        return f"]({scheme}:{target}.html{fragment})"

    return _LINK.sub(link, text)


def _stage_notebook(path, dest):
    """Copy a notebook, its cells' image attachments written out as files beside it.

    The notebooks carry their figures as attachments of their Markdown cells (so a notebook
    copied elsewhere still shows them); myst-nb renders no ``attachment:`` links, so the
    staged copy links to the same images as files. Outputs are left exactly as committed.
    """
    nb = json.loads(path.read_text(encoding="utf-8"))
    folder = f"{path.stem}_attachments"
    for cell in nb["cells"]:
        attachments = cell.pop("attachments", None)
        if not attachments:
            continue
        source = "".join(cell["source"])
        for name, bundle in attachments.items():
            mime, data = next(iter(bundle.items()))
            (dest / folder).mkdir(exist_ok=True)
            (dest / folder / name).write_bytes(base64.b64decode(data))
            source = source.replace(f"attachment:{name}", f"{folder}/{name}")
        cell["source"] = source
    (dest / path.name).write_text(json.dumps(nb, indent=1), encoding="utf-8")


def _english_api(english, folder):
    """The configuration that resolves the Chinese section's references to normcore's API
    ({py:class}`normcore.LayerNorm`) to the English section's API pages (the English build's
    inventory, objects.inv, read from disk by intersphinx: nothing is downloaded)."""
    up = "../" * len(pathlib.Path(folder).parts)  # from the section's root to the site's
    return {"extensions": [*_conf_extensions(), "sphinx.ext.intersphinx"],
            "intersphinx_mapping": {"en": (up, str(english / "objects.inv"))},
            "intersphinx_disabled_reftypes": []}


def _conf_extensions():
    namespace = {}
    exec((HERE / "conf.py").read_text(encoding="utf-8"), namespace)
    return namespace["extensions"]


def _sphinx(src, out, doctrees, overrides, quiet):
    """One Sphinx HTML build of ``src`` into ``out``, warnings as errors, every warning shown."""
    from sphinx.application import Sphinx
    from sphinx.util.docutils import docutils_namespace, patch_docutils

    status = None if quiet else sys.stdout
    with patch_docutils(HERE), docutils_namespace():
        app = Sphinx(str(src), str(HERE), str(out), str(doctrees), "html", confoverrides=overrides,
                     status=status, warning=sys.stderr, freshenv=True, warningiserror=True,
                     keep_going=True)
        app.build()
    if app.statuscode != 0:
        raise DocsBuildError("Sphinx reported warnings or errors (above); the site is not built")


def build(outdir=None, quiet=False):
    """Build the HTML site into ``outdir`` (default ``build/docs`` in the checkout).

    Two Sphinx builds: the English section into ``outdir``, the Chinese one (Sphinx's
    language zh_CN) into ``outdir/zh``. Warnings are errors (Sphinx's ``-W -n``): broken links,
    missing images and unresolved references fail the build with :class:`DocsBuildError`.
    Returns the path of index.html.
    """
    need_tools(("sphinx", "myst_nb", "furo", MATHJAX_PACKAGE))
    outdir = pathlib.Path(outdir) if outdir is not None else CHECKOUT / DEFAULT_OUTDIR
    outdir = outdir.resolve()
    with tempfile.TemporaryDirectory(prefix="normcore-docs-") as tmp:
        for lang, (folder, sphinx_language) in LANGUAGES.items():
            src = stage(pathlib.Path(tmp) / f"src-{lang}", lang)
            overrides = {"language": sphinx_language}
            if lang != "en":  # {py:class} and the like resolve to the English API pages
                overrides.update(_english_api(outdir, folder))
            _sphinx(src, outdir / folder, pathlib.Path(tmp) / f"doctrees-{lang}", overrides, quiet)
    sys.stdout.flush()
    return outdir / "index.html"
