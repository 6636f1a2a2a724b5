package runtime

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/lasergo/laser/wire"
)

func TestAnswerCodeMapsErrorClasses(t *testing.T) {
	tests := []struct {
		err  error
		want wire.ErrorCode
	}{
		{Failf(wire.ErrorToolFailure, "card declined"), wire.ErrorToolFailure},
		{fmt.Errorf("wrapped: %w", Failf(wire.ErrorUnauthorized, "no")), wire.ErrorUnauthorized},
		{context.Canceled, wire.ErrorCancelled},
		{context.DeadlineExceeded, wire.ErrorDeadlineExceeded},
		{&Error{Code: CodeUnsupported, Msg: "x"}, wire.ErrorUnsupported},
		{Reject(errors.New("bad")), wire.ErrorInvalidRequest},
		{&Error{Code: CodeConfig, Msg: "x"}, wire.ErrorInternal},
	}
	for _, tt := range tests {
		if got := answerCode(tt.err); got != tt.want {
			t.Errorf("answerCode(%v) = %s, want %s", tt.err, got, tt.want)
		}
	}
}

func TestFailfIsPermanentRejectedAndCarriesItsAnswer(t *testing.T) {
	cause := errors.New("ledger closed")
	err := Failf(wire.ErrorToolFailure, "%w", cause)
	if IsRetryable(err) || !errors.Is(err, cause) || err.Error() != "ledger closed" {
		t.Fatalf("failure: retryable %v, is cause %v, text %q", IsRetryable(err), errors.Is(err, cause), err)
	}
	if !errors.Is(err, &Error{Code: CodeRejected}) || CodeOf(err) != CodeToolFailure || answerCode(err) != wire.ErrorToolFailure {
		t.Fatalf("Failf: is rejected %v, code %s, answer %s", errors.Is(err, &Error{Code: CodeRejected}), CodeOf(err), answerCode(err))
	}
}

func TestGensupportFailRequestPassesRetryableErrorsThrough(t *testing.T) {
	// A retryable error returns before the context is touched: no answer is
	// sent while the consumer may still retry.
	err := errors.New("busy")
	if got := (*Ctx)(nil).FailRequest(err); got != err {
		t.Fatalf("FailRequest = %v, want the error itself", got)
	}
	if (*Ctx)(nil).FailRequest(nil) != nil {
		t.Fatal("FailRequest(nil) is not nil")
	}
}

func TestGensupportDecodeInputNamesTheOperation(t *testing.T) {
	m := &Message{Payload: []byte("{"), ContentType: wire.ContentJSON, HasContentType: true}
	var v struct{ A int }
	err := m.DecodeInput("charge", &v, wire.ContentCBOR)
	if CodeOf(err) != CodeRejected || IsRetryable(err) {
		t.Fatalf("DecodeInput = %v, want a rejection", err)
	}
	if want := `operation "charge": decode json body`; len(err.Error()) < len(want) || err.Error()[:len(want)] != want {
		t.Fatalf("DecodeInput error %q, want prefix %q", err, want)
	}
}

func TestDecodeReadsARawBodyByTheDefaultContentType(t *testing.T) {
	// The reference's contract and ctx.respond stamp raw on a JSON body.
	m := &Message{Payload: []byte(`{"A":7}`), ContentType: wire.ContentRaw, HasContentType: true}
	var v struct{ A int }
	if err := m.Decode(&v, wire.ContentJSON); err != nil || v.A != 7 {
		t.Fatalf("Decode = %+v, %v; want the raw body read as JSON", v, err)
	}
	if err := m.Decode(&v, wire.ContentRaw); CodeOf(err) != CodeRejected {
		t.Fatalf("Decode with a raw default = %v, want a rejection: raw is no encoding", err)
	}
	m.ContentType = wire.ContentCBOR
	if err := m.Decode(&v, wire.ContentJSON); CodeOf(err) != CodeRejected {
		t.Fatalf("Decode of a JSON body stamped cbor = %v, want a rejection: a stated encoding wins", err)
	}
}

func TestLaterOptionsWin(t *testing.T) {
	spec := specOf([]Option{WithOperation("a"), WithReplyTopic("billing.responses"), WithReplyTopic("mine"), WithTimeout(time.Second)})
	if spec.operation != "a" || spec.reply() != "mine" || spec.wait() != time.Second {
		t.Fatalf("the call's own options lose: operation %q, reply topic %q, timeout %s", spec.operation, spec.reply(), spec.wait())
	}
}

func TestStreamBufferOption(t *testing.T) {
	spec := specOf([]Option{WithOperation("a"), WithStreamBuffer(3)})
	if spec.operation != "a" || spec.buffered() != 3 {
		t.Fatalf("operation %q, buffer %d", spec.operation, spec.buffered())
	}
	if spec := specOf([]Option(nil)); spec.buffered() != DefaultStreamBuffer {
		t.Fatalf("no buffer option buffers %d, want the default", spec.buffered())
	}
	for _, n := range []int{0, -2} {
		if spec := specOf([]Option{WithStreamBuffer(n)}); spec.buffered() != 1 {
			t.Fatalf("WithStreamBuffer(%d) buffers %d, want 1", n, spec.buffered())
		}
	}
}
