// Package memory is agent memory kept on the log: remember, recall, forget,
// feedback and named items, stored as records on agent.audit (or a topic of
// your choice) in the reference runtime's encoding, so it works on plain
// Iggy and agents in other SDKs read the same memory.
//
//	mem := memory.New(client, memory.Config{})
//	id, _ := mem.Remember(ctx, memory.Scope{Conversation: conv}, memory.Fact, []byte("prefers email"), memory.Dedup())
//	items, _ := mem.Recall(ctx, memory.Scope{Conversation: conv}, memory.Query{Text: "email", Limit: 5})
//	prompt := memory.ContextBlock(items, 500, nil)
//	_ = mem.Forget(ctx, memory.Scope{Conversation: conv}, id)
//
// Recall ranks by a Strategy: Recent (newest first), Keyword (BM25 over an
// inverted index, exact terms such as "INV-77" first), Semantic (cosine
// over the items' vectors) or Hybrid (both fused by reciprocal rank, each
// item saying which signals placed it); feedback re-ranks every one.
// Vectors come from an Embedder (HashEmbedder, a deterministic baseline, by
// default) and are stored on the log next to their item, so a restart does
// not embed again. Items without a vector of the Store's model (a peer's
// under another model) are embedded at recall, at most ReembedPerRecall per
// recall and without holding the Store's lock; a CachingEmbedder keeps
// those vectors across restarts.
//
// Recall folds the topic incrementally, its partitions merged in broker-time
// order: a Store keeps its projection (items, index, vectors) and the offset
// it has read to on every partition, and each recall reads only what was
// appended since. A fresh Store rebuilds the
// projection from the log on its first recall, so keep one per process.
// Reading never joins a consumer group and commits nothing.
//
// With a Key a Store signs every record it writes; with a Verifier (the
// client's by default) it folds only records whose signature verifies and
// whose signer is their source, so nobody without a key writes, forgets or
// reweights an item, and Writers narrows who may. Under a verifier only an
// item's author (or one of Moderators) forgets or reweights it, only a named
// key's first writer (or any of Writers) writes it again, an item squatting
// a content id with another body is displaced, and a writer's record folded
// before is refused by its high-water mark even once its item has left the
// bounded projection. Tombstones, feedback and the fold's other state are
// bounded by MaxItems.
//
// Remembering wraps a handler so each message it handles successfully is
// remembered under its conversation; a failed memory write is logged and
// never turns a handled message into a failure.
package memory
