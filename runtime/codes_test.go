package runtime

import (
	"errors"
	"testing"

	"github.com/lasergo/laser/wire"
)

// decoded is the *Error a caller decodes from an AGDX error answer of
// wire code w.
func decoded(t *testing.T, w wire.ErrorCode) *Error {
	t.Helper()
	body, err := errorBody(w, "failed", false)
	if err != nil {
		t.Fatal(err)
	}
	var re *Error
	if !(errors.As(remoteError(&Message{Envelope: &wire.Envelope{Kind: wire.KindError, Source: "billing", Body: body}}), &re) && re.Remote()) {
		t.Fatal("an error envelope decoded to no *Error")
	}
	return re
}

// TestCodeTableMapsEveryCode pins, per Code, the wire code a waiting caller
// is answered with and the Code the caller reads the answer as.
func TestCodeTableMapsEveryCode(t *testing.T) {
	tests := []struct {
		code     Code
		wire     wire.ErrorCode
		received Code
	}{
		{CodeHandler, wire.ErrorInternal, CodeHandler},
		{CodeHandlerConfig, wire.ErrorInternal, CodeHandler},
		{CodeRejected, wire.ErrorInvalidRequest, CodeRejected},
		{CodeTimeout, wire.ErrorDeadlineExceeded, CodeTimeout},
		{CodeNoRespondTopic, wire.ErrorInternal, CodeHandler},
		{CodeConfig, wire.ErrorInternal, CodeHandler},
		{CodeCodec, wire.ErrorInternal, CodeHandler},
		{CodeInvalid, wire.ErrorInvalidRequest, CodeRejected},
		{CodeUnsupported, wire.ErrorUnsupported, CodeUnsupported},
		{CodeSignature, wire.ErrorUnauthorized, CodeUnauthorized},
		{CodeNoCapableAgent, wire.ErrorInternal, CodeHandler},
		{CodeCancelled, wire.ErrorCancelled, CodeCancelled},
		{CodeTransport, wire.ErrorInternal, CodeHandler},
		{CodeRemote, wire.ErrorInternal, CodeHandler},
		{CodeNotPickedUp, wire.ErrorInternal, CodeHandler},
		{CodeUnauthorized, wire.ErrorUnauthorized, CodeUnauthorized},
		{CodeToolFailure, wire.ErrorToolFailure, CodeToolFailure},
	}
	if len(tests) != len(codeTable)-1 {
		t.Fatalf("%d codes tested, %d in codeTable", len(tests), len(codeTable)-1)
	}
	for _, tt := range tests {
		t.Run(tt.code.String(), func(t *testing.T) {
			if got := answerCode(&Error{Code: tt.code}); got != tt.wire {
				t.Fatalf("a failure of code %s answers %s, want %s", tt.code, got, tt.wire)
			}
			re := decoded(t, tt.wire)
			if CodeOf(re) != tt.received || re.Wire != tt.wire {
				t.Fatalf("its answer reads as code %s (wire %s), want %s (wire %s)", CodeOf(re), re.Wire, tt.received, tt.wire)
			}
		})
	}
}

// TestCodeTableReceivesEveryWireCode pins, per wire code, the Code an AGDX
// error answer is decoded as, and that the Code answers the same wire code
// again, so a failure relayed through an agent keeps its code. Codes this
// module does not know decode as CodeRemote and pass through unchanged;
// zero, which names no failure, is relayed as internal.
func TestCodeTableReceivesEveryWireCode(t *testing.T) {
	tests := []struct {
		wire  wire.ErrorCode
		code  Code
		relay wire.ErrorCode
	}{
		{wire.ErrorInvalidRequest, CodeRejected, wire.ErrorInvalidRequest},
		{wire.ErrorUnauthorized, CodeUnauthorized, wire.ErrorUnauthorized},
		{wire.ErrorUnsupported, CodeUnsupported, wire.ErrorUnsupported},
		{wire.ErrorDeadlineExceeded, CodeTimeout, wire.ErrorDeadlineExceeded},
		{wire.ErrorCancelled, CodeCancelled, wire.ErrorCancelled},
		{wire.ErrorToolFailure, CodeToolFailure, wire.ErrorToolFailure},
		{wire.ErrorInternal, CodeHandler, wire.ErrorInternal},
		{0, CodeRemote, wire.ErrorInternal},
		{8, CodeRemote, 8},
		{255, CodeRemote, 255},
	}
	for _, tt := range tests {
		t.Run(tt.wire.String(), func(t *testing.T) {
			re := decoded(t, tt.wire)
			if re.Code != tt.code || CodeOf(re) != tt.code {
				t.Fatalf("wire %s decodes as %s (CodeOf %s), want %s", tt.wire, re.Code, CodeOf(re), tt.code)
			}
			if re.Wire != tt.wire {
				t.Fatalf("the received wire code became %s, want %s kept", re.Wire, tt.wire)
			}
			if got := answerCode(re); got != tt.relay {
				t.Fatalf("relaying the remote failure answers %s, want %s", got, tt.relay)
			}
			if got := answerCode(Failf(tt.wire, "no")); got != tt.relay {
				t.Fatalf("Failf(%s) answers %s, want %s", tt.wire, got, tt.relay)
			}
			if got := CodeOf(Failf(tt.wire, "no")); got != tt.code {
				t.Fatalf("Failf(%s) has code %s, want %s as its answer is received", tt.wire, got, tt.code)
			}
		})
	}
}

func TestAnUndecodableErrorBodyReadsAsAnInternalFailure(t *testing.T) {
	re := remoteError(&Message{Envelope: &wire.Envelope{Kind: wire.KindError, Body: []byte{0xff}}}).(*Error)
	if re.Code != CodeHandler || re.Wire != wire.ErrorInternal {
		t.Fatalf("an undecodable error body reads as %s (wire %s), want handler (internal)", re.Code, re.Wire)
	}
}

func TestAFailfErrorIsPermanentWhateverItsCode(t *testing.T) {
	for _, w := range []wire.ErrorCode{wire.ErrorDeadlineExceeded, wire.ErrorInternal, wire.ErrorCancelled, 42} {
		err := Failf(w, "no")
		if IsRetryable(err) {
			t.Errorf("Failf(%s) is retried; an answer is final", w)
		}
		if !errors.Is(err, &Error{Code: CodeRejected}) {
			t.Errorf("Failf(%s) does not match a bare CodeRejected", w)
		}
	}
	if late := Failf(wire.ErrorDeadlineExceeded, "late"); CodeOf(late) != CodeTimeout || !errors.Is(late, &Error{Code: CodeTimeout}) {
		t.Error("Failf(deadline_exceeded) is not of CodeTimeout")
	}
}

func TestARemoteErrorIsRetriedWhenItSaysSoWhateverItsCode(t *testing.T) {
	for _, w := range []wire.ErrorCode{wire.ErrorInternal, wire.ErrorDeadlineExceeded, wire.ErrorInvalidRequest} {
		re := decoded(t, w)
		if IsRetryable(re) {
			t.Errorf("a remote %s answer that is not retryable is retried", w)
		}
		re.Retryable = true
		if !IsRetryable(re) {
			t.Errorf("a remote %s answer that is retryable is not retried", w)
		}
	}
}
