// Drives the AG-UI bridge with the AG-UI client (@ag-ui/client's HttpAgent,
// what AG-UI front ends such as CopilotKit run) and prints what each run
// saw as JSON, for clients_test.go to check. Arguments: the endpoint, then
// name=threadId:text per run.
const { HttpAgent } = require("@ag-ui/client");

async function run(url, threadId, text) {
  const agent = new HttpAgent({
    url,
    threadId,
    initialMessages: [{ id: "u-" + threadId, role: "user", content: text }],
  });
  const out = { events: [], deltas: [], errors: [], threw: null };
  try {
    await agent.runAgent(
      { runId: "run-" + threadId },
      {
        onEvent: ({ event }) => {
          out.events.push(event.type);
        },
        onTextMessageContentEvent: ({ event }) => {
          out.deltas.push(event.delta);
        },
        onRunErrorEvent: ({ event }) => {
          out.errors.push(event.message);
        },
      },
    );
  } catch (e) {
    out.threw = String(e && e.message ? e.message : e);
  }
  out.assistant = agent.messages.filter((m) => m.role === "assistant").map((m) => m.content);
  return out;
}

async function main(url, runs) {
  const out = {};
  for (const spec of runs) {
    const [name, rest] = spec.split("=");
    const i = rest.indexOf(":");
    out[name] = await run(url, rest.slice(0, i), rest.slice(i + 1));
  }
  process.stdout.write(JSON.stringify(out));
}

main(process.argv[2], process.argv.slice(3)).catch((e) => {
  console.error(e);
  process.exit(1);
});
