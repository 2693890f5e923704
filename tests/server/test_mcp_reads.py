"""``vaultsync mcp`` as an agent's client meets it, over stdio with the SDK's own client: the server's version,
each tool's annotations, the reads (entities with counts, a daily note, MEMORY.md's sections), editing a fact's
text, the compact entity, the resources it lists and reads, its prompt, and a one-line message for every
argument the schema refuses."""

from __future__ import annotations

import asyncio
import json
import os
import sys
from datetime import date
from typing import Any

from helpers.twoway import SARAH, Env
from mcp import Client
from mcp.client.stdio import StdioServerParameters

from vaultsync import __version__

READ_ONLY = {"get_entity", "recall", "history", "status", "list_entities", "read_daily_note", "read_memory", "context"}


def payload(result: Any) -> Any:
    assert not result.is_error, result.content
    if result.structured_content is not None:
        data = result.structured_content
        return data.get("result", data) if set(data) == {"result"} else data
    return json.loads(result.content[0].text)


def error(result: Any) -> str:
    assert result.is_error, result.content
    text = str(result.content[0].text)
    assert "\n" not in text and "pydantic" not in text and "validation error" not in text.lower(), text
    return text


def _params(env: Env) -> StdioServerParameters:
    return StdioServerParameters(
        command=sys.executable,
        args=["-m", "vaultsync.cli", "mcp", "--config", str(env.config_path)],
        env={k: v for k, v in os.environ.items() if k.startswith(("GIT_", "HOME", "XDG_", "PATH", "PYTHON"))},
    )


async def session(env: Env) -> None:
    async with Client(_params(env)) as client:
        assert client.server_info is not None and client.server_info.version == __version__

        tools = {tool.name: tool for tool in (await client.list_tools()).tools}
        assert {"list_entities", "edit_fact", "read_daily_note", "read_memory"} <= set(tools)
        for name, tool in tools.items():
            hints = tool.annotations
            assert hints is not None and hints.read_only_hint is (name in READ_ONLY), name
            assert tool.description and tool.input_schema["type"] == "object", name
        assert tools["forget"].annotations.destructive_hint is True
        assert tools["remember"].annotations.destructive_hint is False
        assert tools["edit_fact"].annotations.idempotent_hint is True
        assert set(tools["edit_fact"].input_schema["required"]) == {"id", "text"}
        assert tools["list_entities"].input_schema["properties"]["para"]["anyOf"][0]["enum"] == [
            "projects",
            "areas",
            "resources",
            "archives",
        ]

        listed = payload(await client.call_tool("list_entities", {}))["entities"]
        sarah = next(e for e in listed if e["entity"] == SARAH)
        held = env.facts(SARAH)
        assert sarah["kind"] == "people" and sarah["para"] == "areas" and sarah["folder"] == "2 Areas"
        assert sarah["facts"]["total"] == len(held)
        assert sarah["facts"]["active"] == sum(f.get("status", "active") == "active" for f in held)
        projects = payload(await client.call_tool("list_entities", {"para": "projects"}))["entities"]
        assert projects and all(e["para"] == "projects" for e in projects)

        day = payload(await client.call_tool("read_daily_note", {"day": "2026-11-30"}))
        assert day["path"] == "memory/2026-11-30.md"
        assert day["text"] == (env.workspace / "memory/2026-11-30.md").read_text(encoding="utf-8")
        assert "2026-11-31" in error(await client.call_tool("read_daily_note", {"day": "2026-11-31"}))
        assert "no daily note" in error(await client.call_tool("read_daily_note", {"day": "1999-01-01"}))

        memory = payload(await client.call_tool("read_memory", {}))
        titles = [s["title"] for s in memory["sections"]]
        assert "Preferences" in titles and "Infrastructure" in titles
        infra = payload(await client.call_tool("read_memory", {"section": "infra"}))["sections"]
        assert [s["title"] for s in infra] == ["Infrastructure"] and infra[0]["priority"] == 0
        assert infra[0]["text"].startswith("## Infrastructure [P0]") and "hearth" in infra[0]["text"]
        assert "sections: " in error(await client.call_tool("read_memory", {"section": "no such title"}))

        first = held[0]["id"]
        edited = payload(await client.call_tool("edit_fact", {"id": first, "text": "Sarah Chen leads the pilot"}))
        assert edited["fact"]["record"]["fact"] == "Sarah Chen leads the pilot"
        assert env.fact(SARAH, first)["fact"] == "Sarah Chen leads the pilot"

        compact = payload(await client.call_tool("get_entity", {"entity": SARAH}))
        full = payload(await client.call_tool("get_entity", {"entity": SARAH, "full": True}))
        assert compact["active"][0] == {k: v for k, v in compact["active"][0].items() if k != "etag"}
        assert "note" not in compact["active"][0] and "etag" in full["active"][0]
        assert {f["id"] for f in compact["active"]} == {f["id"] for f in full["active"]}
        facts = ("active", "superseded", "other")
        assert len(json.dumps([compact[k] for k in facts])) * 2 < len(json.dumps([full[k] for k in facts]))

        told = error(await client.call_tool("recall", {"query": "tea", "kind": "fact"}))
        assert told.startswith('recall: kind: got "fact"; expected a list of: fact, summary, memory, daily'), told
        assert "limit" in error(await client.call_tool("recall", {"query": "tea", "limit": 0}))
        assert "from 1 to 1000" in error(await client.call_tool("recall", {"query": "tea", "limit": "many"}))
        assert "query: missing" in error(await client.call_tool("recall", {}))
        assert "no argument 'q'" in error(await client.call_tool("recall", {"q": "tea"}))
        assert "one of: active, all" in error(await client.call_tool("recall", {"query": "tea", "status": "old"}))
        assert "true or false" in error(await client.call_tool("get_entity", {"entity": SARAH, "full": "maybe"}))

        resources = {str(r.uri): r for r in (await client.list_resources()).resources}
        assert set(resources) == {"vaultsync://memory"}  # no daily note today yet: not listed
        today = env.workspace / "memory" / f"{date.today().isoformat()}.md"
        today.write_text("# Today\n\n- met Sarah\n", encoding="utf-8")
        resources = {str(r.uri): r for r in (await client.list_resources()).resources}
        assert set(resources) == {"vaultsync://memory", "vaultsync://daily/today"}
        assert (await client.read_resource("vaultsync://daily/today")).contents[0].text == "# Today\n\n- met Sarah\n"
        read = await client.read_resource("vaultsync://memory")
        assert read.contents[0].text == (env.workspace / "MEMORY.md").read_text(encoding="utf-8")
        templates = (await client.list_resource_templates()).resource_templates
        assert [t.uri_template for t in templates] == ["vaultsync://entity/{+entity}"]
        entity = json.loads((await client.read_resource(f"vaultsync://entity/{SARAH}")).contents[0].text)
        assert entity["entity"] == SARAH and entity["active"]

        prompts = (await client.list_prompts()).prompts
        assert [p.name for p in prompts] == ["about"]
        about = await client.get_prompt("about", {"entity": SARAH})
        assert "Sarah Chen leads the pilot" in about.messages[0].content.text


def test_the_tools_an_agent_needs(env: Env) -> None:
    asyncio.run(session(env))
