package runtime_test

import (
	"testing"

	"github.com/lasergo/laser/clock"
	"github.com/lasergo/laser/runtime"
	"github.com/lasergo/laser/wire"
)

// The capsule of a record that does not decode keeps the conversation its
// gen_ai.conversation.id header names, in either form, so it lands in that
// conversation's partition of the dead-letter topic, as the reference's does.
func TestUndecodableCapsuleKeepsTheHeaderConversation(t *testing.T) {
	for name, value := range map[string]func(wire.ID) wire.HeaderValue{
		"ULID text": func(id wire.ID) wire.HeaderValue { return wire.StringValue(id.String()) },
		"Uint128":   wire.Uint128Value,
	} {
		t.Run(name, func(t *testing.T) {
			log := newLog(t, 4, clock.System{})
			sink, dls := deadLetters()
			r := start(t, log, runtime.ConsumerConfig{
				Agent:   agent,
				Handler: handlerFunc(func(*runtime.Ctx) error { return nil }),
				Client:  runtime.NewClient(log, runtime.ClientConfig{IDs: &seqIDs{}}),
				Tuning:  runtime.Tuning{DeadLetterSink: sink},
			})
			conv := wire.IDFromUint128(0x01903c1faa000000, 42)
			headers := wire.Headers{
				{Key: wire.HeaderAgentVersion, Value: wire.Uint32Value(wire.AgentOpVersion)},
				{Key: wire.HeaderConversationID, Value: value(conv)},
			}
			raw(t, log, wire.PartitionKey(conv), headers, []byte("not an envelope"))
			dl := recv(t, dls, "dead letter")
			if dl.PublishErr != nil || dl.Capsule.Reason != wire.ReasonDecodeFailed {
				t.Fatalf("parked %+v (publish %v), want a decode_failed capsule", dl.Capsule, dl.PublishErr)
			}
			recs := readAll(t, log, dlq)
			if len(recs) != 1 {
				t.Fatalf("dlq has %d records", len(recs))
			}
			prov, err := wire.DecodeProvenance(recs[0].Headers)
			if err != nil || prov.Conversation != conv {
				t.Fatalf("capsule conversation %s (%v), want the record's %s", prov.Conversation, err, conv)
			}
			if err := r.shutdown(t); err != nil {
				t.Fatal(err)
			}
		})
	}
}
