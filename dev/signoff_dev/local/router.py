"""The HTTP API's routes, derived from the functions' ``HttpApi`` events in ``template.yaml``.

Nothing here lists a route by hand: a route added to the template is served
locally with no other edit. Matching follows API Gateway's HTTP API: a route
key is ``METHOD /path`` with ``{param}`` segments (``{proxy+}`` takes the rest
of the path), ``ANY`` takes every method, and when several routes match the
most specific wins — literal segments before parameters, a greedy parameter last.
An event with neither ``Path`` nor ``Method`` is the ``$default`` route: it takes
every request that no other route matches.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Final
from urllib.parse import unquote

if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping

    from signoff_dev.local.template import FunctionSpec

__all__ = ["DEFAULT_ROUTE", "Route", "RouteTable", "routes_from"]

_PARAMETER = re.compile(r"^\{([A-Za-z0-9_.-]+)(\+?)\}$")
DEFAULT_ROUTE: Final = "$default"


@dataclass(frozen=True)
class Route:
    """One ``HttpApi`` event: the function it invokes, its method and its path template."""

    function: str  # the function's logical id
    method: str  # upper case; ANY matches every method
    path: str  # e.g. /agents/{name}/messages
    _pattern: re.Pattern[str] = field(init=False, repr=False, compare=False)
    _names: tuple[str, ...] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if self.path == DEFAULT_ROUTE:
            object.__setattr__(self, "_pattern", re.compile("^/.*$", re.DOTALL))
            object.__setattr__(self, "_names", ())
            return
        parts, names = [], []
        for segment in self.path.strip("/").split("/"):
            parameter = _PARAMETER.match(segment)
            if parameter is None:
                parts.append(re.escape(segment))
                continue
            names.append(parameter.group(1))
            # {name+} is greedy: it takes the rest of the path, slashes included
            any_text = ".+" if parameter.group(2) else "[^/]+"
            parts.append(f"(?P<{_group(parameter.group(1))}>{any_text})")
        # a frozen dataclass sets its derived fields through object.__setattr__
        object.__setattr__(self, "_pattern", re.compile("^/" + "/".join(parts) + "$"))
        object.__setattr__(self, "_names", tuple(names))

    @property
    def route_key(self) -> str:
        """``METHOD /path`` (or ``$default``), as API Gateway names the route in the event."""
        return DEFAULT_ROUTE if self.path == DEFAULT_ROUTE else f"{self.method} {self.path}"

    def parameters(self, method: str, path: str) -> dict[str, str] | None:
        """The path parameters when ``method`` and ``path`` match this route, else None."""
        if self.method not in ("ANY", method.upper()):
            return None
        found = self._pattern.match(path)
        if found is None:
            return None
        return {name: unquote(found.group(_group(name))) for name in self._names}

    @property
    def specificity(self) -> tuple[int, int, int]:
        """Sorts the most specific route first, as API Gateway picks among matches."""
        if self.path == DEFAULT_ROUTE:
            return (2, 0, 1)  # after every other route
        segments = self.path.strip("/").split("/")
        greedy = any(s.endswith("+}") for s in segments)
        literal = len(segments) - len(self._names)
        # sorted ascending: non-greedy first, then more literal segments, then ANY last
        return (int(greedy), -literal, int(self.method == "ANY"))


def _group(name: str) -> str:
    """A regex group name for a path parameter (which may hold '-' or '.')."""
    return "p_" + re.sub(r"[^A-Za-z0-9_]", "_", name)


def routes_from(functions: Mapping[str, FunctionSpec]) -> list[Route]:
    """Every ``HttpApi`` event of every function, as a route, sorted by route key."""
    routes = [
        Route(
            function=logical_id,
            method=str(event["Properties"].get("Method", "ANY")).upper(),
            path=str(event["Properties"].get("Path", DEFAULT_ROUTE)),
        )
        for logical_id, spec in functions.items()
        for event in spec.events.values()
        if event["Type"] == "HttpApi"
    ]
    return sorted(routes, key=lambda route: (route.path, route.method))


class RouteTable:
    """Finds the route a request takes, as API Gateway would."""

    def __init__(self, routes: Iterable[Route]) -> None:
        self.routes = sorted(routes, key=lambda route: route.specificity)

    def match(self, method: str, path: str) -> tuple[Route, dict[str, str]] | None:
        """The most specific route for ``method`` and ``path`` and its parameters, or None."""
        for route in self.routes:
            parameters = route.parameters(method, path)
            if parameters is not None:
                return route, parameters
        return None
