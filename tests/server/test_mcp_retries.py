"""``vaultsync mcp`` through the MCP SDK's own client, each write tool called three times as a retrying model
calls it: the memory changes once, git gets one commit per change, the repeats say ``already``, a second
successor is a tool error naming the first, and the tools that are safe to repeat say so (``idempotentHint``)."""

from __future__ import annotations

import asyncio
import json
import os
import sys
from typing import Any

from helpers.twoway import SARAH, Env
from mcp import Client
from mcp.client.stdio import StdioServerParameters
from mcp.types import Implementation


def payload(result: Any) -> dict[str, Any]:
    assert not result.is_error, result.content
    if result.structured_content is not None:
        data = result.structured_content
        return data.get("result", data) if set(data) == {"result"} else data
    return json.loads(result.content[0].text)


def commits(env: Env) -> int:
    return int(env.git("rev-list", "--count", "HEAD").strip())


async def session(env: Env) -> None:
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "vaultsync.cli", "mcp", "--config", str(env.config_path)],
        env={k: v for k, v in os.environ.items() if k.startswith(("GIT_", "HOME", "XDG_", "PATH", "PYTHON"))},
    )
    async with Client(params, client_info=Implementation(name="retrying-model", version="1.0")) as client:
        tools = {tool.name: tool for tool in (await client.list_tools()).tools}
        for name in ("remember", "supersede", "forget", "edit_fact"):
            hints = tools[name].annotations
            assert hints is not None and hints.idempotent_hint is True, name
        assert tools["append_daily"].annotations.idempotent_hint is False  # each call appends an entry
        assert tools["remember"].annotations.destructive_hint is False

        start = commits(env)

        async def thrice(tool: str, args: dict[str, Any]) -> list[dict[str, Any]]:
            return [payload(await client.call_tool(tool, args)) for _ in range(3)]

        made = await thrice("remember", {"entity": SARAH, "fact": "Sarah Chen keeps bees on the roof"})
        assert [m["already"] for m in made] == [False, True, True]
        assert {m["fact"]["id"] for m in made} == {"sarah-chen-007"}
        assert commits(env) == start + 1

        replaced = await thrice("supersede", {"id": "sarah-chen-007", "fact": "Sarah Chen gave the bees away"})
        assert [m["already"] for m in replaced] == [False, True, True]
        assert {m["fact"]["id"] for m in replaced} == {"sarah-chen-008"}
        assert commits(env) == start + 2

        gone = await thrice("forget", {"id": "sarah-chen-004"})
        assert [m["already"] for m in gone] == [False, True, True]
        assert commits(env) == start + 3
        assert env.git("log", "-1", "--format=%an").strip() == "vaultsync api (retrying-model)"

        assert [f["id"] for f in env.facts(SARAH)] == [f"sarah-chen-00{n}" for n in (1, 2, 3, 5, 6, 7, 8)]

        other = await client.call_tool("supersede", {"id": "sarah-chen-007", "fact": "Sarah Chen sold the bees"})
        assert other.is_error and "already superseded by 'sarah-chen-008'" in other.content[0].text
        never = await client.call_tool("forget", {"id": "sarah-chen-099"})
        assert never.is_error and "no fact 'sarah-chen-099'" in never.content[0].text
        assert commits(env) == start + 3


def test_each_write_tool_called_three_times_changes_the_memory_once(env: Env) -> None:
    asyncio.run(session(env))
