package conformance

import (
	"fmt"
	"testing"

	"github.com/cucumber/godog"

	"github.com/lasergo/laser/runtime"
	"github.com/lasergo/laser/wire"
)

// agentMustUnderstandSteps implements agent_must_understand.feature: an
// envelope demanding feature bits its receiver lacks is refused by the
// receiver's decoding, the one every consumer runs.
func agentMustUnderstandSteps(sc *godog.ScenarioContext, _ transport, _ *testing.T) {
	var decodeErr error
	var unmet uint64
	build := func(bits uint64) error {
		record, conv := wire.ID{1}, wire.ID{2}
		env := &wire.Envelope{Kind: wire.KindEvent, Record: &record, Conversation: conv, Source: "source-agent", Body: []byte("gated"), MustUnderstand: bits}
		payload, err := env.Marshal()
		if err != nil {
			return err
		}
		back, err := wire.DecodeEnvelope(payload)
		if err != nil {
			return err
		}
		if back.MustUnderstand != bits {
			return fmt.Errorf("the marker did not round-trip: %b, want %b", back.MustUnderstand, bits)
		}
		// The receiver implements no must-understand feature.
		unmet = back.UnmetRequirements(0)
		rec := &runtime.Incoming{Headers: wire.MustEncodeHeaders(wire.EnvelopeHeaders(back, wire.ContentRaw)), Payload: payload}
		_, decodeErr = runtime.DecodeRecord(runtime.TopicCommands, rec, 0)
		return nil
	}
	sc.When(`^I build an agent event requiring feature bits the receiver lacks$`, func() error { return build(0b101) })
	sc.When(`^I build a plain agent event$`, func() error { return build(0) })
	sc.Then(`^the receiver rejects it as not understood$`, func() error {
		if unmet == 0 || decodeErr == nil {
			return fmt.Errorf("the receiver accepted an envelope requiring features it lacks (unmet %b)", unmet)
		}
		return nil
	})
	sc.Then(`^the receiver understands it$`, func() error {
		if unmet != 0 || decodeErr != nil {
			return fmt.Errorf("the receiver refused a plain envelope: %w", decodeErr)
		}
		return nil
	})
}
