# Drives the MCP bridge with the Python MCP SDK over streamable HTTP and
# prints what it saw as JSON, for clients_test.go to check.
import asyncio
import json
import sys

from mcp import Client


def result(r):
    return {
        "isError": bool(r.is_error if hasattr(r, "is_error") else r.isError),
        "text": " ".join(getattr(c, "text", "") for c in r.content),
        "structured": getattr(r, "structured_content", None) if hasattr(r, "structured_content") else r.structuredContent,
        "meta": getattr(r, "meta", None),
    }


async def main(url):
    out = {}
    progress = []

    async def on_progress(done, total, message):
        progress.append(message)

    async with Client(url) as c:
        tools = await c.list_tools()
        out["tools"] = {t.name: (t.input_schema if hasattr(t, "input_schema") else t.inputSchema) for t in tools.tools}
        out["good"] = result(await c.call_tool("desk_quote", {"sku": "pen", "qty": 2}))
        out["agent_error"] = result(await c.call_tool("desk_quote", {"sku": "pen", "qty": 0}))
        out["bad"] = result(await c.call_tool("desk_quote", {"sku": "pen", "qty": "four"}))
        out["extra"] = result(await c.call_tool("desk_quote", {"sku": "pen", "qty": 1, "discount": 100}))
        out["null"] = result(await c.call_tool("desk_quote", {"sku": None, "qty": 1}))
        out["stream"] = result(await c.call_tool("desk_spell", {"text": "go"}, progress_callback=on_progress))
        out["progress"] = progress
        conv = out["good"]["meta"]["laser/conversation"]
        rr = await c.read_resource("laser://conversations/" + conv)
        out["transcript"] = json.loads(rr.contents[0].text)
    print(json.dumps(out))


asyncio.run(main(sys.argv[1]))
