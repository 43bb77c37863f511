"""The documentation site builds, warnings as errors, and documents every public name.

The build is the README's ``sphinx-build -W --keep-going -b html docs docs/_build/html`` into a
temporary folder (the notebooks are rendered from their stored outputs, never executed). It
needs the ``docs`` extra (part of ``test``) and is skipped without it.
"""

from __future__ import annotations

import importlib
import pathlib
import pkgutil
import re
import subprocess
import sys
import types

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]
# A citation key: an author's name and a year (``roy2016``), as the docstrings cite papers.
KEY = re.compile(r"\b([a-z]+(?:19|20)\d\d)\b")


def cited_keys() -> set[str]:
    return {k for path in (ROOT / "pacbound").rglob("*.py") for k in KEY.findall(path.read_text())}


def test_every_citation_key_resolves_in_references():
    listed = set(re.findall(r"^\| `([a-z0-9]+)`", (ROOT / "docs/references.md").read_text(), re.M))
    assert {"roy2016", "germain2009", "laviolette2011", "bauvin2020", "shivaswamy"} <= listed
    assert cited_keys(), "no citation key found: the pattern is broken"
    assert cited_keys() - listed == set()


@pytest.fixture(scope="module")
def html(tmp_path_factory) -> pathlib.Path:
    pytest.importorskip("sphinx", reason="the docs extra is not installed")
    pytest.importorskip("myst_nb", reason="the docs extra is not installed")
    out = tmp_path_factory.mktemp("docs")
    cmd = [sys.executable, "-m", "sphinx", "-W", "--keep-going", "-q", "-b", "html"]
    cmd += ["-d", str(out / "doctrees"), str(ROOT / "docs"), str(out / "html")]
    done = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stderr[-5000:]
    return out / "html"


def test_docs_build_without_warnings(html):
    for page in ("index", "getting_started", "which_bound", "protocol", "api", "references"):
        assert (html / f"{page}.html").exists(), page
    assert (html / "notebooks/01_bounds_and_cbound.html").exists()
    # The stored outputs are rendered: the notebook's figures are on its page.
    assert "<img" in (html / "notebooks/01_bounds_and_cbound.html").read_text()
    which = (html / "which_bound.html").read_text()
    from pacbound.certify import BOUNDS, STOCHASTIC_BOUNDS

    assert [n for n in {**BOUNDS, **STOCHASTIC_BOUNDS} if n not in which] == []


def public_objects():
    """``(module, name, owner)`` for every callable or class a module lists in ``__all__``."""
    import pacbound

    for info in pkgutil.walk_packages(pacbound.__path__, "pacbound."):
        if info.name.endswith("__main__"):
            continue
        module = importlib.import_module(info.name)
        for name in getattr(module, "__all__", []):
            obj = getattr(module, name)
            if isinstance(obj, types.ModuleType) or not callable(obj):
                continue  # submodules have their own page; constants may go undocumented
            owner = getattr(obj, "__module__", "")
            yield info.name, name, owner if owner.startswith("pacbound") else info.name


def test_api_reference_documents_every_public_callable(html):
    from sphinx.util.inventory import InventoryFile

    with open(html / "objects.inv", "rb") as f:
        inventory = InventoryFile.load(f, "", lambda base, uri: uri)
    documented = {name for objects in inventory.values() for name in objects}
    missing = [
        f"{module}.{name}"
        for module, name, owner in public_objects()
        if f"{owner}.{name}" not in documented
    ]
    assert missing == []
