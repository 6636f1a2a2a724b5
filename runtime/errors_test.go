package runtime

import (
	"errors"
	"fmt"
	"testing"

	"github.com/lasergo/laser/wire"
)

// TestARemoteFailureIsAnErrorThatSaysWhoAnswered: an AGDX error answer
// decodes to an *Error marked remote, with the sender, the wire code as
// received, the answer's flag and message, and the text a RemoteError had.
func TestARemoteFailureIsAnErrorThatSaysWhoAnswered(t *testing.T) {
	re := decoded(t, wire.ErrorInvalidRequest)
	if !re.Remote() || re.From != "billing" || re.Wire != wire.ErrorInvalidRequest || re.Msg != "failed" || re.Retryable {
		t.Fatalf("decoded %+v, want a remote invalid_request from billing saying failed", re)
	}
	if got, want := re.Error(), "billing: failed (invalid_request)"; got != want {
		t.Fatalf("Error() = %q, want %q", got, want)
	}
	if local := (&Error{Code: CodeRejected, Msg: "no"}); local.Remote() {
		t.Fatal("a local *Error reports itself remote")
	}
}

// TestATransportFailureReadsAsItsCause: a CodeTransport *Error whose cause
// has a code of its own (an iggy.ErrTimeout, say) reads, retries and is
// answered as that cause, as a TransportError wrapping it did.
func TestATransportFailureReadsAsItsCause(t *testing.T) {
	callTimeout := &Error{Code: CodeTimeout, Msg: "iggy: call timed out"}
	err := &Error{Code: CodeTransport, Msg: "poll", Retryable: true, Err: fmt.Errorf("%w after 5s", callTimeout)}
	if CodeOf(err) != CodeTimeout || !IsRetryable(err) || answerCode(err) != wire.ErrorDeadlineExceeded {
		t.Fatalf("code %s, retryable %v, answer %s; want timeout, true, deadline_exceeded", CodeOf(err), IsRetryable(err), answerCode(err))
	}
	plain := &Error{Code: CodeTransport, Msg: "poll", Err: errors.New("reset")}
	if CodeOf(plain) != CodeTransport || IsRetryable(plain) || answerCode(plain) != wire.ErrorInternal {
		t.Fatalf("a permanent transport failure: code %s, retryable %v, answer %s", CodeOf(plain), IsRetryable(plain), answerCode(plain))
	}
}

// TestOnlyARetryableTransportFailureMatchesErrTransient: ErrTransient is
// what a retryable CodeTransport *Error, or an error wrapping the
// sentinel, says; a remote answer's retryable flag is not a transport's.
func TestOnlyARetryableTransportFailureMatchesErrTransient(t *testing.T) {
	remote := decoded(t, wire.ErrorInternal)
	remote.Retryable = true
	for _, tt := range []struct {
		err  error
		want bool
	}{
		{&Error{Code: CodeTransport, Msg: "poll", Retryable: true, Err: errors.New("reset")}, true},
		{&Error{Code: CodeTransport, Msg: "poll", Err: fmt.Errorf("gone: %w", ErrDisconnected)}, true},
		{&Error{Code: CodeTransport, Msg: "ensure topics", Err: errors.New("3 partitions")}, false},
		{&Error{Code: CodeHandler, Retryable: true}, false},
		{remote, false},
	} {
		if got := errors.Is(tt.err, ErrTransient); got != tt.want {
			t.Errorf("errors.Is(%v, ErrTransient) = %v, want %v", tt.err, got, tt.want)
		}
	}
}

// TestABareErrorMatchesItsCodeAnywhereInTheChain: errors.Is with an *Error
// carrying only a Code finds that code under an outer one, where CodeOf
// reads the outermost; any other *Error target matches by identity only.
func TestABareErrorMatchesItsCodeAnywhereInTheChain(t *testing.T) {
	err := Reject(fmt.Errorf("body: %w", &Error{Code: CodeCodec, Msg: "decode"}))
	if CodeOf(err) != CodeRejected {
		t.Fatalf("CodeOf = %s, want the outermost, rejected", CodeOf(err))
	}
	if !errors.Is(err, &Error{Code: CodeCodec}) || !errors.Is(err, &Error{Code: CodeRejected}) {
		t.Fatal("a bare *Error does not find a code in the chain")
	}
	for _, target := range []*Error{{Code: CodeCodec, Msg: "decode"}, {Code: CodeCodec, Retryable: true}, {Code: CodeTimeout}} {
		if errors.Is(err, target) {
			t.Errorf("errors.Is matched %+v, which is not bare or not in the chain", target)
		}
	}
}

// TestAStreamFailureNamesWhereItBroke: every breach of the chunk rules is
// a retried CodeHandler failure naming channel and sequence; a stream that
// stopped without its terminal is a CodeTimeout one.
func TestAStreamFailureNamesWhereItBroke(t *testing.T) {
	ch := wire.IDFromUint128(1, 2)
	for _, fault := range []error{errStreamGap, errStreamDuplicate, errStreamTwoTerminals, errStreamAfterTerminal, errStreamOverflow, errStreamTimeout} {
		err := streamFailure(ch, 7, fault)
		want := CodeHandler
		if fault == errStreamTimeout {
			want = CodeTimeout
		}
		if CodeOf(err) != want || !IsRetryable(err) || !errors.Is(err, fault) || err.Channel != ch || err.Sequence != 7 {
			t.Errorf("%v: code %s, retryable %v, at %s/%d; want %s, retried, at %s/7", fault, CodeOf(err), IsRetryable(err), err.Channel, err.Sequence, want, ch)
		}
		if got := err.Error(); got != fmt.Sprintf("stream %s at sequence 7: %v", ch, fault) {
			t.Errorf("Error() = %q", got)
		}
	}
}
