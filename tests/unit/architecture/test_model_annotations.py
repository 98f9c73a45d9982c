"""No module of the engine that defines a pydantic model imports ``annotations`` from
``__future__``.

With that import every annotation is a string, and pydantic evaluates each field's
string when the model class is created (``_typing_extra.try_eval_type``), also under
``defer_build``: on the message function's cold import (CPython 3.13) 470 such
evaluations cost 12-15 ms of ~514 ms, and a 9-field deferred model took ~880 us to
create from strings against ~560 us from the objects a plain class body evaluates.
So a model's module leaves annotations eager: a name imported only under
``TYPE_CHECKING``, or a class defined further down, is quoted where it is annotated.

Every module of the package imports in the dev venv (the optional clients, redis and
psycopg, are dev dependencies), so none is skipped.
"""

from __future__ import annotations
import __future__

import importlib
import importlib.util
import pkgutil
import sys
from typing import TYPE_CHECKING

from pydantic import BaseModel

import signoff

if TYPE_CHECKING:
    from collections.abc import Iterable
    from pathlib import Path
    from types import ModuleType

    import pytest


def _models() -> set[type[BaseModel]]:
    """Every pydantic model class alive now (a model made in a function included)."""
    found: set[type[BaseModel]] = set()
    waiting: list[type[BaseModel]] = [BaseModel]
    while waiting:
        for model in waiting.pop().__subclasses__():
            if model not in found:
                found.add(model)
                waiting.append(model)
    return found


def deferring_model_modules(modules: Iterable[ModuleType]) -> list[str]:
    """The names of those of ``modules`` that define a pydantic model class (one whose
    ``__module__`` is the module) while their annotations are strings."""
    defining = {model.__module__ for model in _models()}
    return sorted(
        module.__name__
        for module in modules
        if module.__dict__.get("annotations") is __future__.annotations
        and module.__name__ in defining
    )


def _engine_modules() -> list[ModuleType]:
    return [
        importlib.import_module(info.name)
        for info in pkgutil.walk_packages(signoff.__path__, prefix="signoff.")
    ]


def test_no_engine_module_defining_a_model_defers_its_annotations() -> None:
    modules = _engine_modules()
    assert len(modules) > 100
    defining = {model.__module__ for model in _models()}
    assert len(defining & {module.__name__ for module in modules}) > 30
    assert deferring_model_modules(modules) == []


def _load(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str, source: str) -> ModuleType:
    path = tmp_path / f"{name}.py"
    path.write_text(source)
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, name, module)
    spec.loader.exec_module(module)
    return module


def test_the_check_names_a_model_module_with_the_future_import(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    model = "from pydantic import BaseModel\n\n\nclass Item(BaseModel):\n    name: str\n"
    deferred = _load(
        tmp_path, monkeypatch, "deferred_models", "from __future__ import annotations\n" + model
    )
    eager = _load(tmp_path, monkeypatch, "eager_models", model)
    # the future import without a model is nothing pydantic evaluates
    no_model = _load(
        tmp_path,
        monkeypatch,
        "no_models",
        "from __future__ import annotations\n\nfrom pydantic import BaseModel\n\n"
        "def kind() -> type[BaseModel]:\n    return BaseModel\n",
    )
    assert deferring_model_modules([deferred, eager, no_model]) == ["deferred_models"]
