package reliability_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/lasergo/laser/internal/figures"
	"github.com/lasergo/laser/runtime"
	"github.com/lasergo/laser/wire"
)

// wedgeError is an error whose Error dereferences its receiver: a typed nil
// of it panics when read.
type wedgeError struct{ text string }

func (e *wedgeError) Error() string { return e.text }

// hostileHandlerErrors are what a handler may return when it quotes a
// hostile body in its error: text that is not UTF-8 (which once made the
// capsule unencodable, stopping the consumer on every restart), text far
// larger than the record, control bytes, and errors that panic when read.
func hostileHandlerErrors(body []byte) []error {
	var typedNil *wedgeError
	return []error{
		runtime.Reject(fmt.Errorf("bad body %s", body)),
		errors.New("cannot store " + string(body)),
		runtime.Failf(wire.ErrorInvalidRequest, "refusing %s", body),
		runtime.Reject(fmt.Errorf("%s", strings.Repeat(string(body), 100_000))),
		runtime.Reject(typedNil),
		runtime.Reject(errors.New("")),
		fmt.Errorf("wrapped: %w", runtime.Reject(fmt.Errorf("\x00\x01\x7f%s\u0085", body))),
	}
}

// hostileHeaderValues are provenance header values a producer may write:
// control characters in agent ids, bytes that are not UTF-8, 255-byte
// values (the idempotency key ends in n, so records stay distinct), and a
// binary value under an unknown key.
func hostileHeaderValues(n int) []wire.Headers {
	str := func(k string, v []byte) wire.Header {
		return wire.Header{Key: k, Value: wire.HeaderValue{Kind: wire.HeaderKindString, Data: v}}
	}
	conv := str(wire.HeaderConversationID, []byte(hostileConv.String()))
	long := func(c byte) []byte { return fmt.Appendf(nil, "%s%03d", strings.Repeat(string(c), 252), n) }
	return []wire.Headers{
		{conv},
		{conv, str(wire.HeaderAgentID, []byte("shop\x00\x1b[31m"))},
		{conv, str(wire.HeaderTarget, []byte("hostile-worker\n"))},
		{conv, str(wire.HeaderAgentID, []byte{0xff, 0xfe})},
		{conv, str(wire.HeaderIdempotencyKey, long('k')), str(wire.HeaderCorrelationID, long('c')), str(wire.HeaderAgentID, long('a'))},
		{conv, {Key: "x-binary", Value: wire.HeaderValue{Kind: wire.HeaderKindRaw, Data: []byte{0xff, 0x00, 0xfe}}}},
	}
}

// TestWedgeHostileErrorsAndHeadersNeverStopTheConsumer crosses every
// hostile header set with every hostile handler error: each record is
// parked exactly once with a capsule that decodes (its detail valid UTF-8
// and within the cap), and the consumer keeps running and commits through
// a sentinel published last. Nothing a producer or a handler writes may
// stop (wedge) a consumer.
func TestWedgeHostileErrorsAndHeadersNeverStopTheConsumer(t *testing.T) {
	overTransports(t, func(t *testing.T, w *world) {
		body := []byte("\xff\xfe\x00 body")
		errs := hostileHandlerErrors(body)
		w.fail = func(m *runtime.Message) error {
			var i int
			if _, err := fmt.Sscanf(string(m.Body()[len(body):]), "#%d", &i); err != nil || i >= len(errs) {
				return nil
			}
			return errs[i]
		}
		h := w.start(runtime.Serial, nil)
		var positions []runtime.Position
		for i := range errs {
			for _, headers := range hostileHeaderValues(i) {
				pos, err := w.publish(headers, fmt.Appendf(append([]byte{}, body...), "#%d", i))
				if err != nil {
					t.Fatal(err)
				}
				positions = append(positions, pos)
			}
		}
		sentinel, err := w.publish(plainHeaders(t), []byte("sentinel"))
		if err != nil {
			t.Fatal(err)
		}
		w.awaitHandled(sentinel)
		w.running(h)

		capsules := w.capsules()
		reasons := map[wire.DeadLetterReason]int{}
		for _, pos := range positions {
			caps := capsules[pos]
			if len(caps) != 1 {
				t.Errorf("record %s: %d capsules, want exactly 1", pos, len(caps))
				continue
			}
			d := caps[0].dl
			reasons[d.Reason]++
			if d.Detail != nil && (!utf8.ValidString(*d.Detail) || len(*d.Detail) > runtime.MaxDeadLetterDetail) {
				t.Errorf("record %s: detail of %d bytes, valid UTF-8 %v", pos, len(*d.Detail), utf8.ValidString(*d.Detail))
			}
			if _, err := wire.DecodeProvenance(wire.MustEncodeHeaders(caps[0].headers)); err != nil {
				t.Errorf("record %s: capsule headers do not decode: %v", pos, err)
			}
		}
		w.shutdown(h)
		w.committedThrough(sentinel)
		figures.Record(t, figures.Row{Section: "wedge", Case: w.name, Values: []figures.Value{
			figures.V("records", len(positions)),
			figures.V("rejected", reasons[wire.ReasonRejected]),
			figures.V("retry_exhausted", reasons[wire.ReasonRetryExhausted]),
			figures.V("decode_failed", reasons[wire.ReasonDecodeFailed]),
			figures.V("consumer_stops", 0),
		}})
	})
}
