package runtime

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"testing"

	"github.com/lasergo/laser/internal/fuzzcheck"
	"github.com/lasergo/laser/wire"
)

// parkingLot is a transport that keeps what is published and refuses what
// Iggy would refuse: a header key or value outside 1..255 bytes.
type parkingLot struct {
	Transport // nil: only Publish is used by the dead-letter path
	published []Outgoing
}

func (p *parkingLot) Publish(_ context.Context, topic string, recs ...Outgoing) ([]Position, error) {
	for _, r := range recs {
		for _, h := range r.Headers {
			if len(h.Key) == 0 || len(h.Key) > 255 || len(h.Value.Data) == 0 || len(h.Value.Data) > 255 {
				return nil, fmt.Errorf("publish %s: header %q of %d bytes refused", topic, h.Key, len(h.Value.Data))
			}
		}
	}
	p.published = append(p.published, recs...)
	pos := make([]Position, len(recs))
	for i := range pos {
		pos[i] = Position{Offset: uint64(len(p.published) - len(recs) + i)}
	}
	return pos, nil
}

// hostileError builds a handler error of one of the classes a handler can
// return, carrying text.
func hostileError(kind uint8, text string) error {
	switch kind % 6 {
	case 0:
		return Reject(fmt.Errorf("bad body %s", text))
	case 1:
		return errors.New(text)
	case 2:
		return Failf(wire.ErrorInvalidRequest, "%s", text)
	case 3:
		return &Error{Code: CodeRejected, Msg: text, Err: errors.New(text)}
	case 4:
		panic(text)
	}
	var e *typedNil
	return Reject(e)
}

type typedNil struct{ text string }

func (e *typedNil) Error() string { return e.text }

// FuzzDeadLetterPath drives arbitrary handler errors and header bytes
// through the pipeline and the dead-letter path: whatever they are, the
// record must end handled or parked (process returns no error, so the
// consumer carries on and commits), and every capsule must decode. The
// header bytes are what a hostile peer can put on the log, read as the
// Iggy transport reads them (wire.ParseHeaders; a record that fails it
// arrives without headers).
func FuzzDeadLetterPath(f *testing.F) {
	for _, s := range deadLetterSeeds() {
		f.Add(s.kind, s.text, s.headers, s.payload)
	}
	f.Fuzz(checkDeadLetterPath)
}

// deadLetterSeed is one input of FuzzDeadLetterPath.
type deadLetterSeed struct {
	kind    uint8
	text    string
	headers []byte
	payload []byte
}

// deadLetterSeeds are a record per handler-error class, with hostile
// provenance values: invalid UTF-8, control bytes, an over-long agent (which
// no reader admits), a malformed fence and deadline.
func deadLetterSeeds() []deadLetterSeed {
	seed := func(kind uint8, text, agent, target, idem, corr, extraKey, extraValue string, payload []byte) deadLetterSeed {
		headers := wire.Headers{{Key: wire.HeaderConversationID, Value: wire.StringValue(wire.IDFromUint128(1, 2).String())}}
		for _, kv := range [][2]string{{wire.HeaderAgentID, agent}, {wire.HeaderTarget, target}, {wire.HeaderIdempotencyKey, idem}, {wire.HeaderCorrelationID, corr}, {extraKey, extraValue}} {
			if kv[0] != "" {
				headers = append(headers, wire.Header{Key: kv[0], Value: wire.StringValue(kv[1])})
			}
		}
		return deadLetterSeed{kind, text, rawHeaderBytes(headers), payload}
	}
	return []deadLetterSeed{
		seed(0, "\xff\xfe", "shop", "", "order-1", "", "x-extra", "v", []byte("body")),
		seed(1, "plain failure", "a\x01b", "t\x7f", "", "corr", "", "", []byte{0xff}),
		seed(2, "", "", "", "", "", "", "", []byte(nil)),
		seed(3, "\x00\x80", string(make([]byte, 300)), "target", "\xc3\x28", "\xff", "\xff", "\xfe", []byte("\x00")),
		seed(4, "panic \xff", "agent", "agent", "k", "c", "agdx.fence", "12x", []byte("p")),
		seed(5, "typed nil", "", "", "", "", wire.HeaderDeadline, "1", []byte("d")),
	}
}

// rawHeaderBytes lays headers out as Iggy carries them without checking
// them, as a hostile producer can: a field past 255 bytes goes out with
// its length as it is, which no reader admits.
func rawHeaderBytes(h wire.Headers) []byte {
	var out []byte
	for _, e := range h {
		out = append(out, byte(wire.HeaderKindString))
		out = binary.LittleEndian.AppendUint32(out, uint32(len(e.Key)))
		out = append(out, e.Key...)
		out = append(out, byte(e.Value.Kind))
		out = binary.LittleEndian.AppendUint32(out, uint32(len(e.Value.Data)))
		out = append(out, e.Value.Data...)
	}
	return out
}

// checkDeadLetterPath is FuzzDeadLetterPath's harness.
func checkDeadLetterPath(t *testing.T, kind uint8, text string, headerBytes, payload []byte) {
	lot := &parkingLot{}
	c, err := NewConsumer(lot, ConsumerConfig{
		Topic:   "in",
		Group:   "g",
		Handler: HandlerFunc(func(*Ctx) error { return hostileError(kind, text) }),
		Client:  NewClient(lot, ClientConfig{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}),
		Tuning: Tuning{
			Retry: RetryPolicy{MaxAttempts: 1},
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	headers, err := wire.ParseHeaders(headerBytes)
	if err != nil {
		headers = wire.EncodedHeaders{}
	}
	rec := &Incoming{Position: Position{Partition: 0, Offset: 7}, Headers: headers, Payload: payload}
	o, err := c.process(context.Background(), rec, c.decode(nil, rec))
	if err != nil {
		t.Fatalf("the consumer would stop on this record: %v", err)
	}
	switch {
	case o == parked && len(lot.published) != 1:
		t.Fatalf("parked with %d capsules published", len(lot.published))
	case o != parked && len(lot.published) != 0:
		t.Fatalf("outcome %d published %d capsules", o, len(lot.published))
	case o == handled:
		t.Fatal("a failing handler cannot end handled")
	}
	for _, out := range lot.published {
		d, err := wire.DecodeDeadLetter(out.Payload)
		if err != nil {
			t.Fatalf("capsule does not decode: %v", err)
		}
		if d.Source.Offset != 7 || string(d.Payload) != string(payload) {
			t.Fatalf("capsule %+v", d)
		}
		if d.Detail != nil && len(*d.Detail) > MaxDeadLetterDetail {
			t.Fatalf("detail of %d bytes", len(*d.Detail))
		}
		if _, err := wire.DecodeProvenance(wire.MustEncodeHeaders(out.Headers)); err != nil {
			t.Fatalf("capsule headers do not decode: %v", err)
		}
	}
}

// TestFuzzHarnessTakesAnyInput runs FuzzDeadLetterPath's harness over
// fuzzcheck's hostile header bytes and payloads, with every handler-error
// class, as a plain test, so a harness that cannot fuzz fails every go
// test run.
func TestFuzzHarnessTakesAnyInput(t *testing.T) {
	seeds := deadLetterSeeds()
	var flat [][]byte
	for _, s := range seeds {
		flat = append(flat, s.headers)
	}
	for i, p := range fuzzcheck.Pairs(fuzzcheck.Inputs(1, flat...)) {
		seeds = append(seeds, deadLetterSeed{uint8(i), string(p[1]), p[0], p[1]})
	}
	fuzzcheck.Run(t, seeds, func(t *testing.T, s deadLetterSeed) { checkDeadLetterPath(t, s.kind, s.text, s.headers, s.payload) })
}
