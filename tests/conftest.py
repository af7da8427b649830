"""Every test starts in English whatever the machine's locale: tests that want Chinese ask for
it (``normcore --lang zh``, ``set_language("zh")`` or ``NORMCORE_LANG=zh`` for a subprocess)."""

import os

import pytest

from normcore import i18n

for _name in ("NORMCORE_LANG", "LC_ALL", "LC_MESSAGES", "LANGUAGE"):
    os.environ.pop(_name, None)
os.environ["LANG"] = "C.UTF-8"


@pytest.fixture(autouse=True)
def _language_from_environment():
    i18n.set_language(None)
    yield
    i18n.set_language(None)
