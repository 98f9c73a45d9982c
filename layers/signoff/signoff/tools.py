"""Tools: plain typed functions, their JSON schemas, and their execution context.

``@tool`` derives a tool's argument schema from its signature with pydantic, so
the schema the model sees and the validation applied before a call are the same
thing. A parameter annotated ``ToolContext`` is filled in by the engine and left
out of the schema.
"""

import inspect
import json
from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING, Any, get_type_hints, overload

from pydantic import BaseModel, ConfigDict, ValidationError, create_model

from signoff.messages import ToolSpec

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping

__all__ = ["Tool", "ToolArgumentsInvalid", "ToolContext", "tool"]


@dataclass(frozen=True, kw_only=True)
class ToolContext:
    """What a running tool may know about the call that runs it."""

    agent: str
    tenant: str
    environment: str
    session_id: str
    run_id: str
    call_id: str

    @property
    def idempotency_key(self) -> str:
        """Stable across re-runs of the same call, for side-effecting tools."""
        return f"{self.run_id}:{self.call_id}"


class ToolArgumentsInvalid(ValueError):
    """The model's arguments do not match the tool's schema."""


@dataclass(frozen=True, kw_only=True)
class Tool:
    """A callable the model may ask for, with its schema and its safety marks.

    ``safe`` tools have no side effects and may run concurrently with each other;
    ``idempotent`` tools may be run again after a crash with the same key;
    ``editable`` tools take an approver's changes to their arguments
    (``signoff.approver.edits``): approving with changes runs them with the changed ones.
    ``summary`` is the one line an approver reads first, a ``str.format`` template
    over the arguments (``"Refund {amount} {currency} on order {orderId}"``,
    filled by ``signoff.approver.card.summarize``, which falls back to the arguments).
    """

    name: str
    description: str
    function: "Callable[..., Any]"
    arguments: type[BaseModel]
    context_param: str | None = None
    safe: bool = False
    idempotent: bool = False
    summary: str | None = None
    editable: bool = False

    @property
    def parameters(self) -> dict[str, Any]:
        """The JSON Schema of the arguments."""
        schema = self.arguments.model_json_schema()
        schema.pop("title", None)
        return schema

    @cached_property
    def spec(self) -> ToolSpec:
        """What the model is told of the tool: built once per tool, not per engine (a
        fresh process's first turn, or a resume, would otherwise make every schema).
        Its parts are typed already, so it is not validated (nor its validator built)."""
        return ToolSpec.model_construct(
            name=self.name, description=self.description, parameters=self.parameters
        )

    def validate(self, args: "Mapping[str, Any]") -> dict[str, Any]:
        """Arguments coerced to the signature's types.

        Raises:
            ToolArgumentsInvalid: with a message the model can act on.
        """
        try:
            model = self.arguments.model_validate(dict(args))
        except ValidationError as exc:
            problems = "; ".join(
                f"{'.'.join(str(p) for p in err['loc']) or '(arguments)'}: {err['msg']}"
                for err in exc.errors(include_url=False)
            )
            raise ToolArgumentsInvalid(
                f"invalid arguments for {self.name}: {problems}. Expected schema: "
                f"{json.dumps(self.parameters, separators=(',', ':'))}"
            ) from exc
        return {name: getattr(model, name) for name in type(model).model_fields}

    def call(self, args: "Mapping[str, Any]", context: ToolContext) -> Any:
        """Run the tool on already-validated arguments."""
        kwargs = dict(args)
        if self.context_param:
            kwargs[self.context_param] = context
        return self.function(**kwargs)


@overload
def tool(function: "Callable[..., Any]", /) -> Tool: ...


@overload
def tool(
    *,
    safe: bool = False,
    idempotent: bool = False,
    name: str | None = None,
    summary: str | None = None,
    editable: bool = False,
) -> "Callable[[Callable[..., Any]], Tool]": ...


def tool(
    function: "Callable[..., Any] | None" = None,
    /,
    *,
    safe: bool = False,
    idempotent: bool = False,
    name: str | None = None,
    summary: str | None = None,
    editable: bool = False,
) -> "Tool | Callable[[Callable[..., Any]], Tool]":
    """Turn a typed function into a ``Tool``; usable bare or with options."""

    def wrap(fn: "Callable[..., Any]") -> Tool:
        return _build(
            fn, safe=safe, idempotent=idempotent, name=name, summary=summary, editable=editable
        )

    return wrap(function) if function is not None else wrap


def _build(
    fn: "Callable[..., Any]",
    *,
    safe: bool,
    idempotent: bool,
    name: str | None,
    summary: str | None = None,
    editable: bool = False,
) -> Tool:
    hints = get_type_hints(fn, include_extras=True)
    fields: dict[str, Any] = {}
    context_param: str | None = None
    for param in inspect.signature(fn).parameters.values():
        annotation = hints.get(param.name, Any)
        if annotation is ToolContext:
            context_param = param.name
            continue
        if param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD):
            raise TypeError(f"tool {fn.__name__}: *args/**kwargs cannot be described to a model")
        default = ... if param.default is inspect.Parameter.empty else param.default
        fields[param.name] = (annotation, default)
    arguments = create_model(
        f"{fn.__name__}_arguments",
        __config__=ConfigDict(defer_build=True, extra="forbid"),
        **fields,
    )
    doc = inspect.getdoc(fn) or ""
    return Tool(
        name=name or fn.__name__,
        description=doc.strip() or fn.__name__.replace("_", " "),
        function=fn,
        arguments=arguments,
        context_param=context_param,
        safe=safe,
        idempotent=idempotent,
        summary=summary,
        editable=editable,
    )
