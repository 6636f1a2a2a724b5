// Package memory is agent memory kept on the log: remember, recall, forget,
// feedback and named items, stored as records on agent.audit (or a topic of
// your choice) in the reference runtime's encoding, so it works on plain
// Iggy and agents in other SDKs read the same memory.
//
//	mem := memory.New(client, memory.Options{})
//	id, _ := mem.Remember(ctx, memory.Scope{Conversation: conv}, memory.Fact, []byte("prefers email"))
//	items, _ := mem.Recall(ctx, memory.Scope{Conversation: conv}, memory.Query{})
//	_ = mem.Forget(ctx, memory.Scope{Conversation: conv}, id)
//
// Recall folds the topic incrementally: a Log keeps its projection and the
// offset it has read to on every partition, and each recall reads only what
// was appended since. A fresh Log rebuilds the projection from the log on
// its first recall, so keep one per process. Reading never joins a consumer
// group and commits nothing.
//
// Remembering wraps a handler so each message it handles successfully is
// remembered under its conversation; a failed memory write is logged and
// never turns a handled message into a failure.
package memory
