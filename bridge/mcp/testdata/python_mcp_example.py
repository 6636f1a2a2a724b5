# Launches the bridges example (examples/bridges -stdio) as a desktop MCP
# client does, drives its help desk with the Python MCP SDK over stdio and
# prints what it saw as JSON, for clients_test.go to check.
import asyncio
import json
import sys

from mcp import Client
from mcp.client.stdio import StdioServerParameters


def result(r):
    return {
        "isError": bool(r.is_error if hasattr(r, "is_error") else r.isError),
        "text": " ".join(getattr(c, "text", "") for c in r.content),
        "structured": getattr(r, "structured_content", None) if hasattr(r, "structured_content") else r.structuredContent,
    }


async def main(binary):
    out = {}
    progress = []

    async def on_progress(done, total, message):
        progress.append(message)

    async with Client(StdioServerParameters(command=binary, args=["-stdio"])) as c:
        tools = await c.list_tools()
        out["tools"] = sorted(t.name for t in tools.tools)
        out["good"] = result(await c.call_tool("helpdesk_classify", {"customer": "ada", "text": "the site is down"}))
        out["agent_error"] = result(await c.call_tool("helpdesk_classify", {"customer": "ada", "text": " "}))
        out["extra"] = result(await c.call_tool("helpdesk_classify", {"customer": "ada", "text": "hi", "priority": 1}))
        out["stream"] = result(await c.call_tool("helpdesk_reply", {"customer": "ada", "text": "down"}, progress_callback=on_progress))
        out["progress"] = progress
    print(json.dumps(out))


asyncio.run(main(sys.argv[1]))
