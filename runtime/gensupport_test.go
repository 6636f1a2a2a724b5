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
	if !errors.Is(err, ErrRejected) || CodeOf(err) != CodeToolFailure || answerCode(err) != wire.ErrorToolFailure {
		t.Fatalf("Failf: is rejected %v, code %s, answer %s", errors.Is(err, ErrRejected), CodeOf(err), answerCode(err))
	}
}

func TestGensupportFailRequestPassesRetryableErrorsThrough(t *testing.T) {
	// A retryable error returns before the context is touched: no answer is
	// sent while the consumer may still retry.
	err := errors.New("busy")
	if got := FailRequest(nil, err); got != err {
		t.Fatalf("FailRequest = %v, want the error itself", got)
	}
	if FailRequest(nil, nil) != nil {
		t.Fatal("FailRequest(nil) is not nil")
	}
}

func TestGensupportDecodeInputNamesTheOperation(t *testing.T) {
	m := &Message{Payload: []byte("{"), ContentType: wire.ContentJSON, HasContentType: true}
	var v struct{ A int }
	err := DecodeInput(m, "charge", &v, wire.ContentCBOR)
	if !errors.Is(err, ErrRejected) || IsRetryable(err) {
		t.Fatalf("DecodeInput = %v, want a rejection", err)
	}
	if want := `operation "charge": decode json body`; len(err.Error()) < len(want) || err.Error()[:len(want)] != want {
		t.Fatalf("DecodeInput error %q, want prefix %q", err, want)
	}
}

func TestGensupportMergeSendOptionsDoesNotShareBase(t *testing.T) {
	base := make([]SendOption, 1, 4)
	base[0] = WithOperation("a")
	one := MergeSendOptions(base, []SendOption{WithOperation("b")})
	two := MergeSendOptions(base, []SendOption{WithOperation("c")})
	if got := specOf(one, SendOption.applyEvent).operation; got != "b" {
		t.Fatalf("first merge ends with operation %q, want b", got)
	}
	if got := specOf(two, SendOption.applyEvent).operation; got != "c" {
		t.Fatalf("second merge ends with operation %q, want c", got)
	}
	if got := MergeSendOptions(base, nil); len(got) != 1 {
		t.Fatalf("merge without extra options has %d options", len(got))
	}
}

func TestGensupportMergeRequestOptionsPutsTheReplyTopicBetween(t *testing.T) {
	base := []SendOption{WithOperation("a")}
	spec := specOf(MergeRequestOptions(base, "billing.responses", nil), RequestOption.applyRequest)
	if spec.operation != "a" || spec.reply() != "billing.responses" {
		t.Fatalf("operation %q, reply topic %q", spec.operation, spec.reply())
	}
	spec = specOf(MergeRequestOptions(base, "billing.responses", []RequestOption{WithReplyTopic("mine"), WithTimeout(time.Second)}), RequestOption.applyRequest)
	if spec.reply() != "mine" || spec.wait() != time.Second {
		t.Fatalf("the call's own options lose: reply topic %q, timeout %s", spec.reply(), spec.wait())
	}
	if spec := specOf(MergeRequestOptions(nil, "", nil), RequestOption.applyRequest); spec.reply() != TopicResponses {
		t.Fatalf("no reply topic reads %q, want the default", spec.reply())
	}
}

func TestGensupportMergeStreamOptionsKeepsTheStreamBuffer(t *testing.T) {
	base := []SendOption{WithOperation("a")}
	spec := specOf(MergeStreamOptions(base, "billing.responses", []StreamOption{WithStreamBuffer(3), WithTimeout(time.Second)}), StreamOption.applyStream)
	if spec.operation != "a" || spec.reply() != "billing.responses" || spec.buffered() != 3 || spec.wait() != time.Second {
		t.Fatalf("operation %q, reply topic %q, buffer %d, timeout %s", spec.operation, spec.reply(), spec.buffered(), spec.wait())
	}
	if spec := specOf(MergeStreamOptions(nil, "", nil), StreamOption.applyStream); spec.buffered() != DefaultStreamBuffer {
		t.Fatalf("no buffer option buffers %d, want the default", spec.buffered())
	}
	for _, n := range []int{0, -2} {
		if spec := specOf([]StreamOption{WithStreamBuffer(n)}, StreamOption.applyStream); spec.buffered() != 1 {
			t.Fatalf("WithStreamBuffer(%d) buffers %d, want 1", n, spec.buffered())
		}
	}
}
