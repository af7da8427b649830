"""The exercises of interview practice (the file moves to a package by family)."""

from .norms import *  # noqa: F403
from .norms import _tol  # noqa: F401
