package reliability_test

import (
	"bytes"
	"errors"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/lasergo/laser/iggy"
	"github.com/lasergo/laser/internal/figures"
	"github.com/lasergo/laser/runtime"
	"github.com/lasergo/laser/wire"
)

// outcome is what the consumer must do with a hostile record.
type outcome uint8

const (
	// parkedUndecodable: dead-lettered as decode_failed, payload verbatim.
	parkedUndecodable outcome = iota
	// handledLeniently: it decodes (reading is lenient where the reference
	// is) and reaches the handler.
	handledLeniently
	// parkedByHandler: it decodes, the handler refuses it, and the capsule
	// still goes out although its provenance cannot be re-encoded.
	parkedByHandler
)

type hostileRecord struct {
	name    string
	headers wire.Headers
	payload []byte
	want    outcome
	// iggyRefuses marks records no transport will publish (a header value
	// over Iggy's 255 bytes; the embedded log refuses what Iggy refuses):
	// they never reach a log.
	iggyRefuses bool
}

var hostileConv = wire.IDFromUint128(0x4057, 1)

// plainHeaders are valid provenance headers plus extra ones.
func plainHeaders(t *testing.T, extra ...wire.Header) wire.Headers {
	t.Helper()
	prov := wire.Provenance{Conversation: hostileConv, Agent: "hostile-sender"}
	h, err := prov.Headers()
	if err != nil {
		t.Fatal(err)
	}
	return append(h, extra...)
}

// validEnvelope returns a valid command, its canonical bytes and headers.
func validEnvelope(t *testing.T, mutate func(*wire.Envelope)) ([]byte, wire.Headers) {
	t.Helper()
	rec, corr := wire.IDFromUint128(0x4057, 2), wire.IDFromUint128(0x4057, 3)
	env := &wire.Envelope{Kind: wire.KindCommand, Record: &rec, Conversation: hostileConv, Source: "hostile-sender", Correlation: &corr, Body: []byte(`{"ok":true}`)}
	if mutate != nil {
		mutate(env)
	}
	b, err := env.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	return b, wire.EnvelopeHeaders(env, wire.ContentJSON)
}

func agdxHeaders(av wire.HeaderValue, ct wire.HeaderValue) wire.Headers {
	return wire.Headers{
		{Key: wire.HeaderAgentVersion, Value: av},
		{Key: wire.HeaderContentType, Value: ct},
		{Key: wire.HeaderConversationID, Value: wire.Uint128Value(hostileConv)},
	}
}

func randomBytes(seed uint64, n int) []byte {
	rng := rand.New(rand.NewPCG(seed, 0xb0d7))
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(rng.Uint32())
	}
	b[0] = 0xff // a CBOR break code: never a valid item start
	return b
}

func hostileRecords(t *testing.T) []hostileRecord {
	env, envHeaders := validEnvelope(t, nil)
	av1 := wire.Uint32Value(wire.AgentOpVersion)
	ctJSON := wire.Uint8Value(uint8(wire.ContentJSON))
	invalid, _ := validEnvelope(t, func(e *wire.Envelope) { e.Correlation = nil }) // a command needs a correlation
	mustUnderstand, _ := validEnvelope(t, func(e *wire.Envelope) { e.MustUnderstand = 1 << 7 })
	str := func(k, v string) wire.Header { return wire.Header{Key: k, Value: wire.StringValue(v)} }
	rawStr := func(k string, v []byte) wire.Header {
		return wire.Header{Key: k, Value: wire.HeaderValue{Kind: wire.HeaderKindString, Data: v}}
	}
	long := func(c byte, n int) string { return strings.Repeat(string(c), n) }
	return []hostileRecord{
		{name: "no_headers", payload: []byte("naked")},
		{name: "malformed_cbor", headers: agdxHeaders(av1, ctJSON), payload: []byte{0xbf, 0x64, 0x6b, 0x69, 0xff, 0x00}},
		{name: "truncated_envelope", headers: envHeaders, payload: env[:len(env)/2]},
		{name: "trailing_bytes", headers: envHeaders, payload: append(append([]byte{}, env...), 0x00)},
		{name: "cbor_array_not_envelope", headers: agdxHeaders(av1, ctJSON), payload: []byte{0x83, 0x01, 0x02, 0x03}},
		{name: "cbor_map_garbage", headers: agdxHeaders(av1, ctJSON), payload: []byte{0xa2, 0x64, 'k', 'i', 'n', 'd', 0x65, 'b', 'o', 'g', 'u', 's', 0x61, 'x', 0xf6}},
		{name: "cbor_envelope_wrong_types", headers: agdxHeaders(av1, ctJSON), payload: append([]byte{0xa2, 0x64, 'k', 'i', 'n', 'd', 0x67, 'c', 'o', 'm', 'm', 'a', 'n', 'd', 0x6c}, append([]byte("conversation"), 0x61, 'x')...)},
		{name: "envelope_fails_validation", headers: envHeaders, payload: invalid},
		{name: "must_understand_unmet", headers: envHeaders, payload: mustUnderstand},
		{name: "ct_as_string", headers: agdxHeaders(av1, wire.StringValue("json")), payload: env},
		{name: "ct_as_string_plain", headers: plainHeaders(t, str(wire.HeaderContentType, "json")), payload: []byte("plain")},
		{name: "av_as_u8", headers: agdxHeaders(wire.Uint8Value(1), ctJSON), payload: env},
		{name: "av_2", headers: agdxHeaders(wire.Uint32Value(2), ctJSON), payload: env},
		{name: "conversation_typed_without_av", headers: wire.Headers{{Key: wire.HeaderConversationID, Value: wire.Uint128Value(hostileConv)}}, payload: []byte("typed")},
		{name: "invalid_utf8_agent", headers: wire.Headers{str(wire.HeaderConversationID, hostileConv.String()), rawStr(wire.HeaderAgentID, []byte{0xff, 0xfe, 'a'})}, payload: []byte("utf8")},
		{name: "invalid_utf8_idempotency_key", headers: plainHeaders(t, rawStr(wire.HeaderIdempotencyKey, []byte{'k', 0xc3, 0x28})), payload: []byte("utf8")},
		{name: "fence_not_a_number", headers: plainHeaders(t, str(wire.HeaderFence, "12x")), payload: []byte("fence")},
		{name: "fence_255_digits", headers: plainHeaders(t, str(wire.HeaderFence, long('9', 255))), payload: []byte("fence")},
		{name: "conversation_255_bytes", headers: wire.Headers{str(wire.HeaderConversationID, long('Z', 255))}, payload: []byte("conv")},
		{name: "deadline_overflow", headers: plainHeaders(t, str(wire.HeaderDeadline, "99999999999999999999999")), payload: []byte("deadline")},
		{name: "body_1MiB_not_cbor", headers: agdxHeaders(av1, ctJSON), payload: randomBytes(1, 1<<20)},
		{name: "body_1MiB_plain", headers: plainHeaders(t), payload: randomBytes(2, 1<<20), want: handledLeniently},
		{name: "unknown_headers_flood", headers: floodHeaders(t, 300), payload: []byte("flood"), want: handledLeniently},
		{name: "values_255_bytes_lenient", headers: plainHeaders(t, str(wire.HeaderIdempotencyKey, long('k', 255)), str(wire.HeaderCorrelationID, long('c', 255))), payload: []byte("long"), want: handledLeniently},
		// Every value fits Iggy's 255 bytes, but together they pass the
		// provenance soft cap of 1024 bytes, so the capsule cannot carry them.
		{name: "provenance_over_soft_cap", headers: wire.Headers{
			str(wire.HeaderConversationID, hostileConv.String()),
			str(wire.HeaderAgentID, long('a', 255)),
			str(wire.HeaderIdempotencyKey, long('r', 255)),
			str(wire.HeaderCorrelationID, long('c', 255)),
			str(wire.HeaderParentConversation, hostileConv.String()),
			str(wire.HeaderRootConversation, hostileConv.String()),
			str(wire.HeaderFence, "18446744073709551615"),
			str(wire.HeaderUsageInputTokens, "18446744073709551615"),
			str(wire.HeaderUsageOutputTokens, "18446744073709551615"),
		}, payload: []byte("reject:long"), want: parkedByHandler},
		{name: "values_300_bytes", headers: plainHeaders(t, str(wire.HeaderIdempotencyKey, long('q', 300))), payload: []byte("reject:300"), want: parkedByHandler, iggyRefuses: true},
	}
}

// floodHeaders is valid provenance under n unknown headers.
func floodHeaders(t *testing.T, n int) wire.Headers {
	h := plainHeaders(t)
	for i := range n {
		h = append(h, wire.Header{Key: "x-flood-" + strings.Repeat("f", i%50), Value: wire.Uint32Value(uint32(i))})
	}
	return h
}

// TestHostileRecordsAreDeadLetteredVerbatim publishes malformed and
// oversized records: every undecodable one is dead-lettered exactly once as
// decode_failed with its payload byte for byte, those the reference reads
// leniently are handled (or, refused by the handler, parked even though
// their provenance no longer re-encodes), and the consumer keeps running:
// a sentinel published last is handled and everything is committed.
func TestHostileRecordsAreDeadLetteredVerbatim(t *testing.T) {
	overTransports(t, func(t *testing.T, w *world) {
		h := w.start(runtime.Serial, nil)
		records := hostileRecords(t)
		positions := make([]runtime.Position, len(records))
		refused := 0
		for i, r := range records {
			pos, err := w.publish(r.headers, r.payload)
			switch {
			case r.iggyRefuses:
				if !errors.Is(err, iggy.ErrBadHeader) || !errors.Is(err, wire.ErrBadHeader) {
					t.Errorf("%s: %s publish error %v, want ErrBadHeader", r.name, w.name, err)
				}
				refused++
				positions[i] = runtime.Position{Offset: ^uint64(0)}
				continue
			case err != nil:
				t.Fatalf("%s: publish: %v", r.name, err)
			}
			positions[i] = pos
		}
		sentinel, err := w.publish(plainHeaders(t), []byte("sentinel"))
		if err != nil {
			t.Fatal(err)
		}
		w.awaitHandled(sentinel)
		w.running(h)

		capsules := w.capsules()
		parked, handled := 0, 0
		for i, r := range records {
			pos := positions[i]
			if r.iggyRefuses {
				continue
			}
			caps := capsules[pos]
			w.mu.Lock()
			times, bodyLen := w.handled[pos], w.bodies[pos]
			w.mu.Unlock()
			switch r.want {
			case parkedUndecodable:
				if len(caps) != 1 {
					t.Errorf("%s: %d capsules, want 1", r.name, len(caps))
					continue
				}
				c := caps[0].dl
				if c.Reason != wire.ReasonDecodeFailed || c.Attempts != 0 || c.Detail != nil {
					t.Errorf("%s: capsule %s attempts %d detail %v, want decode_failed, 0, none", r.name, c.Reason, c.Attempts, c.Detail)
				}
				if !bytes.Equal(c.Payload, r.payload) {
					t.Errorf("%s: capsule payload (%d bytes) is not the record's payload verbatim (%d bytes)", r.name, len(c.Payload), len(r.payload))
				}
				if times != 0 {
					t.Errorf("%s: an undecodable record reached the handler", r.name)
				}
				sunk := w.sinkFor(pos)
				if len(sunk) != 1 || runtime.CodeOf(sunk[0].Cause) != runtime.CodeCodec || sunk[0].Message != nil {
					t.Errorf("%s: sink heard %+v, want one codec cause without a message", r.name, sunk)
				}
				parked++
			case handledLeniently:
				if times != 1 || len(caps) != 0 {
					t.Errorf("%s: handled %d times with %d capsules, want handled once", r.name, times, len(caps))
				}
				if want := len(r.payload); bodyLen != want {
					t.Errorf("%s: handler saw a %d-byte body, want %d", r.name, bodyLen, want)
				}
				handled++
			case parkedByHandler:
				if times != 1 || len(caps) != 1 {
					t.Errorf("%s: handled %d times with %d capsules, want once and one", r.name, times, len(caps))
					continue
				}
				c := caps[0]
				if c.dl.Reason != wire.ReasonRejected || !bytes.Equal(c.dl.Payload, r.payload) {
					t.Errorf("%s: capsule %s with payload %q, want rejected with %q", r.name, c.dl.Reason, c.dl.Payload, r.payload)
				}
				// The oversized provenance is dropped from the capsule; what
				// locates the original stays.
				prov, err := wire.DecodeProvenance(wire.MustEncodeHeaders(c.headers))
				if err != nil || prov.Conversation != hostileConv || prov.CausalParent == nil || prov.IdempotencyKey != "" {
					t.Errorf("%s: capsule provenance %+v (%v), want the conversation and causal parent only", r.name, prov, err)
				}
				parked++
			}
		}
		w.logs.waitFor(t, "dead-letter provenance does not re-encode")
		w.shutdown(h)
		w.committedThrough(sentinel)
		figures.Record(t, figures.Row{Section: "hostile", Case: w.name, Values: []figures.Value{
			figures.V("records", len(records)),
			figures.V("dead_lettered", parked),
			figures.V("handled", handled),
			figures.V("refused_at_publish", refused),
			figures.V("largest_payload", 1<<20),
		}})
	})
}
