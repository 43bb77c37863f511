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


def public_modules() -> list[str]:
    """The public face: ``pacbound`` and its modules outside ``pacbound._src`` and the
    command's ``pacbound.apps`` (the estimators and plots with their extras installed)."""
    import pacbound

    names = [m.name for m in pkgutil.iter_modules(pacbound.__path__)]
    return [f"pacbound.{n}" for n in names if not n.startswith("_") and n != "apps"]


def public_objects():
    """``(module, name)`` for every callable or class a public module lists in ``__all__``."""
    for module_name in public_modules():
        module = importlib.import_module(module_name)
        for name in module.__all__:
            obj = getattr(module, name)
            if isinstance(obj, types.ModuleType) or not callable(obj):
                continue  # constants are documented by their module's page
            yield module_name, name


def test_the_public_surface_is_small_and_documented():
    """Issue #35: at most 180 public names, each with a docstring; nothing private exported."""
    import pacbound

    names = {n for m in public_modules() for n in importlib.import_module(m).__all__}
    names |= set(pacbound.__all__)
    assert len(names) <= 180, len(names)
    for module_name in public_modules():
        module = importlib.import_module(module_name)
        assert module.__doc__, module_name
        for name in module.__all__:
            assert not name.startswith("_"), (module_name, name)
            obj = getattr(module, name)
            if callable(obj):
                assert getattr(obj, "__doc__", None), f"{module_name}.{name} has no docstring"


def test_api_reference_documents_every_public_callable(html):
    from sphinx.util.inventory import InventoryFile

    with open(html / "objects.inv", "rb") as f:
        inventory = InventoryFile.load(f, "", lambda base, uri: uri)
    documented = {name for objects in inventory.values() for name in objects}
    missing = [f"{module}.{name}" for module, name in public_objects()
               if f"{module}.{name}" not in documented]  # fmt: skip
    assert missing == []
