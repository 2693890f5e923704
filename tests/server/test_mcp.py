"""``vaultsync mcp`` as a subprocess, driven through the MCP SDK's own client over stdio: every tool, its
schema, and a client mistake coming back as a tool error rather than a dead server."""

from __future__ import annotations

import asyncio
import json
import os
import sys
from typing import Any

from helpers.twoway import SARAH, SARAH_DIR, Env
from mcp import Client
from mcp.client.stdio import StdioServerParameters
from mcp.types import Implementation

TOOLS = {
    "remember",
    "recall",
    "supersede",
    "forget",
    "edit_fact",
    "get_entity",
    "history",
    "sync",
    "status",
    "context",
    "append_daily",
    "list_entities",
    "read_daily_note",
    "read_memory",
}


def payload(result: Any) -> dict[str, Any]:
    assert not result.is_error, result.content
    if result.structured_content is not None:
        data = result.structured_content
        return data.get("result", data) if set(data) == {"result"} else data
    return json.loads(result.content[0].text)


async def session(env: Env) -> None:
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "vaultsync.cli", "mcp", "--config", str(env.config_path)],
        env={k: v for k, v in os.environ.items() if k.startswith(("GIT_", "HOME", "XDG_", "PATH", "PYTHON"))},
    )
    async with Client(params, client_info=Implementation(name="claude-code", version="1.0")) as client:
        listed = await client.list_tools()
        tools = {tool.name: tool for tool in listed.tools}
        assert set(tools) == TOOLS
        assert all(tool.description and tool.input_schema.get("type") == "object" for tool in tools.values())
        assert set(tools["remember"].input_schema["required"]) == {"entity", "fact"}

        remembered = payload(await client.call_tool("remember", {"entity": SARAH, "fact": "Sarah Chen likes tea"}))
        new_id = remembered["fact"]["id"]
        assert new_id == "sarah-chen-007" and (env.vault / f"{SARAH_DIR}/facts/{new_id}.md").is_file()
        # git names the client as it named itself when it connected
        assert env.git("log", "-1", "--format=%an").strip() == "vaultsync api (claude-code)"

        replaced = payload(await client.call_tool("supersede", {"id": new_id, "fact": "Sarah Chen likes coffee"}))
        assert env.fact(SARAH, new_id)["supersededBy"] == replaced["fact"]["id"]

        payload(await client.call_tool("forget", {"id": "sarah-chen-004"}))
        assert all(f.get("id") != "sarah-chen-004" for f in env.facts(SARAH))

        entity = payload(await client.call_tool("get_entity", {"entity": SARAH}))
        assert entity["name"] == "Sarah Chen" and any(f["id"] == new_id for f in entity["superseded"])

        report = payload(await client.call_tool("sync", {}))
        assert report["exit_code"] == 0
        status = payload(await client.call_tool("status", {}))
        assert status["last_run"]["kind"] == "mcp"

        assert tools["recall"].input_schema["required"] == ["query"]
        recall_args = set(tools["recall"].input_schema["properties"])
        assert recall_args == {"query", "limit", "kind", "entity", "status", "since", "until", "recency", "explain"}
        assert "required" not in tools["history"].input_schema or not tools["history"].input_schema["required"]
        found = payload(await client.call_tool("recall", {"query": "likes coffee", "kind": ["fact"]}))
        assert found["query"] == "likes coffee" and found["hits"][0]["id"] == replaced["fact"]["id"]
        assert all("explain" not in hit for hit in found["hits"])
        asked = {"query": "Sarah Acme", "kind": ["fact"], "limit": 2}
        why = payload(await client.call_tool("recall", {**asked, "explain": True}))
        for hit in why["hits"]:  # the query names Sarah: her facts come first, with the entity boost
            assert hit["entity"] == SARAH and hit["explain"]["entity"] == 0.7 and hit["explain"]["bm25"] > 0, hit
        plain = payload(await client.call_tool("recall", asked))["hits"]
        assert len(why["hits"]) == 2 and plain == [{k: v for k, v in h.items() if k != "explain"} for h in why["hits"]]
        maybe = await client.call_tool("recall", {"query": "tea", "explain": "maybe"})
        assert maybe.is_error and maybe.content[0].text == 'recall: explain: got "maybe"; expected true or false'
        current = payload(
            await client.call_tool("recall", {"query": "likes tea", "status": "active", "kind": ["fact"]})
        )
        assert all(hit["id"] != new_id for hit in current["hits"])
        every = payload(await client.call_tool("recall", {"query": "likes tea", "kind": ["fact"]}))
        old = [hit for hit in every["hits"] if hit["id"] == new_id]
        assert old and old[0]["status"] == "superseded" and old[0]["superseded_by"] == replaced["fact"]["id"]
        told = payload(await client.call_tool("history", {"target": new_id}))
        assert [c["what"] for c in told["changes"]][:2] == [
            f"status: active -> superseded (by {replaced['fact']['id']})",
            "created",
        ]
        assert all(c["side"] == "agent" for c in told["changes"])
        latest = payload(await client.call_tool("history", {"limit": 1}))
        assert len(latest["changes"]) == 1
        bad_day = await client.call_tool("recall", {"query": "tea", "since": "last week"})
        assert bad_day.is_error and "since" in bad_day.content[0].text
        bad_target = await client.call_tool("history", {"target": "../../etc"})
        assert bad_target.is_error and "target" in bad_target.content[0].text

        known = payload(await client.call_tool("context", {"message": "Coffee with Sarah Chen?", "budget": 800}))
        assert known["entities"][0]["entity"] == SARAH and "likes coffee" in known["text"]
        assert "likes tea" not in known["text"]  # superseded: never shown as current
        daily = payload(await client.call_tool("append_daily", {"text": "Talked about coffee", "source": "mcp"}))
        assert "Talked about coffee" in (env.workspace / daily["path"]).read_text() and daily["commits"]
        empty = await client.call_tool("append_daily", {"text": " "})
        assert empty.is_error and "text" in empty.content[0].text
        short = payload(await client.call_tool("get_entity", {"entity": "people/sarah-chen"}))
        assert short["entity"] == SARAH and short == payload(await client.call_tool("get_entity", {"entity": SARAH}))
        typo = await client.call_tool("get_entity", {"entity": "sarah-chn"})
        assert typo.is_error and f"did you mean {SARAH}?" in typo.content[0].text
        bad_date = await client.call_tool("remember", {"entity": SARAH, "fact": "x y", "timestamp": "yesterday"})
        assert (
            bad_date.is_error and "timestamp" in bad_date.content[0].text and "YYYY-MM-DD" in bad_date.content[0].text
        )

        wrong = await client.call_tool("forget", {"id": "no-such-fact"})
        assert wrong.is_error and "no fact" in wrong.content[0].text
        bad = await client.call_tool("get_entity", {"entity": "../../etc"})
        assert bad.is_error
        still = payload(await client.call_tool("status", {}))  # the server lives on
        assert "open_conflicts" in still


def test_every_tool_through_the_sdk_client(env: Env) -> None:
    asyncio.run(session(env))
