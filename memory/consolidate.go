package memory

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/lasergo/laser/wire"
)

// DefaultConsolidationWindow is how many of a scope's newest items one
// consolidation pass looks at; older ones are neither kept nor pruned by it.
const DefaultConsolidationWindow = 10_000

// Summarizer folds the bodies of session messages into one summary body:
// a model or a template in application code, as an Embedder is.
type Summarizer interface {
	Summarize(ctx context.Context, bodies [][]byte) ([]byte, error)
}

// Consolidation is one pass of Consolidate.
type Consolidation struct {
	// MaxItems keeps at most this many of the items in view, forgetting the
	// rest in Recent recall's order: the oldest, or once items have feedback
	// the least weighted. A summary written by the same pass is not counted.
	// 0 prunes nothing.
	MaxItems int
	// Summarizer, when set, folds the scope's Message items into one
	// Summary item each pass.
	Summarizer Summarizer
	// PruneSummarized forgets the messages a summary replaced.
	PruneSummarized bool
	// Window is how many of the newest items the pass looks at (default
	// DefaultConsolidationWindow).
	Window int
}

// ConsolidationReport is what a pass changed.
type ConsolidationReport struct {
	Summarized int     // messages folded into the summary
	Summary    wire.ID // the summary's id; zero when none was written
	Pruned     int     // items forgotten
}

// Consolidate runs one pass over scope: with a Summarizer, the Message items
// become one Summary (and are forgotten with PruneSummarized); with MaxItems,
// the oldest items past it are forgotten. It changes memory only through
// Remember and Forget, so every change is on the log like any other. A
// failed forget stops the pass with the report of what it did so far.
func Consolidate(ctx context.Context, l *Store, scope Scope, c Consolidation) (ConsolidationReport, error) {
	var rep ConsolidationReport
	if c.MaxItems < 0 || c.Window < 0 {
		return rep, fmt.Errorf("memory: consolidate: negative MaxItems (%d) or Window (%d)", c.MaxItems, c.Window)
	}
	if c.MaxItems == 0 && c.Summarizer == nil {
		return rep, errors.New("memory: consolidate: nothing to do (set MaxItems or a Summarizer)")
	}
	window := c.Window
	if window == 0 {
		window = DefaultConsolidationWindow
	}
	items, err := l.Recall(ctx, scope, Query{Strategy: Recent, Limit: window}) // newest first
	if err != nil {
		return rep, fmt.Errorf("memory: consolidate: %w", err)
	}
	if c.Summarizer != nil {
		if items, err = summarize(ctx, l, scope, c, items, &rep); err != nil {
			return rep, err
		}
	}
	if c.MaxItems == 0 || len(items) <= c.MaxItems {
		return rep, nil
	}
	// Recent recall puts the newest (or best weighted) first.
	for _, it := range items[c.MaxItems:] {
		if err := l.Forget(ctx, scope, it.ID); err != nil {
			return rep, fmt.Errorf("memory: consolidate: forget %s: %w", it.ID, err)
		}
		rep.Pruned++
	}
	return rep, nil
}

// summarize folds the Message items into one Summary and returns the items
// that remain in view.
func summarize(ctx context.Context, l *Store, scope Scope, c Consolidation, items []Item, rep *ConsolidationReport) ([]Item, error) {
	var msgs []Item
	for _, it := range slices.Backward(items) { // oldest first, as a summary reads
		if it.Kind == Message {
			msgs = append(msgs, it)
		}
	}
	if len(msgs) == 0 {
		return items, nil
	}
	bodies := make([][]byte, len(msgs))
	for i, m := range msgs {
		bodies[i] = m.Body
	}
	body, err := c.Summarizer.Summarize(ctx, bodies)
	if err != nil {
		return items, fmt.Errorf("memory: consolidate: summarize %d messages: %w", len(msgs), err)
	}
	id, err := l.Remember(ctx, scope, Summary, body)
	if err != nil {
		return items, fmt.Errorf("memory: consolidate: remember the summary: %w", err)
	}
	rep.Summarized, rep.Summary = len(msgs), id
	if !c.PruneSummarized {
		return items, nil
	}
	for _, m := range msgs {
		if err := l.Forget(ctx, scope, m.ID); err != nil {
			return items, fmt.Errorf("memory: consolidate: forget %s: %w", m.ID, err)
		}
		rep.Pruned++
	}
	return slices.DeleteFunc(items, func(it Item) bool { return it.Kind == Message }), nil
}
