// Drives the MCP bridge with the TypeScript MCP SDK (what most MCP hosts
// embed) over streamable HTTP and prints what it saw as JSON, for
// clients_test.go to check. A call the SDK throws on is reported as threw.
const { Client } = require("@modelcontextprotocol/sdk/client/index.js");
const { StreamableHTTPClientTransport } = require("@modelcontextprotocol/sdk/client/streamableHttp.js");

async function main(url) {
  const client = new Client({ name: "laser-test", version: "1.0.0" });
  await client.connect(new StreamableHTTPClientTransport(new URL(url)));
  const out = {};
  const tools = await client.listTools();
  out.tools = Object.fromEntries(tools.tools.map((t) => [t.name, t.inputSchema]));
  const call = async (name, args, options) => {
    try {
      const r = await client.callTool({ name, arguments: args }, undefined, options);
      return {
        isError: Boolean(r.isError),
        text: r.content.map((c) => c.text || "").join(" "),
        structured: r.structuredContent ?? null,
        meta: r._meta ?? null,
      };
    } catch (e) {
      return { isError: true, threw: String(e && e.message ? e.message : e), text: "" };
    }
  };
  const progress = [];
  out.good = await call("desk_quote", { sku: "pen", qty: 2 });
  out.agent_error = await call("desk_quote", { sku: "pen", qty: 0 });
  out.bad = await call("desk_quote", { sku: "pen", qty: "four" });
  out.extra = await call("desk_quote", { sku: "pen", qty: 1, discount: 100 });
  out.null = await call("desk_quote", { sku: null, qty: 1 });
  out.stream = await call("desk_spell", { text: "go" }, { onprogress: (p) => progress.push(p.message) });
  out.progress = progress;
  const prompts = await client.listPrompts();
  out.prompts = prompts.prompts.map((p) => ({
    name: p.name,
    arguments: (p.arguments || []).map((a) => ({ name: a.name, required: Boolean(a.required) })),
  }));
  const getPrompt = async (name, args) => {
    try {
      const r = await client.getPrompt({ name, arguments: args });
      return { description: r.description, messages: r.messages.map((m) => ({ role: m.role, text: m.content.text || "" })) };
    } catch (e) {
      return { error: { code: e.code, message: String(e && e.message ? e.message : e) } };
    }
  };
  out.prompt_good = await getPrompt("quote_request", { sku: "pen", qty: "3" });
  out.prompt_missing = await getPrompt("quote_request", { qty: "3" });
  out.prompt_unknown_argument = await getPrompt("quote_request", { sku: "pen", colour: "red" });
  await client.close();
  process.stdout.write(JSON.stringify(out));
}

main(process.argv[2]).catch((e) => {
  console.error(e);
  process.exit(1);
});
