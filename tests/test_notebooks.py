"""The tutorial notebooks execute without error on their quick settings.

Each notebook reads ``PACBOUND_NOTEBOOK_QUICK=1`` (fewer stumps, steps, rounds and grid values)
and runs in a fresh ``python3`` kernel of the current environment, with JAX's persistent
compilation cache in pytest's cache directory (shared by the four kernels, and by later runs).
Skipped when nbclient, nbformat or ipykernel (or matplotlib, scikit-learn) are not installed.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

nbformat = pytest.importorskip("nbformat")
nbclient = pytest.importorskip("nbclient")
pytest.importorskip("ipykernel")
pytest.importorskip("matplotlib")
pytest.importorskip("sklearn")

NOTEBOOKS = sorted((Path(__file__).parent.parent / "notebooks").glob("0*.ipynb"))
# the learner, gradient-minimization and sweep notebooks call what tests/test_protocol.py,
# the learners' tests and tests/test_sweep.py check; their execution is in the thorough tier
# (CI). The first notebook (bounds, the C-bound, certify) runs by default.
THOROUGH = {
    "02_mincq_cqboost_cbboost", "03_gradient_bound_minimization", "04_sweeps_on_accelerators",
}  # fmt: skip


@pytest.fixture(scope="module")
def quick_environment(request, tmp_path_factory):
    """The kernels' environment (they inherit ``os.environ``): quick settings, float32 and a
    persistent compilation cache (pytest's cache folder; a temporary one without it)."""
    if hasattr(request.config, "cache"):
        cache = request.config.cache.mkdir("jax-compilation-cache")
    else:  # -p no:cacheprovider
        cache = tmp_path_factory.mktemp("jax-compilation-cache")
    settings = {
        "PACBOUND_NOTEBOOK_QUICK": "1",
        "JAX_COMPILATION_CACHE_DIR": str(cache),
        "JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS": "0",
        "JAX_ENABLE_X64": "0",
    }
    saved = {name: os.environ.get(name) for name in settings}
    os.environ.update(settings)
    yield
    for name, value in saved.items():
        if value is None:
            os.environ.pop(name)
        else:
            os.environ[name] = value


def test_notebooks_are_found():
    assert [p.name[:2] for p in NOTEBOOKS] == ["01", "02", "03", "04"]


@pytest.mark.parametrize(
    "path",
    [
        pytest.param(p, id=p.stem, marks=[pytest.mark.thorough] if p.stem in THOROUGH else [])
        for p in NOTEBOOKS
    ],
)
def test_notebook_executes(path, quick_environment):
    notebook = nbformat.read(path, as_version=4)
    client = nbclient.NotebookClient(
        notebook,
        kernel_name="python3",
        timeout=600,
        startup_timeout=120,
        resources={"metadata": {"path": str(path.parent)}},
    )
    client.execute()  # raises CellExecutionError, with the cell and traceback, on any error
    errors = [
        output
        for cell in notebook.cells
        if cell.cell_type == "code"
        for output in cell.get("outputs", [])
        if output.get("output_type") == "error"
    ]
    assert not errors
