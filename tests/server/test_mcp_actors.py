"""Who an MCP write is from: the client's own name (``clientInfo.name``) is the default everywhere a write
names its writer, the daily entry's heading included, as ``POST /daily`` does with ``X-Vaultsync-Client``.

``vaultsync mcp`` runs as a subprocess, driven through the MCP SDK's own client over stdio.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import sys
from typing import Any

from helpers.twoway import Env
from mcp import Client
from mcp.client.stdio import StdioServerParameters
from mcp.types import Implementation


def _payload(result: Any) -> dict[str, Any]:
    assert not result.is_error, result.content
    if result.structured_content is not None:
        data = result.structured_content
        return data.get("result", data) if set(data) == {"result"} else data
    return json.loads(result.content[0].text)


async def _append(env: Env, name: str, args: dict[str, Any]) -> dict[str, Any]:
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "vaultsync.cli", "mcp", "--config", str(env.config_path)],
        env={k: v for k, v in os.environ.items() if k.startswith(("GIT_", "HOME", "XDG_", "PATH", "PYTHON"))},
    )
    async with Client(params, client_info=Implementation(name=name, version="1.0")) as client:
        return _payload(await client.call_tool("append_daily", args))


def test_append_daily_without_a_source_names_the_client_in_the_heading(env: Env) -> None:
    done = asyncio.run(_append(env, "Claude Desktop", {"text": "Talked about the offsite"}))

    assert re.fullmatch(r"## \d\d:\d\d Claude Desktop", done["heading"]), done["heading"]
    note = (env.workspace / done["path"]).read_text(encoding="utf-8")
    assert f"{done['heading']}\n\nTalked about the offsite" in note
    assert env.git("log", "-1", "--format=%an").strip() == "vaultsync api (Claude Desktop)"


def test_a_source_given_still_wins_over_the_client_name(env: Env) -> None:
    done = asyncio.run(_append(env, "Claude Desktop", {"text": "Noted", "source": "telegram"}))

    assert re.fullmatch(r"## \d\d:\d\d telegram", done["heading"]), done["heading"]


def test_a_client_name_a_heading_cannot_hold_is_cleaned_not_refused(env: Env) -> None:
    done = asyncio.run(_append(env, "tool #2", {"text": "Noted"}))

    assert re.fullmatch(r"## \d\d:\d\d tool 2", done["heading"]), done["heading"]
