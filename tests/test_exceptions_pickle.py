"""Every exception class defined in `pruner` and `builder`, found by walking the packages (so that
a new one cannot be missed), survives a pickle round trip with its message and attributes: a
process pool rebuilds a worker's exception in its parent from the pickle, and a class that cannot
be rebuilt there breaks the pool instead of reporting the error. Instances are made by hypothesis:
from a message when the class takes one, else from the type hints of its `__init__`."""

from __future__ import annotations

import importlib
import inspect
import pickle
import pkgutil
from types import ModuleType

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import builder
import pruner


def defined_exceptions(*packages: ModuleType) -> list[type[BaseException]]:
    """The exception classes defined in the packages' modules (not those they import)."""
    found: dict[str, type[BaseException]] = {}
    for package in packages:
        for info in pkgutil.walk_packages(package.__path__, f"{package.__name__}."):
            module = importlib.import_module(info.name)
            for value in vars(module).values():
                defined_here = inspect.isclass(value) and value.__module__ == module.__name__
                if defined_here and issubclass(value, BaseException):
                    found[f"{value.__module__}.{value.__qualname__}"] = value
    return [found[name] for name in sorted(found)]


EXCEPTIONS = defined_exceptions(pruner, builder)


def instances(cls: type[BaseException]) -> st.SearchStrategy[BaseException]:
    """Instances of `cls`: from a message when its `__init__` is Python's own, else built from the
    type hints of its `__init__` (hypothesis fills every parameter it can infer)."""
    init_owner = next(c for c in cls.__mro__ if "__init__" in vars(c))
    if init_owner.__module__ == "builtins":
        return st.builds(cls, st.text())
    return st.builds(cls)


def test_the_walk_finds_the_exceptions() -> None:
    names = {cls.__name__ for cls in EXCEPTIONS}
    assert {"LakepruneError", "ServiceError", "LiteralError", "StorageUnreachableError"} <= names
    assert len(EXCEPTIONS) > 40


@pytest.mark.parametrize("cls", EXCEPTIONS, ids=lambda cls: f"{cls.__module__}.{cls.__qualname__}")
@settings(deadline=None, max_examples=25)
@given(data=st.data())
def test_every_exception_pickles(cls: type[BaseException], data: st.DataObject) -> None:
    error = data.draw(instances(cls))
    copy = pickle.loads(pickle.dumps(error))
    assert type(copy) is cls
    assert copy.args == error.args
    assert str(copy) == str(error)
    assert vars(copy) == vars(error)
