package conformance

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/cucumber/godog"

	"github.com/lasergo/laser/conversation"
	"github.com/lasergo/laser/govern"
	"github.com/lasergo/laser/runtime"
	"github.com/lasergo/laser/wire"
)

// governanceSteps implements governance.feature: a policy decides before
// the effect, enforce blocks and observe lets through, and both leave
// evidence on agent.audit.
// businessTopic is where the governed business records go.
const businessTopic = "business.audit"

func governanceSteps(sc *godog.ScenarioContext, tr transport, t *testing.T) {
	p := &platform{}
	platformSteps(sc, tr, t, p)
	var governed *runtime.Client
	sc.Given(`^the laser is governed by a policy that blocks "([^"]+)" in "([^"]+)" mode$`, func(ctx context.Context, needle, mode string) error {
		m := govern.Mode(mode)
		if m != govern.Enforce && m != govern.Observe {
			return fmt.Errorf("unknown mode %q", mode)
		}
		// The reference's policy: block every body that starts with the
		// needle, allow the rest.
		policy := govern.GovernorFunc(func(_ context.Context, a *govern.Action) (govern.Decision, error) {
			if bytes.HasPrefix(a.Body, []byte(needle)) {
				return govern.Block("blocked by policy"), nil
			}
			return govern.Allow(), nil
		})
		if err := p.tr.EnsureTopics(ctx, 1, businessTopic); err != nil {
			return err
		}
		governed = runtime.NewClient(p.tr, runtime.ClientConfig{EffectGate: govern.NewGate(policy, govern.Config{Mode: m})})
		t.Cleanup(func() { _ = governed.Close() })
		return nil
	})
	sc.When(`^I send a governed agent command "([^"]+)"$`, func(ctx context.Context, body string) {
		_, p.err = governed.SendPlain(ctx, runtime.TopicCommands, wire.Provenance{Conversation: p.conversation}, []byte(body))
	})
	sc.When(`^I publish a governed business record "([^"]+)"$`, func(ctx context.Context, body string) error {
		topic := businessTopic
		prov := wire.Provenance{Conversation: p.conversation}
		headers, err := prov.Headers()
		if err != nil {
			return err
		}
		_, p.err = governed.Publish(ctx, topic, runtime.Outgoing{Key: prov.PartitionKey(), Headers: headers, Payload: []byte(body)})
		return nil
	})
	sc.Then(`^the send is rejected by policy$`, func(ctx context.Context) error {
		if !errors.Is(p.err, govern.ErrBlocked) {
			return fmt.Errorf("the send returned %v, want a policy block", p.err)
		}
		// And the blocked record never reached the log.
		h, err := conversation.Assemble(ctx, p.tr, p.conversation, conversation.Options{Topics: []string{runtime.TopicCommands, businessTopic}})
		if err != nil {
			return err
		}
		if len(h) != 0 {
			return fmt.Errorf("%d records of the conversation reached the log, want none", len(h))
		}
		return nil
	})
	sc.Then(`^the audit topic records a "([^"]+)" decision with outcome "([^"]+)"$`, func(ctx context.Context, verdict, outcome string) error {
		entries, err := govern.ReadAudit(ctx, p.tr, "")
		if err != nil {
			return err
		}
		conv := p.conversation.String()
		for _, e := range entries {
			if ev := e.Evidence; ev != nil && ev.Action.Conversation == conv && string(ev.Verdict) == verdict && string(ev.Outcome) == outcome {
				return nil
			}
		}
		return fmt.Errorf("no %q decision with outcome %q for conversation %s among %d decisions", verdict, outcome, conv, len(entries))
	})
}
