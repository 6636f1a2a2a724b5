package a2a

import (
	"context"
	"iter"

	"github.com/a2aproject/a2a-go/a2a"
)

// Stream handles message/stream: the task as submitted, then its updates as
// the agent writes them (an artifact piece per chunk, status changes) until
// a final status or ctx ends.
func (b *Bridge) Stream(ctx context.Context, p *a2a.MessageSendParams) iter.Seq2[a2a.Event, error] {
	return func(yield func(a2a.Event, error) bool) {
		task, err := b.Submit(ctx, p)
		if err != nil {
			yield(nil, err)
			return
		}
		if !yield(task, nil) {
			return
		}
		// The submitted status Submit wrote is the first update; it was just
		// yielded as the task itself.
		b.follow(ctx, task.ID, 1, yield)
	}
}

// Resubscribe handles tasks/resubscribe: every update of the task so far,
// then the new ones, until a final status or ctx ends.
func (b *Bridge) Resubscribe(ctx context.Context, id a2a.TaskID) iter.Seq2[a2a.Event, error] {
	return func(yield func(a2a.Event, error) bool) { b.follow(ctx, id, 0, yield) }
}

// follow yields the task's updates from the skip-th on, re-reading its
// records every PollInterval on the client's clock.
func (b *Bridge) follow(ctx context.Context, id a2a.TaskID, skip int, yield func(a2a.Event, error) bool) {
	sent := skip
	for {
		r, err := b.replay(ctx, id)
		if err != nil {
			yield(nil, err)
			return
		}
		for ; sent < len(r.events); sent++ {
			ev := r.events[sent]
			if !yield(ev, nil) {
				return
			}
			if s, ok := ev.(*a2a.TaskStatusUpdateEvent); ok && s.Final {
				return
			}
		}
		select {
		case <-ctx.Done():
			yield(nil, ctx.Err())
			return
		case <-b.client.Clock().After(b.cfg.PollInterval):
		}
	}
}
