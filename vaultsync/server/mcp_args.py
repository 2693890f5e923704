"""One line for each argument an MCP tool refuses, saying what is allowed, instead of the validator's report.

The SDK checks a call's arguments against the tool's input schema and answers a mistake with pydantic's own
text: several lines per field, the union's every branch, a link to pydantic's site. An agent corrects a call
faster from ``recall: kind: got 'fact'; expected a list of: fact, summary, memory, daily`` than from that, so
the server reads the same schema it publishes and says, per field, what it takes. An argument the tool does
not have is named too, where the validator would silently drop it.

The same class lists a resource only while it can be read (``listed_when``): today's daily note appears once
the agent has written one.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from pydantic import ValidationError

__all__ = ["CheckedServer", "expected"]


class CheckedServer(MCPServer):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.listed_when: dict[str, Callable[[], bool]] = {}  # resource URI -> whether it exists now

    async def list_resources(self) -> Any:
        shown = await super().list_resources()
        return [r for r in shown if self.listed_when.get(str(r.uri), lambda: True)()]

    async def call_tool(self, name: str, arguments: dict[str, Any], context: Any = None) -> Any:
        schema = next((t.input_schema for t in await self.list_tools() if t.name == name), None)
        if schema is not None:
            known = schema.get("properties", {})
            unknown = sorted(set(arguments) - set(known))
            if unknown:
                raise ToolError(
                    f"{name}: no argument {', '.join(map(repr, unknown))}; it takes {', '.join(known) or 'none'}"
                )
        try:
            return await super().call_tool(name, arguments, context)
        except ToolError as exc:
            cause = exc.__cause__
            if not isinstance(cause, ValidationError) or schema is None:
                raise
            raise ToolError(f"{name}: {_one_line(cause, schema, arguments)}") from cause


def _one_line(error: ValidationError, schema: dict[str, Any], arguments: dict[str, Any]) -> str:
    said: dict[str, str] = {}
    for item in error.errors():
        field = str(item["loc"][0]) if item["loc"] else "arguments"
        if field in said:
            continue
        prop = schema.get("properties", {}).get(field, {})
        if item["type"] == "missing":
            said[field] = f"{field}: missing; expected {expected(prop)}"
        else:
            said[field] = f"{field}: got {_shown(arguments.get(field))}; expected {expected(prop)}"
    return "; ".join(said.values())


def _shown(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False, default=str)
    return text if len(text) <= 60 else text[:57] + "..."


def expected(prop: dict[str, Any]) -> str:
    """What a JSON schema property allows, in a few words."""
    options = [p for p in prop.get("anyOf", [prop]) if p.get("type") != "null"]
    said = " or ".join(_one(p) for p in options) or "a value"
    if len(options) < len(prop.get("anyOf", [])):
        said += " (or null)"
    return said


def _one(prop: dict[str, Any]) -> str:
    if "enum" in prop:
        return "one of: " + ", ".join(map(str, prop["enum"]))
    if "const" in prop:
        return repr(prop["const"])
    kind = prop.get("type")
    if kind == "array":
        items = prop.get("items", {})
        inner = ", ".join(map(str, items["enum"])) if "enum" in items else _one(items)
        return f"a list of: {inner}"
    if kind == "integer":
        low, high = prop.get("minimum"), prop.get("maximum")
        return f"a whole number from {low} to {high}" if low is not None and high is not None else "a whole number"
    if kind == "boolean":
        return "true or false"
    if kind == "string":
        return "non-empty text" if prop.get("minLength") else "text"
    return str(kind or "a value")
