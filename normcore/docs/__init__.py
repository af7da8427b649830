"""normcore's documentation site: sources, generated pages and the build.

    python -m normcore.docs                  # into build/docs/ (git-ignored); open index.html
    python -m normcore.docs /tmp/site        # into a folder you name
    python -m normcore.docs.notebooks        # the notebooks alone, as HTML, into build/notebooks/

The site is built by Sphinx (with myst-nb for the Markdown pages and the notebooks) from a
temporary folder that :func:`build` fills with

- the hand-written pages in ``normcore/docs/pages/`` (the index and the reading order),
- the API reference, one page per part of normcore, generated from the public names
  (``__all__``) so that every docstring, with its Forward/Backward formulas, appears once,
- the practice catalog, generated from ``normcore.practice.CATALOG`` and ``EXERCISES``,
- the figures page, generated from ``normcore.experiments`` (each experiment's title, lesson
  and PNGs in ``figures/``), and
- the notebooks of ``notebooks/``, rendered with their committed outputs (never executed).

The site works without internet: MathJax, which typesets the formulas, is copied into it from
the ``sphinx-mathjax-offline`` package (the exported notebooks get their own copy of it).
Warnings are errors: a broken link, a missing image or an unresolved reference fails the
build. It needs the ``docs`` extra (``pip install -e ".[docs]"``) and a source checkout, since
the notebooks and figures live beside the package, not inside it.
"""

from .build import DEFAULT_OUTDIR, DocsBuildError, build

__all__ = ["build", "DocsBuildError", "DEFAULT_OUTDIR"]
