"""Every public function's docstring example runs, with its output, as a doctest.

The checked functions are the callables a public module of ``pacbound`` (the top level and
its faces) lists in its ``__all__``, wherever in pacbound they are defined, and those a private
module of ``pacbound._src`` defines itself and lists in its ``__all__`` (without one: every
name it does not underscore; the command's module is checked by running the command). Result
and info ``NamedTuple`` classes are data, not functions. Each must have an example (a ``>>>``
line) and no example may be skipped. The examples run in float32, JAX's default and our
users' (the rest of the suite runs with ``jax_enable_x64`` on), each module's examples in a
copy of its namespace.
"""

import doctest
import importlib
import inspect
import pkgutil

import jax
import pytest

import pacbound

OPTIONS = doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE
COMMAND = "pacbound._src.apps.cli"  # the command's parts: test_cli runs them as users do


def _public_modules() -> list[str]:
    names = [pacbound.__name__]
    for info in pkgutil.walk_packages(pacbound.__path__, pacbound.__name__ + "."):
        if info.name.rsplit(".", 1)[-1] != "__main__":
            names.append(info.name)
    return sorted(names)


MODULES = _public_modules()


def _public_functions(module) -> dict[str, object]:
    functions = {}
    private = "._src" in module.__name__  # its own names; a face's re-exports are public
    names = getattr(module, "__all__", None)
    if names is None and module.__name__ != COMMAND:  # without a list: every plain name
        names = [name for name in vars(module) if not name.startswith("_")]
    for name in names or ():
        obj = getattr(module, name)
        if inspect.isclass(obj) or not callable(obj):
            continue
        target = inspect.unwrap(obj)
        home = getattr(target, "__module__", None) or ""
        if home == module.__name__ or (not private and home.startswith("pacbound")):
            functions[name] = target
    return functions


def _docstring(function) -> str:
    return inspect.getdoc(function) or ""


def test_every_public_function_has_an_example():
    missing = [
        f"{module_name}.{name}"
        for module_name in MODULES
        for name, function in _public_functions(importlib.import_module(module_name)).items()
        if ">>>" not in _docstring(function)
    ]
    assert missing == [], f"{len(missing)} public functions without an example:\n" + "\n".join(
        missing
    )


def test_no_example_is_skipped():
    skipped = []
    for module_name in MODULES:
        module = importlib.import_module(module_name)
        for test in doctest.DocTestFinder().find(module, module_name):
            if any(example.options.get(doctest.SKIP) for example in test.examples):
                skipped.append(test.name)
    assert skipped == []


@pytest.mark.parametrize("module_name", MODULES)
def test_docstring_examples_run(module_name):
    module = importlib.import_module(module_name)
    finder = doctest.DocTestFinder(exclude_empty=True)
    runner = doctest.DocTestRunner(optionflags=OPTIONS)
    tests = finder.find(module, module_name)  # each in a copy of the module's namespace
    if not tests:
        pytest.skip("no examples")
    report = []
    with jax.enable_x64(False):
        for test in tests:
            runner.run(test, out=report.append)
    results = runner.summarize(verbose=False)
    assert results.failed == 0, "".join(report)
