"""Not the package: the package is the ``normcore/`` folder next to this file.

This file exists for one situation. A clone in a folder named ``normcore``, and Python run
from the folder that holds the clone (``python my_script.py`` next to it): Python then finds
the clone itself first, and without this file imported it as an empty namespace package
(``module 'normcore' has no attribute 'LayerNorm'``). Here it hands the import over to the
real package inside, so ``import normcore`` works from there too. Imported under any other
name (by a tool walking the folders), it does nothing. CONTRIBUTING.md ("The file at the
root") says why no other way works.
"""

if __name__ == "normcore":
    import importlib.util
    import os
    import sys

    _inner = os.path.join(os.path.dirname(os.path.abspath(__file__)), "normcore")
    _spec = importlib.util.spec_from_file_location(
        "normcore", os.path.join(_inner, "__init__.py"), submodule_search_locations=[_inner])
    if _spec is None or _spec.loader is None or not os.path.isfile(_spec.origin or ""):
        raise ImportError(
            f"Python imported the folder {os.path.dirname(os.path.abspath(__file__))} as the "
            f"package normcore, because it runs from the folder that holds it, but the package "
            f"folder normcore/ inside it is missing. Run from another folder, or install "
            f"normcore (pip install -e PATH_TO_CLONE).")
    _module = importlib.util.module_from_spec(_spec)
    sys.modules["normcore"] = _module  # the import statement returns what is here once we finish
    _spec.loader.exec_module(_module)
