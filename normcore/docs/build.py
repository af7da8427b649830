"""Stage the site's sources in a temporary folder and build them with Sphinx."""

import base64
import json
import pathlib
import shutil
import sys
import tempfile

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


def stage(src, checkout=CHECKOUT):
    """Fill folder ``src`` with every page of the site; returns ``src``."""
    src = pathlib.Path(src)
    notebooks, figures = checkout / "notebooks", checkout / "figures"
    for folder in (notebooks, figures):
        if not folder.is_dir():
            raise DocsBuildError(
                f"{folder} not found: the docs build from a source checkout of normcore, "
                f"which has notebooks/ and figures/ beside normcore/")
    src.mkdir(parents=True, exist_ok=True)
    for page in sorted((HERE / "pages").glob("*.md")):
        shutil.copy2(page, src / page.name)
    (src / "zh").mkdir(exist_ok=True)  # the Chinese section, linked from the index and back
    for page in sorted((HERE / "pages" / "zh").glob("*.md")):
        shutil.copy2(page, src / "zh" / page.name)
    (src / "notebooks").mkdir(exist_ok=True)
    for nb in sorted(notebooks.glob("*.ipynb")):
        _stage_notebook(nb, src / "notebooks")
    (src / "figures").mkdir(exist_ok=True)
    for png in sorted(figures.glob("*.png")):
        shutil.copy2(png, src / "figures" / png.name)
    generate.write_all(src)
    return src


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


def build(outdir=None, quiet=False):
    """Build the HTML site into ``outdir`` (default ``build/docs`` in the checkout).

    Warnings are errors (Sphinx's ``-W -n``): broken links, missing images and unresolved
    references fail the build with :class:`DocsBuildError`. Returns the path of index.html.
    """
    need_tools(("sphinx", "myst_nb", "furo", MATHJAX_PACKAGE))
    from sphinx.cmd.build import build_main

    outdir = pathlib.Path(outdir) if outdir is not None else CHECKOUT / DEFAULT_OUTDIR
    outdir = outdir.resolve()
    with tempfile.TemporaryDirectory(prefix="normcore-docs-") as tmp:
        src = stage(pathlib.Path(tmp) / "src")
        args = ["-b", "html", "-E", "-W", "--keep-going", "-n", "-c", str(HERE),
                "-d", str(pathlib.Path(tmp) / "doctrees"), str(src), str(outdir)]
        if quiet:
            args.insert(0, "-q")
        status = build_main(args)
    if status != 0:
        raise DocsBuildError("Sphinx reported warnings or errors (above); the site is not built")
    sys.stdout.flush()
    return outdir / "index.html"
