"""Every pydantic model of the engine builds its validator on first use, not at import.

A cold start imports every module of its function's path; building each model's
schema there costs milliseconds per model, also for the many a first invocation
never validates (``bench/cold_start.py``). ``defer_build`` leaves it to first use.
"""

from __future__ import annotations

import importlib
import pkgutil

from pydantic import BaseModel

import signoff
from signoff import events


def _engine_models() -> list[type[BaseModel]]:
    for module in pkgutil.walk_packages(signoff.__path__, "signoff."):
        importlib.import_module(module.name)
    found: list[type[BaseModel]] = []
    waiting: list[type[BaseModel]] = [BaseModel]
    while waiting:
        for model in waiting.pop().__subclasses__():
            waiting.append(model)
            if model.__module__.startswith("signoff."):
                found.append(model)
    return found


def test_every_engine_model_defers_its_build() -> None:
    models = _engine_models()
    assert len(models) > 50
    eager = sorted(
        f"{model.__module__}.{model.__qualname__}"
        for model in models
        if not model.model_config.get("defer_build")
    )
    assert eager == []


def test_the_loop_event_adapter_defers_its_build_and_still_validates() -> None:
    adapter = events._ADAPTER
    assert adapter._config is not None and adapter._config.get("defer_build")
    event = events.parse({"type": "loop:done", "text": "Done."})
    assert event.type == "loop:done"
