package conformance

import (
	"context"
	"fmt"
	"slices"
	"testing"

	"github.com/cucumber/godog"

	"github.com/lasergo/laser/runtime"
	"github.com/lasergo/laser/wire"
)

// agentSteps implements agent.feature and provenance.feature, which share
// their steps: agent messages thread under a conversation and keep their
// provenance through the log.
func agentSteps(sc *godog.ScenarioContext, tr transport, t *testing.T) {
	p := &platform{}
	platformSteps(sc, tr, t, p)
	send := func(ctx context.Context, body string, prov wire.Provenance) error {
		prov.Conversation = p.conversation
		_, err := p.c.SendPlain(ctx, runtime.TopicCommands, prov, []byte(body))
		return err
	}
	sc.When(`^I send agent commands "([^"]+)", "([^"]+)", "([^"]+)"$`, func(ctx context.Context, a, b, c string) error {
		for i, body := range []string{a, b, c} {
			if err := send(ctx, body, wire.Provenance{Agent: "planner", IdempotencyKey: fmt.Sprintf("k%d", i)}); err != nil {
				return err
			}
		}
		return nil
	})
	sc.When(`^I send an agent command "([^"]+)" with agent "([^"]+)" and idempotency key "([^"]+)"$`, func(ctx context.Context, body, agent, key string) error {
		return send(ctx, body, wire.Provenance{Agent: agent, IdempotencyKey: key})
	})
	sc.When(`^I send an agent command "([^"]+)" with agent "([^"]+)" and correlation id "([^"]+)"$`, func(ctx context.Context, body, agent, corr string) error {
		return send(ctx, body, wire.Provenance{Agent: agent, Correlation: corr})
	})
	sc.When(`^I publish an AGDX command "([^"]+)" via the typed producer$`, func(ctx context.Context, body string) error {
		_, err := p.c.Send(ctx, runtime.Out{From: "planner", Body: []byte(body)}, runtime.WithConversation(p.conversation))
		return err
	})
	sc.Then(`^the assembled payloads are "([^"]+)", "([^"]+)", "([^"]+)" in order$`, func(a, b, c string) error {
		var got []string
		for _, body := range p.assembled.Bodies() {
			got = append(got, string(body))
		}
		if want := []string{a, b, c}; !slices.Equal(got, want) {
			return fmt.Errorf("assembled %q, want %q", got, want)
		}
		return nil
	})
	first := func() (*runtime.Message, error) {
		if len(p.assembled) == 0 {
			return nil, fmt.Errorf("nothing was assembled")
		}
		return p.assembled[0], nil
	}
	sc.Then(`^the AGDX command body is "([^"]+)"$`, func(want string) error {
		m, err := first()
		if err != nil {
			return err
		}
		if m.Envelope == nil || m.Envelope.Kind != wire.KindCommand || string(m.Envelope.Body) != want {
			return fmt.Errorf("assembled %+v, want an AGDX command with body %q", m.Envelope, want)
		}
		return nil
	})
	field := func(name string, get func(*runtime.Message) string) func(string) error {
		return func(want string) error {
			m, err := first()
			if err != nil {
				return err
			}
			if got := get(m); got != want {
				return fmt.Errorf("assembled message %s is %q, want %q", name, got, want)
			}
			return nil
		}
	}
	sc.Then(`^the assembled message agent is "([^"]+)"$`, field("agent", func(m *runtime.Message) string { return m.Provenance.Agent }))
	sc.Then(`^the assembled message idempotency key is "([^"]+)"$`, field("idempotency key", func(m *runtime.Message) string { return m.Provenance.IdempotencyKey }))
	sc.Then(`^the assembled message correlation id is "([^"]+)"$`, field("correlation id", func(m *runtime.Message) string { return m.Provenance.Correlation }))
	sc.Then(`^the assembled message belongs to the conversation$`, func() error {
		m, err := first()
		if err != nil {
			return err
		}
		if m.Provenance.Conversation != p.conversation {
			return fmt.Errorf("assembled message of conversation %s, want %s", m.Provenance.Conversation, p.conversation)
		}
		return nil
	})
}
