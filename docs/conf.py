"""Sphinx configuration of pacbound's documentation site.

Build with ``sphinx-build -W --keep-going -b html docs docs/_build/html`` (warnings are errors;
``tests/test_docs.py`` runs the same build). The notebooks are rendered from their stored
outputs: nothing is executed.
"""

import importlib
import os
import pkgutil
import re
import sys

sys.path.insert(0, os.path.abspath(".."))

import pacbound

project = "pacbound"
author = "the pacbound authors"
copyright = "the pacbound authors, MIT license"
release = version = pacbound.__version__

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.napoleon",
    "sphinx.ext.mathjax",
    "sphinx.ext.viewcode",
    "myst_nb",
]

source_suffix = {".rst": "restructuredtext", ".md": "myst-nb", ".ipynb": "myst-nb"}
# The modules api.rst lists (each page lists its submodules).
API_MODULES = [
    "pacbound.margins", "pacbound.cbound", "pacbound.kl", "pacbound.bounds", "pacbound.certify",
    "pacbound.ensembles", "pacbound.voters", "pacbound.datasets", "pacbound.solvers",
    "pacbound.sweep", "pacbound.estimators", "pacbound.plots",
]  # fmt: skip
exclude_patterns = ["_build", "_generated", "Thumbs.db", ".DS_Store", "**.ipynb_checkpoints"]

# API reference: one page per module (written by _write_module_pages below: autosummary's
# recursion would take pacbound._src.solvers.mincq for the function the package re-exports under
# the module's name), generated from the docstrings (Google style).
autosummary_generate = False
autodoc_default_options = {"members": True, "member-order": "bysource"}
autodoc_typehints = "description"
autodoc_typehints_format = "short"
autodoc_preserve_defaults = True
napoleon_google_docstring = True
napoleon_numpy_docstring = False
napoleon_use_ivar = True  # NamedTuple "Attributes:" as fields, not duplicate objects
napoleon_use_rtype = False
add_module_names = False

# The notebooks are shown with the outputs stored in them (the test suite executes them).
nb_execution_mode = "off"
nb_merge_streams = True
myst_enable_extensions = ["dollarmath", "amsmath", "colon_fence"]
myst_heading_anchors = 3
# benchmarks/REPRODUCTIONS.md (included) goes from ## to #### for its tables' captions.
suppress_warnings = ["myst.header"]

html_theme = "sphinx_book_theme"
html_title = "pacbound"
html_theme_options = {
    "repository_url": "https://github.com/pacbound/pacbound",
    "use_repository_button": True,
    "show_toc_level": 2,
    # the sidebar shows the current page's branch only: rendering every page's full tree was
    # half of the build's time (about 190 pages with the API reference and the source pages)
    "collapse_navbar": True,
}


try:  # Sphinx >= 9
    from sphinx.ext.autodoc._directive import AutodocDirective
except ImportError:
    from sphinx.ext.autodoc.directive import AutodocDirective

_current_module = [""]


class _AutoModule(AutodocDirective):
    """``automodule`` that remembers which module it documents (for :func:`_skip_member`)."""

    def run(self):
        _current_module[0] = self.arguments[0]
        return super().run()


def _skip_member(app, what, name, obj, skip, options):
    """Document each public module's ``__all__`` (its members are defined under the private
    ``pacbound._src``), and nothing that is not ours.

    Skips the ``Alias for field number k`` properties of NamedTuples (the class's own
    ``Attributes:`` section documents the fields), the ``set_*_request`` methods that
    scikit-learn generates on every estimator, and a module's members outside its ``__all__``.
    """
    doc = getattr(obj, "__doc__", None) or ""
    if isinstance(obj, property) and doc.startswith("Alias for field number"):
        return True
    if re.fullmatch(r"set_\w+_request", name):
        return True
    if what == "module":
        public = getattr(importlib.import_module(_current_module[0]), "__all__", None)
        if public is not None and name not in public:
            return True
    return None


def _summary(module):
    """The first paragraph of a module's docstring, on one line."""
    doc = (module.__doc__ or "").strip()
    return " ".join(doc.split("\n\n")[0].split()) or "(no description)"


def _module_page(name):
    """The reST of one module's page: its docstring and members, then its submodules."""
    module = importlib.import_module(name)
    lines = [name, "=" * len(name), "", f".. automodule:: {name}", ""]
    path = getattr(module, "__path__", [])  # a plain module has no submodules
    subs = [f"{name}.{m.name}" for m in pkgutil.iter_modules(path) if not m.name.startswith("_")]
    if subs:
        lines += [".. rubric:: Modules", "", ".. list-table::", "   :widths: 30 70", ""]
        for sub in subs:
            summary = _summary(importlib.import_module(sub))
            lines += [f"   * - :mod:`~{sub}`", f"     - {summary}"]
        lines += ["", ".. toctree::", "   :hidden:", ""] + [f"   {sub}" for sub in subs]
    return subs, "\n".join(lines) + "\n"


def _write_module_pages(app):
    """Write ``_api/<module>.rst`` for every module of pacbound (rewritten only if changed)."""
    out = os.path.join(app.srcdir, "_api")
    os.makedirs(out, exist_ok=True)
    todo = [m for m in API_MODULES]
    while todo:
        name = todo.pop()
        subs, text = _module_page(name)
        todo += subs
        path = os.path.join(out, f"{name}.rst")
        if not os.path.exists(path) or open(path).read() != text:
            with open(path, "w") as f:
                f.write(text)


def _write_bound_registry(app):
    """Write ``_generated/bound_registry.md``: the bound registry as a table (which_bound.md)."""
    from pacbound.certify import BOUNDS, STOCHASTIC_BOUNDS

    rows = ["| name | reference | family | needs | default |", "|---|---|---|---|---|"]
    for name, spec in {**BOUNDS, **STOCHASTIC_BOUNDS}.items():
        family = spec.family or "every posterior"
        needs = ", ".join(spec.needs) or "the margins"
        default = "yes" if spec.default else "no"
        reference = spec.reference.replace("|", "\\|")
        rows.append(f"| `{name}` | {reference} | {family} | {needs} | {default} |")
    out = os.path.join(app.srcdir, "_generated")
    os.makedirs(out, exist_ok=True)
    text = "\n".join(rows) + "\n"
    path = os.path.join(out, "bound_registry.md")
    if not os.path.exists(path) or open(path).read() != text:
        with open(path, "w") as f:
            f.write(text)


def _register_automodule(app, config):
    app.add_directive("automodule", _AutoModule, override=True)


def setup(app):
    # autodoc registers its directives when the configuration is read: replace it after.
    app.connect("config-inited", _register_automodule, priority=900)
    app.connect("builder-inited", _write_module_pages)
    app.connect("builder-inited", _write_bound_registry)
    app.connect("autodoc-skip-member", _skip_member)
