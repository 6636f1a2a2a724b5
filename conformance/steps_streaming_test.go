package conformance

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/cucumber/godog"

	"github.com/lasergo/laser/runtime"
	"github.com/lasergo/laser/wire"
)

// streamingSteps implements streaming.feature: typed publishes onto the log,
// one at a time and in one batch, on several topics of one client.
func streamingSteps(sc *godog.ScenarioContext, tr transport, t *testing.T) {
	p := &platform{}
	platformSteps(sc, tr, t, p)
	type reading struct {
		Endpoint  string `json:"endpoint"`
		Status    int    `json:"status"`
		LatencyMS int    `json:"latency_ms"`
	}
	var published int
	sc.When(`^I publish a JSON event to topic "([^"]+)"$`, func(ctx context.Context, topic string) error {
		if err := p.tr.EnsureTopics(ctx, 1, topic); err != nil {
			return err
		}
		p.err = runtime.Tell(ctx, p.c, runtime.Out{Kind: wire.KindEvent, Topic: topic, From: "publisher"}, "reading", wire.ContentJSON, reading{"/v1/items", 200, 42})
		return nil
	})
	sc.When(`^I publish a batch of (\d+) JSON events to topic "([^"]+)"$`, func(ctx context.Context, n int, topic string) error {
		if err := p.tr.EnsureTopics(ctx, 1, topic); err != nil {
			return err
		}
		records := make([]runtime.Outgoing, n)
		for i := range records {
			body, err := json.Marshal(reading{"/v1/items", 200, i})
			if err != nil {
				return err
			}
			records[i] = runtime.Outgoing{Headers: wire.Headers{{Key: wire.HeaderContentType, Value: wire.Uint8Value(uint8(wire.ContentJSON))}}, Payload: body}
		}
		pos, err := p.c.Publish(ctx, topic, records...)
		published, p.err = len(pos), err
		return nil
	})
	sc.Then(`^the publish succeeds$`, func() error { return p.err })
	sc.Then(`^all (\d+) events are published$`, func(n int) error {
		if p.err != nil {
			return p.err
		}
		if published != n {
			return fmt.Errorf("%d events published, want %d", published, n)
		}
		return nil
	})
}
