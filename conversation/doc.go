// Package conversation reads a conversation back from the log: the records
// of one conversation in order (context assembly, narrowed by a Policy), a
// typed state folded from them under an explicit replay bound (optionally
// seeded from a snapshot), and sessions that map a caller to a conversation
// (a fresh one per call, or one per user derived exactly as the reference
// runtime derives it, so a Go and a Rust agent agree).
//
// Everything here reads through runtime.Transport's ReadRange and NextOffset:
// reading never joins a consumer group, never commits and never moves a
// group's offset, so an agent can read its own conversation while it
// consumes it.
//
//	history, err := conversation.Assemble(ctx, client.Transport(), conv, conversation.Options{
//		Policy: conversation.Chain{conversation.ByAgent{"planner"}, conversation.TokenBudget{Max: 2000}},
//	})
//
// The semantics follow the reference runtime (section 3.5 of the runtime
// notes): every partition of the listed topics (agent.commands and
// agent.responses by default) is read from a window of at most 10,000
// records ending at its tail; the records of the conversation are ordered by
// broker timestamp, ties broken by (topic index, partition, offset); records
// that do not decode are skipped.
package conversation
