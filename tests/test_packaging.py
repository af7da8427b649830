"""What `pip install .` and the source distribution hold, and `normcore --version`."""

import importlib.metadata
import shutil
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

import pytest

import normcore
import normcore.i18n
from normcore import cli

ROOT = Path(__file__).resolve().parents[1]
PROJECT_FILES = ("setup.cfg", "pyproject.toml", "MANIFEST.in", "README.md", "LICENSE")
PAGES = ("normcore/docs/pages/index.md", "normcore/docs/pages/reading_order.md",
         "normcore/docs/pages/zh/index.md")  # and the Chinese section
# what normcore needs to speak Chinese when installed: the compiled catalogs and the glossary
CATALOGS = tuple(f"normcore/i18n/locale/zh/LC_MESSAGES/{domain}.mo" for domain in normcore.i18n.DOMAINS)
LANGUAGE_FILES = CATALOGS + ("normcore/i18n/glossary.toml",)
BIBLIOGRAPHY = "normcore/bibliography.toml"  # what normcore.bibliography reads when installed


def test_version_prints_the_installed_distribution_version(capsys):
    with pytest.raises(SystemExit) as done:
        cli.main(["--version"])
    assert done.value.code == 0
    assert capsys.readouterr().out == f"normcore {importlib.metadata.version('normcore')}\n"


def test_version_from_a_clone_that_is_not_installed_is_the_package_version(monkeypatch, capsys):
    def not_installed(name):
        raise importlib.metadata.PackageNotFoundError(name)

    monkeypatch.setattr(importlib.metadata, "version", not_installed)
    with pytest.raises(SystemExit):
        cli.main(["--version"])
    assert capsys.readouterr().out == f"normcore {normcore.__version__}\n"


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    """The sdist and the wheel, built from a copy of the project (the clone stays clean), with
    everything setuptools printed on the way."""
    project = tmp_path_factory.mktemp("project")
    for name in PROJECT_FILES:
        shutil.copy(ROOT / name, project / name)
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc")
    shutil.copytree(ROOT / "normcore", project / "normcore", ignore=ignore)
    shutil.copytree(ROOT / "tests", project / "tests", ignore=ignore)
    out = project / "dist"
    # (setuptools rewrites sys.argv while it builds: the folder is read from it once, first)
    script = ("import sys; from setuptools import build_meta as b; out = sys.argv[1]; "
              "names = b.build_sdist(out), b.build_wheel(out); print('BUILT', *names)")
    done = subprocess.run([sys.executable, "-c", script, str(out)], cwd=project,
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    sdist, wheel = done.stdout.split("BUILT ")[-1].split()
    return out / sdist, out / wheel, done.stdout + done.stderr


def test_the_build_does_not_warn_about_the_docs_pages(built):
    *_, log = built
    assert "normcore.docs.pages" not in log
    assert "Package would be ignored" not in log


def test_the_sdist_holds_the_package_and_its_pages_but_not_the_tests(built):
    sdist, _, _ = built
    with tarfile.open(sdist) as archive:
        names = [name.split("/", 1)[1] for name in archive.getnames() if "/" in name]
        pkg_info = archive.extractfile(f"{sdist.name[:-len('.tar.gz')]}/PKG-INFO").read().decode()
    assert not [name for name in names if name.startswith("tests")]
    assert set(PAGES) <= set(names) and "normcore/cli.py" in names and BIBLIOGRAPHY in names
    assert f"\nVersion: {normcore.__version__}\n" in pkg_info


def test_the_wheel_installs_the_pages_and_the_type_marker(built):
    _, wheel, _ = built
    names = zipfile.ZipFile(wheel).namelist()
    assert set(PAGES) <= set(names) and "normcore/py.typed" in names
    assert set(LANGUAGE_FILES) <= set(names), set(LANGUAGE_FILES) - set(names)
    assert BIBLIOGRAPHY in names
    assert not [name for name in names if name.startswith("tests/")]
