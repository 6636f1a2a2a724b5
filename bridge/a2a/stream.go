package a2a

import (
	"context"
	"iter"

	"github.com/a2aproject/a2a-go/a2a"

	"github.com/lasergo/laser/operation"
)

// Send handles message/send: Submit, and with configuration.blocking the
// wait for the task to finish (or to need input), up to BlockTimeout; a
// one-way skill, which nothing answers, returns once its command is on the
// log.
func (b *Bridge) Send(ctx context.Context, p *a2a.MessageSendParams) (*a2a.Task, error) {
	task, err := b.Submit(ctx, p)
	if err != nil || p.Config == nil || p.Config.Blocking == nil || !*p.Config.Blocking {
		return task, err
	}
	if op, _ := b.skill(p); op != nil && op.Kind != operation.Request && op.Kind != operation.Stream {
		return task, nil
	}
	ctx, cancel := context.WithTimeout(ctx, b.cfg.BlockTimeout)
	defer cancel()
	for {
		got, err := b.Task(ctx, task.ID)
		if err != nil {
			return nil, err
		}
		if s := got.Status.State; s.Terminal() || s == a2a.TaskStateInputRequired || s == a2a.TaskStateAuthRequired {
			got.Metadata = task.Metadata
			return got, nil
		}
		select {
		case <-ctx.Done():
			// Not finished in time: the task as it stands, to poll on.
			got.Metadata = task.Metadata
			return got, nil
		case <-b.client.Clock().After(b.cfg.PollInterval):
		}
	}
}

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
