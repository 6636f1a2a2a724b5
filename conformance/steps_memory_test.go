package conformance

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"testing"

	"github.com/cucumber/godog"

	"github.com/lasergo/laser/memory"
	"github.com/lasergo/laser/runtime"
	"github.com/lasergo/laser/wire"
)

// memoryWorld is one memory scenario's state: a memory on a topic of its
// own (scenarios over one Iggy server share its stream), the scope the
// reference's engine owns (agent "agent", durable), and the id of every
// body remembered.
type memoryWorld struct {
	t     *testing.T
	tr    transport
	mem   *memory.Store
	scope memory.Scope
	ids   map[string]wire.ID
}

func memorySteps(sc *godog.ScenarioContext, tr transport, t *testing.T) {
	w := &memoryWorld{t: t, tr: tr}
	sc.Step(`^an empty memory store$`, w.open)
	sc.Step(`^an empty semantic memory$`, w.open)
	sc.Step(`^I remember "([^"]+)" with dedup$`, func(ctx context.Context, body string) error {
		return w.remember(ctx, body, memory.Dedup())
	})
	sc.Step(`^I remember "([^"]+)"$`, func(ctx context.Context, body string) error { return w.remember(ctx, body) })
	sc.Step(`^I remember the fact "([^"]+)"$`, func(ctx context.Context, body string) error { return w.remember(ctx, body) })
	sc.Step(`^I give "([^"]+)" a feedback weight of (-?\d+)$`, w.feedback)
	sc.Step(`^I forget "([^"]+)"$`, w.forget)
	sc.Step(`^the memory holds (\d+) items?$`, w.holds)
	sc.Step(`^recalling (\d+) items? returns "([^"]+)" then "([^"]+)"$`, func(ctx context.Context, n int, a, b string) error {
		return w.recalls(ctx, n, a, b)
	})
	sc.Step(`^recalling (\d+) items? returns "([^"]+)"$`, func(ctx context.Context, n int, a string) error { return w.recalls(ctx, n, a) })
	sc.Step(`^keyword recall for "([^"]+)" returns "([^"]+)" first$`, func(ctx context.Context, q, want string) error {
		return w.first(ctx, memory.Keyword, q, want)
	})
	sc.Step(`^hybrid recall for "([^"]+)" returns "([^"]+)" first$`, func(ctx context.Context, q, want string) error {
		return w.first(ctx, memory.Hybrid, q, want)
	})
}

func (w *memoryWorld) open(ctx context.Context) error {
	client := runtime.NewClient(w.tr.New(w.t), runtime.ClientConfig{})
	topic := "memory." + client.IDs().NewID().String()
	if err := client.Transport().EnsureTopics(ctx, 2, topic); err != nil {
		return err
	}
	w.mem = memory.New(client, memory.Config{Topic: topic})
	w.scope = memory.Scope{Conversation: client.IDs().NewID(), Agent: "agent", Lifetime: memory.Durable}
	w.ids = map[string]wire.ID{}
	return nil
}

func (w *memoryWorld) remember(ctx context.Context, body string, opts ...memory.RememberOption) error {
	id, err := w.mem.Remember(ctx, w.scope, memory.Fact, []byte(body), opts...)
	w.ids[body] = id
	return err
}

func (w *memoryWorld) id(body string) (wire.ID, error) {
	id, ok := w.ids[body]
	if !ok {
		return wire.ID{}, fmt.Errorf("%q was never remembered", body)
	}
	return id, nil
}

func (w *memoryWorld) feedback(ctx context.Context, body, weight string) error {
	id, err := w.id(body)
	if err != nil {
		return err
	}
	f, err := strconv.ParseFloat(weight, 32)
	if err != nil {
		return err
	}
	_, err = w.mem.Feedback(ctx, w.scope, id, float32(f))
	return err
}

func (w *memoryWorld) forget(ctx context.Context, body string) error {
	id, err := w.id(body)
	if err != nil {
		return err
	}
	return w.mem.Forget(ctx, w.scope, id)
}

func (w *memoryWorld) recall(ctx context.Context, q memory.Query) ([]string, error) {
	items, err := w.mem.Recall(ctx, w.scope, q)
	if err != nil {
		return nil, err
	}
	out := make([]string, len(items))
	for i, it := range items {
		out[i] = string(it.Body)
	}
	return out, nil
}

func (w *memoryWorld) holds(ctx context.Context, n int) error {
	got, err := w.recall(ctx, memory.Query{Strategy: memory.Recent, Limit: 1000})
	if err != nil {
		return err
	}
	if len(got) != n {
		return fmt.Errorf("the memory holds %d items %q, want %d", len(got), got, n)
	}
	return nil
}

func (w *memoryWorld) recalls(ctx context.Context, n int, want ...string) error {
	got, err := w.recall(ctx, memory.Query{Strategy: memory.Recent, Limit: n})
	if err != nil {
		return err
	}
	if !slices.Equal(got, want) {
		return fmt.Errorf("recalling %d items returns %q, want %q", n, got, want)
	}
	return nil
}

func (w *memoryWorld) first(ctx context.Context, s memory.Strategy, q, want string) error {
	got, err := w.recall(ctx, memory.Query{Text: q, Strategy: s, Limit: 10})
	if err != nil {
		return err
	}
	if len(got) == 0 || got[0] != want {
		return fmt.Errorf("%s recall for %q returns %q, want %q first", s, q, got, want)
	}
	return nil
}
