"""python -m normcore.docs.notebooks [OUTDIR]: the notebooks as HTML pages that show their
formulas without internet.

Each notebook of ``notebooks/`` becomes one page, exported by nbconvert with its committed
outputs (nothing is run) and its figures inside it. nbconvert's own pages load MathJax, the
script that typesets the formulas, and require.js from the internet; these load MathJax from
the folder ``mathjax/`` beside them, copied from the ``sphinx-mathjax-offline`` package (the
copy the docs site uses too), and nothing else. The folder works offline as it is: open its
``index.html``, or copy the whole folder to a USB stick or a classroom server.
"""

import argparse
import html
import pathlib
import shutil
import sys
import textwrap

from .build import CHECKOUT, MATHJAX_PACKAGE, DocsBuildError, mathjax_folder, need_tools

DEFAULT_OUTDIR = "build/notebooks"   # relative to the checkout; build/ is git-ignored
MATHJAX_SCRIPT = "mathjax/tex-chtml.js"  # relative to the pages: TeX in, HTML and CSS out

# nbconvert's "lab" page with its head changed: MathJax from MATHJAX_SCRIPT, told that the
# notebooks write $...$ and $$...$$, and neither require.js (only widgets need it, and the
# notebooks have none) nor the Mermaid loader (they draw no Mermaid diagrams).
TEMPLATE = r"""
{%- extends 'index.html.j2' -%}
{%- block html_head_js_requirejs -%}{%- endblock html_head_js_requirejs -%}
{%- block html_head_js_mermaidjs -%}{%- endblock html_head_js_mermaidjs -%}
{%- block html_head_js_mathjax -%}
<script>
window.MathJax = {tex: {inlineMath: [["$", "$"], ["\\(", "\\)"]],
                        displayMath: [["$$", "$$"], ["\\[", "\\]"]],
                        processEscapes: true}};
</script>
<script defer src="{{ resources.mathjax_url }}"></script>
{%- endblock html_head_js_mathjax -%}
"""


def _exporter():
    import jinja2
    from nbconvert import HTMLExporter

    return HTMLExporter(extra_loaders=[jinja2.DictLoader({"offline.html.j2": TEMPLATE})],
                        template_file="offline.html.j2", mathjax_url=MATHJAX_SCRIPT)


def _title(nb, name):
    """The notebook's first heading ("# LayerNorm, one node at a time"), else its name."""
    for cell in nb.cells:
        if cell.cell_type == "markdown" and cell.source.startswith("# "):
            return cell.source.splitlines()[0][2:].strip()
    return name


def export(outdir=None, names=None):
    """Export the notebooks (all, or those whose names ``names`` lists, e.g. ``["layernorm"]``)
    into ``outdir`` (default ``build/notebooks`` in the checkout), with ``mathjax/`` and an
    ``index.html`` that links to every page. Returns the path of that index.html."""
    need_tools(("nbconvert", MATHJAX_PACKAGE), extra="notebooks")
    import nbformat  # nbconvert's own dependency

    notebooks = sorted((CHECKOUT / "notebooks").glob("*.ipynb"))
    if not notebooks:
        raise DocsBuildError(f"no notebooks in {CHECKOUT / 'notebooks'}: the export needs a "
                             f"source checkout of normcore")
    if names is not None:
        unknown = sorted(set(names) - {nb.stem for nb in notebooks})
        if unknown:
            there = textwrap.fill(", ".join(nb.stem for nb in notebooks), width=76,
                                  initial_indent="  ", subsequent_indent="  ")
            raise DocsBuildError(f"no notebook named {', '.join(unknown)}; the notebooks "
                                 f"are:\n{there}")
        notebooks = [nb for nb in notebooks if nb.stem in names]
    outdir = pathlib.Path(CHECKOUT / DEFAULT_OUTDIR if outdir is None else outdir).resolve()
    outdir.mkdir(parents=True, exist_ok=True)
    exporter, links = _exporter(), []
    for path in notebooks:
        nb = nbformat.read(path, as_version=4)
        page, _ = exporter.from_notebook_node(nb, resources={"metadata": {"name": path.stem}})
        (outdir / f"{path.stem}.html").write_text(page, encoding="utf-8")
        title = html.escape(_title(nb, path.stem))
        links.append(f'<li><a href="{path.stem}.html">{title}</a></li>')
    shutil.copytree(mathjax_folder(), outdir / "mathjax", dirs_exist_ok=True)
    links = "\n".join(links)
    index = outdir / "index.html"
    index.write_text(f'<!DOCTYPE html>\n<html lang="en">\n<head><meta charset="utf-8">'
                     f"<title>normcore notebooks</title></head>\n<body>\n"
                     f"<h1>normcore notebooks</h1>\n<ul>\n{links}\n</ul>\n</body>\n</html>\n",
                     encoding="utf-8")
    return index


def main(argv=None):
    parser = argparse.ArgumentParser(
        prog="python -m normcore.docs.notebooks",
        description="Export the notebooks to HTML pages that show their formulas without "
                    "internet (MathJax is copied beside them), and print where their "
                    "index.html is.",
        epilog="example: python -m normcore.docs.notebooks /tmp/classroom --only layernorm")
    parser.add_argument("outdir", nargs="?", default=None,
                        help=f"folder to write the pages into (default: {DEFAULT_OUTDIR})")
    parser.add_argument("--only", action="append", metavar="NOTEBOOK",
                        help="export only this notebook, e.g. layernorm; repeat it for more "
                             "(default: all)")
    args = parser.parse_args(argv)
    try:
        index = export(args.outdir, args.only)
    except DocsBuildError as err:
        print(f"notebooks: {err}", file=sys.stderr)
        return 1
    print(f"notebooks exported: open {index}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
