package conformance

import (
	"context"
	"fmt"
	"testing"

	"github.com/cucumber/godog"

	"github.com/lasergo/laser/conversation"
	"github.com/lasergo/laser/runtime"
	"github.com/lasergo/laser/wire"
)

// platform is the state the reference's Background steps set up, which
// every feature on a log shares: a transport, a client on it and the
// conversation under way.
type platform struct {
	tr           runtime.Transport
	c            *runtime.Client
	conversation wire.ID
	// assembled is the conversation as last read back.
	assembled conversation.History
	// err is the last step's result, for the Then steps that judge it.
	err error
}

// platformSteps registers the Background steps, and reading the
// conversation back, on p, each scenario's
// transport fresh from tr.
func platformSteps(sc *godog.ScenarioContext, tr transport, t *testing.T, p *platform) {
	fresh := func() {
		p.tr = tr.New(t)
		p.c = runtime.NewClient(p.tr, runtime.ClientConfig{})
		t.Cleanup(func() { _ = p.c.Close() })
	}
	bootstrap := func(ctx context.Context, partitions int) error {
		return p.c.Bootstrap(ctx, uint32(partitions))
	}
	sc.Given(`^a running data platform$`, func() {})
	sc.Given(`^a fresh stream$`, fresh)
	sc.Given(`^a fresh stream bootstrapped with (\d+) partitions$`, func(ctx context.Context, n int) error {
		fresh()
		return bootstrap(ctx, n)
	})
	sc.When(`^I bootstrap the stream with (\d+) partitions$`, func(ctx context.Context, n int) {
		p.err = bootstrap(ctx, n)
	})
	sc.Then(`^the stream is ready$`, func(ctx context.Context) error {
		if p.err != nil {
			return fmt.Errorf("bootstrap: %w", p.err)
		}
		for _, topic := range runtime.BootstrapTopics {
			if _, err := p.tr.Partitions(ctx, topic); err != nil {
				return fmt.Errorf("topic %s after bootstrap: %w", topic, err)
			}
		}
		return nil
	})
	newConversation := func() { p.conversation = p.c.IDs().NewID() }
	sc.Given(`^a new conversation$`, newConversation)
	sc.When(`^I start another conversation$`, newConversation)
	sc.When(`^I assemble the conversation$`, p.assemble)
	sc.Then(`^the assembled message payload is "([^"]+)"$`, p.payloadAmong)
}

// assemble reads the conversation back from agent.commands.
func (p *platform) assemble(ctx context.Context) error {
	h, err := conversation.Assemble(ctx, p.tr, p.conversation, conversation.Options{Topics: []string{runtime.TopicCommands}})
	p.assembled = h
	return err
}

// payloadAmong checks that one assembled message has body want.
func (p *platform) payloadAmong(want string) error {
	for _, b := range p.assembled.Bodies() {
		if string(b) == want {
			return nil
		}
	}
	return fmt.Errorf("no assembled payload %q among %q", want, p.assembled.Bodies())
}
