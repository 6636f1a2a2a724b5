package wire

import (
	"bytes"
	"testing"
)

// TestDecodedBodyEditsTouchNothingElse pins the safety of the one-copy
// arena: a decoded body shares its allocation with the envelope's text
// fields, yet editing or appending to it changes no text field and not the
// input.
func TestDecodedBodyEditsTouchNothingElse(t *testing.T) {
	key := IdempotencyKey("order-1")
	op := "charge"
	target := AgentID("worker")
	env := &Envelope{Kind: KindCommand, Conversation: IDFromUint128(1, 2), Source: "planner",
		Target: &target, IdempotencyKey: &key, Operation: &op, Body: []byte("body-bytes")}
	payload, err := env.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	input := bytes.Clone(payload)
	var buf EnvelopeBuffer
	got, err := buf.Decode(payload)
	if err != nil {
		t.Fatal(err)
	}
	for i := range got.Body {
		got.Body[i] = 'X'
	}
	grown := append(got.Body, "appended past the body"...)
	_ = grown
	if !bytes.Equal(payload, input) {
		t.Fatal("editing the decoded body changed the input")
	}
	if got.Source != "planner" || *got.Target != "worker" || *got.IdempotencyKey != "order-1" || *got.Operation != "charge" {
		t.Fatalf("text fields changed: %q %q %q %q", got.Source, *got.Target, *got.IdempotencyKey, *got.Operation)
	}
	again, err := DecodeEnvelope(payload)
	if err != nil || string(again.Body) != "body-bytes" {
		t.Fatalf("re-decoded body %q, %v", again.Body, err)
	}
}
