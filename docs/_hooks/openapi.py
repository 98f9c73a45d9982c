"""A mkdocs hook: the HTTP API reference page, drawn from ``openapi.json`` at build time.

``docs/http-api-reference.md`` holds the marker ``<!-- openapi.json -->``; each build
replaces it with every route of the document (grouped by tag, in the document's order:
parameters, request body, responses) and every schema of ``components`` (fields, types,
required, constraints). Plain Markdown, no script and nothing fetched: the page is the
checked-in ``openapi.json`` (``signoff openapi > openapi.json``; a test fails when it
drifts from the code), so the site cannot show another API than the one deployed.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

PAGE = "http-api-reference.md"
MARKER = "<!-- openapi.json -->"
DOCUMENT = Path(__file__).resolve().parents[2] / "openapi.json"
_METHODS = ("get", "post", "put", "patch", "delete")
# The schemas the document defines: a reference to one is a link, to another its name.
_DEFINED: set[str] = set()


def on_page_markdown(markdown: str, page: Any, config: Any, files: Any) -> str:
    if page.file.src_uri != PAGE:
        return markdown
    if MARKER not in markdown:
        raise ValueError(f"{PAGE} lost its marker {MARKER}")
    spec = json.loads(DOCUMENT.read_text(encoding="utf-8"))
    return markdown.replace(MARKER, render(spec))


def on_serve(server: Any, config: Any, builder: Any) -> Any:
    server.watch(str(DOCUMENT))  # `mkdocs serve` redraws the page when the document changes
    return server


def render(spec: dict[str, Any]) -> str:
    """The routes, then the schemas, as Markdown."""
    _DEFINED.clear()
    _DEFINED.update(spec.get("components", {}).get("schemas", {}))
    out = [
        f"Generated from `openapi.json` (OpenAPI {spec['openapi']}, "
        f"{spec['info']['title']} {spec['info']['version']}).",
        "",
        _text(spec["info"].get("description", "")),
        "",
    ]
    operations = [
        (path, method, item[method])
        for path, item in spec["paths"].items()
        for method in _METHODS
        if method in item
    ]
    tags: list[str] = []
    for _, _, operation in operations:
        for tag in operation.get("tags", ["other"]):
            if tag not in tags:
                tags.append(tag)
    out += ["## Routes", "", "| method | path | what |", "|---|---|---|"]
    for path, method, operation in operations:
        out.append(
            f"| `{method.upper()}` | [`{path}`](#{_route_id(method, path)}) "
            f"| {_cell(operation.get('summary', ''))} |"
        )
    out.append("")
    for tag in tags:
        out += [f"## {tag.capitalize()} {{ #tag-{tag} }}", ""]
        for path, method, operation in operations:
            if tag in operation.get("tags", ["other"]):
                out += _operation(path, method, operation)
    out += ["## Schemas", ""]
    for name, schema in spec.get("components", {}).get("schemas", {}).items():
        out += _schema(name, schema)
    return "\n".join(out) + "\n"


def _operation(path: str, method: str, operation: dict[str, Any]) -> list[str]:
    out = [f"### `{method.upper()} {path}` {{ #{_route_id(method, path)} }}", ""]
    if operation.get("summary"):
        out += [f"**{_text(operation['summary'])}.**", ""]
    if operation.get("description"):
        out += [_text(operation["description"]), ""]
    parameters = operation.get("parameters", [])
    if parameters:
        out += ["| parameter | in | type | required | what |", "|---|---|---|---|---|"]
        for parameter in parameters:
            what = parameter.get("description") or _constraints(parameter.get("schema", {}))
            out.append(
                f"| `{parameter['name']}` | {parameter['in']} "
                f"| {_type(parameter.get('schema', {}))} "
                f"| {'yes' if parameter.get('required') else 'no'} "
                f"| {_cell(what)} |"
            )
        out.append("")
    body = operation.get("requestBody")
    if body:
        required = "required" if body.get("required") else "optional"
        out += [f"Request body ({required}):", ""]
        for media, content in body.get("content", {}).items():
            out.append(f"- `{media}`: {_type(content.get('schema', {}))}")
            out += _inline_fields(content.get("schema", {}))
        out.append("")
    out += ["| status | what | body |", "|---|---|---|"]
    for status, response in sorted(operation.get("responses", {}).items()):
        bodies = ", ".join(
            f"`{media}` {_type(content.get('schema', {}))}".strip()
            for media, content in response.get("content", {}).items()
        )
        out.append(f"| {status} | {_cell(response.get('description', ''))} | {_cell(bodies)} |")
    return [*out, ""]


def _inline_fields(schema: dict[str, Any]) -> list[str]:
    """The fields of a body written inline (a form), one nested item each."""
    if "$ref" in schema or not schema.get("properties"):
        return []
    out = []
    for field, sub in schema["properties"].items():
        note = _constraints(sub)
        out.append(f"    - `{field}`: {_type(sub)}" + (f" ({note})" if note else ""))
    for pattern, sub in schema.get("patternProperties", {}).items():
        out.append(f"    - fields matching `{pattern}`: {_type(sub)}")
    return out


def _schema(name: str, schema: dict[str, Any]) -> list[str]:
    out = [f"### {name} {{ #{_schema_id(name)} }}", ""]
    if schema.get("description"):
        out += [_text(schema["description"]), ""]
    properties = schema.get("properties", {})
    if not properties:
        return [*out, f"Type: {_type(schema)}.", ""]
    required = set(schema.get("required", []))
    out += ["| field | type | required | what |", "|---|---|---|---|"]
    for field, sub in properties.items():
        what = " ".join(part for part in (sub.get("description", ""), _constraints(sub)) if part)
        out.append(
            f"| `{field}` | {_type(sub)} | {'yes' if field in required else 'no'} | {_cell(what)} |"
        )
    return [*out, ""]


def _type(schema: dict[str, Any]) -> str:
    """A schema in a few words, a reference as a link to its schema."""
    if "$ref" in schema:
        name = schema["$ref"].rsplit("/", 1)[1]
        return f"[{name}](#{_schema_id(name)})" if name in _DEFINED else f"`{name}`"
    for key in ("anyOf", "oneOf", "allOf"):
        if key in schema:
            parts = [_type(sub) for sub in schema[key]]
            joiner = " and " if key == "allOf" else " or "
            return joiner.join(parts)
    if "const" in schema:
        return f"`{json.dumps(schema['const'])}`"
    if "enum" in schema:
        return "one of " + ", ".join(f"`{json.dumps(value)}`" for value in schema["enum"])
    kind = schema.get("type")
    if isinstance(kind, list):
        return " or ".join(_type({**schema, "type": k}) for k in kind)
    if kind == "array":
        return f"array of {_type(schema.get('items', {}))}"
    if kind == "object":
        extra = schema.get("additionalProperties")
        if isinstance(extra, dict) and extra:
            return f"object of {_type(extra)}"
        return "object"
    if kind is None:
        return "any"
    if schema.get("format"):
        return f"{kind} ({schema['format']})"
    return str(kind)


def _constraints(schema: dict[str, Any]) -> str:
    words = {
        "minLength": "at least {} characters",
        "maxLength": "at most {} characters",
        "minimum": "≥ {}",
        "maximum": "≤ {}",
        "exclusiveMinimum": "> {}",
        "exclusiveMaximum": "< {}",
        "pattern": "matches `{}`",
        "minItems": "at least {} items",
        "maxItems": "at most {} items",
        "default": "default `{}`",
    }
    found = []
    for key, text in words.items():
        if key in schema:
            value = json.dumps(schema[key]) if key == "default" else schema[key]
            found.append(text.format(value))
    return "; ".join(found)


def _route_id(method: str, path: str) -> str:
    return "route-" + method + "-" + (re.sub(r"[^a-z0-9]+", "-", path.lower()).strip("-") or "root")


def _schema_id(name: str) -> str:
    return "schema-" + name.lower()


def _text(text: str) -> str:
    """One line; a ``<`` outside code shown as written, never read as an HTML tag."""
    parts = " ".join(text.split()).split("`")
    return "`".join(part if odd else part.replace("<", "&lt;") for odd, part in _alternate(parts))


def _alternate(parts: list[str]) -> list[tuple[bool, str]]:
    return [(index % 2 == 1, part) for index, part in enumerate(parts)]


def _cell(text: str) -> str:
    return _text(text).replace("|", "\\|")
