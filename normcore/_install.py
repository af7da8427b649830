"""How to install PyTorch, said once: every message that asks for it ends with ``torch_hint()``.

PyTorch is optional (the oracle of ``normcore compare``, the bridge and the PyTorch track of the
practice). A plain ``pip`` may fetch its CUDA build, several GB, which normcore never uses, so
the hint is the README's line for the CPU build (tests/test_install_hint.py holds the two equal).
"""

from .i18n import translator

_ = translator("cli")

TORCH_CPU = "pip install torch --index-url https://download.pytorch.org/whl/cpu"


def torch_hint(indent: str = "") -> str:
    """Two lines, each starting with ``indent``: why the CPU build, then the command, indented
    four more columns."""
    why = _("Install PyTorch's CPU build (plain pip may fetch the multi-GB CUDA build):")
    return f"{indent}{why}\n{indent}    {TORCH_CPU}"
