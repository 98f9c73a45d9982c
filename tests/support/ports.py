"""Whether an adapter is a port: each method the port declares, with its parameters."""

from __future__ import annotations

import inspect


def mismatches(adapter: object, port: type) -> list[str]:
    """The port's methods (its bases' included) that ``adapter`` lacks or spells
    otherwise: another parameter name, kind or default."""
    wrong = []
    for klass in port.__mro__:
        if not getattr(klass, "_is_protocol", False):
            continue
        for name, method in vars(klass).items():
            if not inspect.isfunction(method) or name.startswith("_"):
                continue
            wanted = list(inspect.signature(method).parameters.values())[1:]
            given = getattr(adapter, name, None)
            if given is None:
                wrong.append(f"{port.__name__}.{name}: missing")
                continue
            spelled = list(inspect.signature(given).parameters.values())
            if [(p.name, p.kind, p.default) for p in wanted] != [
                (p.name, p.kind, p.default) for p in spelled
            ]:
                wrong.append(f"{port.__name__}.{name}: {inspect.signature(given)}")
    return wrong
