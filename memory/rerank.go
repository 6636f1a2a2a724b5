package memory

import (
	"context"
	"fmt"

	"github.com/lasergo/laser/wire"
)

// Reranker reorders recalled items, the second stage after the store's own
// ranking: a cross-encoder, a model as judge or a hosted rerank service,
// kept in application code as an Embedder is. It may drop items; it must
// return only items it was given.
type Reranker interface {
	Rerank(ctx context.Context, query string, items []Item) ([]Item, error)
}

// RerankerFunc is a function as a Reranker.
type RerankerFunc func(ctx context.Context, query string, items []Item) ([]Item, error)

// Rerank calls f.
func (f RerankerFunc) Rerank(ctx context.Context, query string, items []Item) ([]Item, error) {
	return f(ctx, query, items)
}

// RecallReranked recalls as Store.Recall does and hands the candidates to r
// when the query has text (a query without text has nothing to rerank
// against). A reranker that fails, or returns an item it was not given,
// fails the recall.
func RecallReranked(ctx context.Context, l *Store, r Reranker, scope Scope, q Query) ([]Item, error) {
	items, err := l.Recall(ctx, scope, q)
	if err != nil || q.Text == "" || len(items) == 0 {
		return items, err
	}
	given := make(map[wire.ID]bool, len(items))
	for _, it := range items {
		given[it.ID] = true
	}
	out, err := r.Rerank(ctx, q.Text, items)
	if err != nil {
		return nil, fmt.Errorf("memory: rerank: %w", err)
	}
	for _, it := range out {
		if !given[it.ID] {
			return nil, fmt.Errorf("memory: rerank returned item %s, which recall did not give it", it.ID)
		}
	}
	return out, nil
}
