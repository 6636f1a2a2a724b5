# Drives the MCP bridge with the Python MCP SDK over streamable HTTP and
# prints what it saw as JSON, for clients_test.go to check.
import asyncio
import json
import sys

from mcp import Client
from mcp.shared.exceptions import MCPError


def result(r):
    return {
        "isError": bool(r.is_error if hasattr(r, "is_error") else r.isError),
        "text": " ".join(getattr(c, "text", "") for c in r.content),
        "structured": getattr(r, "structured_content", None) if hasattr(r, "structured_content") else r.structuredContent,
        "meta": getattr(r, "meta", None),
    }


def prompt(r):
    return {
        "description": r.description,
        "messages": [{"role": m.role, "text": getattr(m.content, "text", "")} for m in r.messages],
    }


async def get_prompt(c, name, args):
    try:
        return prompt(await c.get_prompt(name, args))
    except MCPError as e:
        return {"error": {"code": e.code, "message": e.message}}


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
        prompts = await c.list_prompts()
        out["prompts"] = [
            {"name": p.name, "arguments": [{"name": a.name, "required": bool(a.required)} for a in (p.arguments or [])]}
            for p in prompts.prompts
        ]
        out["prompt_good"] = await get_prompt(c, "quote_request", {"sku": "pen", "qty": "3"})
        out["prompt_missing"] = await get_prompt(c, "quote_request", {"qty": "3"})
        out["prompt_unknown_argument"] = await get_prompt(c, "quote_request", {"sku": "pen", "colour": "red"})
    print(json.dumps(out))


asyncio.run(main(sys.argv[1]))
