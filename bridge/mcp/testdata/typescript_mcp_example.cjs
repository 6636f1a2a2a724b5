// Launches the bridges example (examples/bridges -stdio) as a desktop MCP
// client does, drives its help desk with the TypeScript MCP SDK (what the MCP
// Inspector and most hosts embed) over stdio and prints what it saw as JSON,
// for clients_test.go to check. A call the SDK throws on is reported as threw.
const { Client } = require("@modelcontextprotocol/sdk/client/index.js");
const { StdioClientTransport } = require("@modelcontextprotocol/sdk/client/stdio.js");

async function main(binary) {
  const client = new Client({ name: "laser-test", version: "1.0.0" });
  await client.connect(new StdioClientTransport({ command: binary, args: ["-stdio"] }));
  const out = {};
  const tools = await client.listTools();
  out.tools = tools.tools.map((t) => t.name).sort();
  const call = async (name, args, options) => {
    try {
      const r = await client.callTool({ name, arguments: args }, undefined, options);
      return {
        isError: Boolean(r.isError),
        text: r.content.map((c) => c.text || "").join(" "),
        structured: r.structuredContent ?? null,
      };
    } catch (e) {
      return { isError: true, threw: String(e && e.message ? e.message : e), text: "" };
    }
  };
  const progress = [];
  out.good = await call("helpdesk_classify", { customer: "ada", text: "the site is down" });
  out.agent_error = await call("helpdesk_classify", { customer: "ada", text: " " });
  out.extra = await call("helpdesk_classify", { customer: "ada", text: "hi", priority: 1 });
  out.stream = await call("helpdesk_reply", { customer: "ada", text: "down" }, { onprogress: (p) => progress.push(p.message) });
  out.progress = progress;
  await client.close();
  process.stdout.write(JSON.stringify(out));
}

main(process.argv[2]).catch((e) => {
  console.error(e);
  process.exit(1);
});
