package runtime

import (
	"context"
	"errors"
	"fmt"

	"github.com/lasergo/laser/wire"
)

// Code classifies a failure, local or remote: CodeOf reads it from any
// error, IsRetryable decides from it whether the reliable consumer retries a
// failed handler, and a remote agent's AGDX error answer is given the Code
// of its wire.ErrorCode when it is decoded, so a failure reads the same
// whether it happened here or in the agent that answered (docs/errors.md).
type Code uint8

// Error codes. Every code is produced by this module; docs/errors.md lists
// which are retried and what each answers a waiting caller with.
const (
	CodeHandler        Code = iota + 1 // a handler failed (a plain error, a panic, Retry); retried; wire internal
	CodeHandlerConfig                  // a handler was wired wrongly
	CodeRejected                       // Reject: permanent, parked at once; wire invalid_request
	CodeTimeout                        // a deadline passed; retried; wire deadline_exceeded
	CodeNoRespondTopic                 // a reply was asked of an agent without a respond topic
	CodeConfig                         // a configuration error
	CodeCodec                          // a body did not encode or decode
	CodeInvalid                        // an argument or message is malformed; answered as invalid_request
	CodeUnsupported                    // a content type or operation is not supported; wire unsupported
	CodeSignature                      // a signature is missing or does not verify; answered as unauthorized
	CodeNoCapableAgent                 // no agent advertises the capability; retried
	CodeCancelled                      // the context was cancelled; wire cancelled
	CodeTransport                      // a *TransportError; retried when Transient
	CodeRemote                         // a *RemoteError whose wire code this module does not know
	CodeNotPickedUp                    // nobody acknowledged a request in time
	CodeUnauthorized                   // the caller may not do this; wire unauthorized
	CodeToolFailure                    // a tool the handler called failed; wire tool_failure
)

// codeTable is the one mapping between Code and wire.ErrorCode. wire is what
// a waiting caller is answered with when a handler fails with the code;
// received marks the Code an answer of that wire code is decoded as (one per
// wire code). A wire code no row receives (one newer than this module)
// decodes as CodeRemote and is relayed unchanged.
var codeTable = [...]struct {
	name     string
	wire     wire.ErrorCode
	received bool
}{
	CodeHandler:        {"handler", wire.ErrorInternal, true},
	CodeHandlerConfig:  {"handler config", wire.ErrorInternal, false},
	CodeRejected:       {"rejected", wire.ErrorInvalidRequest, true},
	CodeTimeout:        {"timeout", wire.ErrorDeadlineExceeded, true},
	CodeNoRespondTopic: {"no respond topic", wire.ErrorInternal, false},
	CodeConfig:         {"config", wire.ErrorInternal, false},
	CodeCodec:          {"codec", wire.ErrorInternal, false},
	CodeInvalid:        {"invalid", wire.ErrorInvalidRequest, false},
	CodeUnsupported:    {"unsupported", wire.ErrorUnsupported, true},
	CodeSignature:      {"signature", wire.ErrorUnauthorized, false},
	CodeNoCapableAgent: {"no capable agent", wire.ErrorInternal, false},
	CodeCancelled:      {"cancelled", wire.ErrorCancelled, true},
	CodeTransport:      {"transport", wire.ErrorInternal, false},
	CodeRemote:         {"remote", wire.ErrorInternal, false},
	CodeNotPickedUp:    {"not picked up", wire.ErrorInternal, false},
	CodeUnauthorized:   {"unauthorized", wire.ErrorUnauthorized, true},
	CodeToolFailure:    {"tool failure", wire.ErrorToolFailure, true},
}

// String returns the code's name.
func (c Code) String() string {
	if c != 0 && int(c) < len(codeTable) {
		return codeTable[c].name
	}
	return fmt.Sprintf("code(%d)", uint8(c))
}

// wireCode is the AGDX error code a waiting caller is answered with for a
// failure of code c; internal for a code it does not know.
func wireCode(c Code) wire.ErrorCode {
	if c != 0 && int(c) < len(codeTable) {
		return codeTable[c].wire
	}
	return wire.ErrorInternal
}

// codeOfWire is the Code an AGDX error answer of wire code w is decoded as;
// CodeRemote for a code no row receives.
func codeOfWire(w wire.ErrorCode) Code {
	for c, row := range codeTable {
		if row.received && row.wire == w {
			return Code(c)
		}
	}
	return CodeRemote
}

// Error is the runtime's error: a Code, a message and a cause. errors.Is
// matches it against the sentinel of its code (ErrRejected, ErrTimeout, ...).
type Error struct {
	Code Code
	Msg  string
	Err  error
	// answer marks a Failf error: the failure the handler chose to answer a
	// waiting caller with, permanent whatever its code.
	answer bool
	// wire, when set, is answered instead of wireCode(Code): the code Failf
	// was given when Code does not name it (one newer than this module), or
	// unsupported for the rejection of an unknown operation.
	wire wire.ErrorCode
}

// NewError returns an *Error of code with a message and an optional cause.
func NewError(code Code, msg string, cause error) *Error {
	return &Error{Code: code, Msg: msg, Err: cause}
}

func (e *Error) Error() string {
	switch {
	case e.Msg != "" && e.Err != nil:
		return e.Msg + ": " + e.Err.Error()
	case e.Msg != "":
		return e.Msg
	case e.Err != nil:
		return e.Err.Error()
	}
	return e.Code.String()
}

// Unwrap returns the cause.
func (e *Error) Unwrap() error { return e.Err }

// Is matches a sentinel (an *Error with only a Code) of the same code; a
// Failf error, permanent whatever its code, also matches ErrRejected.
func (e *Error) Is(target error) bool {
	t, ok := target.(*Error)
	if !ok || t.Msg != "" || t.Err != nil || t.answer || t.wire != 0 {
		return false
	}
	return t.Code == e.Code || (e.answer && t.Code == CodeRejected)
}

// The runtime's errors, for errors.Is. The first ones each match every
// *Error of their code.
var (
	ErrHandler        = &Error{Code: CodeHandler}
	ErrHandlerConfig  = &Error{Code: CodeHandlerConfig}
	ErrRejected       = &Error{Code: CodeRejected}
	ErrTimeout        = &Error{Code: CodeTimeout}
	ErrNoRespondTopic = &Error{Code: CodeNoRespondTopic}
	ErrConfig         = &Error{Code: CodeConfig}
	ErrCodec          = &Error{Code: CodeCodec}
	ErrInvalid        = &Error{Code: CodeInvalid}
	ErrSignature      = &Error{Code: CodeSignature}
	ErrNotPickedUp    = &Error{Code: CodeNotPickedUp}

	// ErrTransient marks transport errors that a retry may cure; transports wrap
	// it (or return a TransportError with Transient set).
	ErrTransient = errors.New("transient transport error")

	// ErrDisconnected reports a lost connection: the consumer stops at once on it
	// instead of backing off, because its group membership is gone.
	ErrDisconnected = fmt.Errorf("disconnected: %w", ErrTransient)

	// ErrPartitionLost reports a commit refused because the partition now
	// belongs to another member of the group (a rebalance). Nothing is lost:
	// the new owner resumes from the group's stored offset, so the consumer
	// drops the commit and carries on.
	ErrPartitionLost = errors.New("partition moved to another group member")

	// ErrNotReady reports an agent that stopped before it became ready.
	ErrNotReady = errors.New("agent stopped before it became ready")

	// Stream errors: each ends a read stream, wrapped in a *StreamError that
	// names the channel and sequence; branch on them with errors.Is. The
	// responder's own error is a *RemoteError (errors.As).

	// ErrStreamGap: the terminal chunk arrived but a chunk before it never
	// did within the stream's timeout.
	ErrStreamGap = errors.New("stream chunk missing")
	// ErrStreamDuplicate: a sequence number arrived twice with different
	// contents (an identical copy, such as a producer's retry, is dropped).
	ErrStreamDuplicate = errors.New("stream chunk duplicated")
	// ErrStreamTwoTerminals: a terminal chunk (or error) arrived at another
	// sequence than the terminal already seen; the first one stands.
	ErrStreamTwoTerminals = errors.New("stream has two terminal chunks")
	// ErrStreamAfterTerminal: a chunk arrived past the terminal one.
	ErrStreamAfterTerminal = errors.New("stream chunk after the terminal")
	// ErrStreamTimeout: the stream stopped without a terminal chunk; it also
	// matches ErrTimeout.
	ErrStreamTimeout = errors.New("stream ended without a terminal chunk")
	// ErrStreamOverflow: the reader fell behind: the sender ran further
	// ahead of it than the stream's buffer holds, for longer than the client
	// waits for room (100 ms over the stream's life), or chunks arrived
	// out of order beyond the buffer.
	ErrStreamOverflow = errors.New("stream reorder buffer full")
)

// Reject marks err as permanent: the consumer dead-letters the message as
// rejected without retrying (a request's caller is answered first, with
// invalid_request; see docs/errors.md). A nil err yields nil.
func Reject(err error) error {
	if err == nil {
		return nil
	}
	return &Error{Code: CodeRejected, Err: err}
}

// Failf is a permanent failure that answers a waiting caller: a request or
// streaming handler returning it answers with an AGDX error of code, which
// the caller reads as a *RemoteError of the same Code (CodeOf). The answered
// request was handled, so it is committed, not parked; returned where
// nobody is answered (a command's handler), it is parked as rejected. Its
// Code is the one code is received as (CodeInvalid for invalid_request, ...),
// and it also matches ErrRejected.
func Failf(code wire.ErrorCode, format string, args ...any) error {
	e := &Error{Code: codeOfWire(code), Err: fmt.Errorf(format, args...), answer: true}
	if wireCode(e.Code) != code {
		e.wire = code
	}
	return e
}

// Retry marks err as transient so the consumer retries it under its policy,
// even when err wraps something permanent.
func Retry(err error) error {
	if err == nil {
		return nil
	}
	return &Error{Code: CodeHandler, Err: err}
}

// CodeOf returns the code of err: an *Error's own code (the outermost one in
// the chain), a *RemoteError's Code (the one its wire code maps to, so a
// remote failure reads as the same failure here would), CodeCancelled and
// CodeTimeout for the context's errors (also when a transport operation
// ended on them), CodeTransport for any other *TransportError, and
// CodeHandler for any other error. A nil err has code 0.
func CodeOf(err error) Code {
	if err == nil {
		return 0
	}
	var e *Error
	var re *RemoteError
	var te *TransportError
	switch {
	case errors.As(err, &e):
		return e.Code
	case errors.As(err, &re):
		return re.Code
	case errors.Is(err, context.Canceled):
		return CodeCancelled
	case errors.Is(err, context.DeadlineExceeded):
		return CodeTimeout
	case errors.As(err, &te):
		return CodeTransport
	}
	return CodeHandler
}

// IsRetryable reports whether a failed handler should be retried; it is the
// one place retryability is decided (docs/errors.md). Handler, timeout and
// no-capable-agent errors are retried, as is any plain error; a Failf error
// never is; a *RemoteError and a *TransportError are retried when they say
// so (Retryable, Transient); every other code is permanent.
func IsRetryable(err error) bool {
	var e *Error
	if errors.As(err, &e) {
		return !e.answer && retryableCode(e.Code, err)
	}
	var re *RemoteError
	if errors.As(err, &re) {
		return re.Retryable
	}
	return err != nil && retryableCode(CodeOf(err), err)
}

// retryableCode reports whether a failure of code c (err) is retried.
func retryableCode(c Code, err error) bool {
	switch c {
	case CodeHandler, CodeTimeout, CodeNoCapableAgent:
		return true
	case CodeTransport:
		return errors.Is(err, ErrTransient)
	}
	return false
}

// answerCode is the AGDX error code a waiting caller receives for a
// handler's permanent err: the one its Code maps to in codeTable, the code
// Failf was given, or, for a remote failure relayed as it is, the remote's
// own wire code (unknown ones included).
func answerCode(err error) wire.ErrorCode {
	var e *Error
	if errors.As(err, &e) {
		if e.wire != 0 {
			return e.wire
		}
		return wireCode(e.Code)
	}
	var re *RemoteError
	if errors.As(err, &re) && re.Wire != 0 {
		return re.Wire
	}
	return wireCode(CodeOf(err))
}

// answeringFailf makes a Failf error returned by any handler answer the
// waiting caller, as a generated request handler's does through
// FailRequest: a hand-written handler needs no Ctx.Fail for it. Only a
// request (a command with a correlation, to an agent with a respond topic)
// is answered; the answered request was handled and is committed.
func answeringFailf(h func(*Ctx) error) func(*Ctx) error {
	return func(c *Ctx) error {
		err := h(c)
		if !isAnswer(err) || c.c.cfg.RespondTopic == "" || c.Message().Kind() != wire.KindCommand {
			return err
		}
		if _, ok := c.correlation(); !ok {
			return err
		}
		return FailRequest(c, err)
	}
}

func errorf(code Code, format string, args ...any) error {
	return &Error{Code: code, Err: fmt.Errorf(format, args...)}
}
