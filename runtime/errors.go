package runtime

import (
	"context"
	"errors"
	"fmt"

	"github.com/lasergo/laser/wire"
)

// Code classifies a runtime error for the process that holds it; CodeOf
// reads it from any error and IsRetryable decides from it whether the
// reliable consumer retries a failed handler. It never crosses the wire: what
// a waiting caller receives is a wire.ErrorCode (see Error.Answer).
type Code uint8

// Error codes. Every code is produced by this module; the README's "Errors
// and retries" table lists which are retried.
const (
	CodeHandler        Code = iota + 1 // a handler failed (a plain error, a panic, Retry); retried
	CodeHandlerConfig                  // a handler was wired wrongly
	CodeRejected                       // Reject, Rejectf, Failf: permanent, parked at once
	CodeTimeout                        // a deadline passed; retried
	CodeNoRespondTopic                 // a reply was asked of an agent without a respond topic
	CodeConfig                         // a configuration error
	CodeCodec                          // a body did not encode or decode
	CodeInvalid                        // an argument or message is malformed
	CodeUnsupported                    // a content type or operation is not supported
	CodeSignature                      // a signature is missing or does not verify
	CodeNoCapableAgent                 // no agent advertises the capability; retried
	CodeCancelled                      // the context was cancelled
	CodeTransport                      // a *TransportError; retried when Transient
	CodeRemote                         // a *RemoteError; retried when the answer says so
	CodeNotPickedUp                    // nobody acknowledged a request in time
)

var codeNames = map[Code]string{
	CodeHandler:        "handler",
	CodeHandlerConfig:  "handler config",
	CodeRejected:       "rejected",
	CodeTimeout:        "timeout",
	CodeNoRespondTopic: "no respond topic",
	CodeConfig:         "config",
	CodeCodec:          "codec",
	CodeInvalid:        "invalid",
	CodeUnsupported:    "unsupported",
	CodeSignature:      "signature",
	CodeNoCapableAgent: "no capable agent",
	CodeCancelled:      "cancelled",
	CodeTransport:      "transport",
	CodeRemote:         "remote",
	CodeNotPickedUp:    "not picked up",
}

// String returns the code's name.
func (c Code) String() string {
	if n, ok := codeNames[c]; ok {
		return n
	}
	return fmt.Sprintf("code(%d)", uint8(c))
}

// Error is the runtime's error: a Code, a message and a cause. errors.Is
// matches it against the sentinel of its code (ErrRejected, ErrTimeout, ...).
type Error struct {
	Code Code
	Msg  string
	Err  error
	// Answer is the AGDX error code a waiting caller receives when a request
	// handler fails with this error (see Failf); zero derives it from Code.
	Answer wire.ErrorCode
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

// Is matches a sentinel (an *Error with only a Code) of the same code.
func (e *Error) Is(target error) bool {
	t, ok := target.(*Error)
	return ok && t.Msg == "" && t.Err == nil && t.Answer == 0 && t.Code == e.Code
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
// rejected without retrying. A nil err yields nil.
func Reject(err error) error {
	if err == nil {
		return nil
	}
	return &Error{Code: CodeRejected, Err: err}
}

// Rejectf is Reject with a formatted message.
func Rejectf(format string, args ...any) error {
	return &Error{Code: CodeRejected, Err: fmt.Errorf(format, args...)}
}

// Failf is a permanent failure that tells a waiting caller why: a request
// handler returning it answers with an AGDX error of code, which the caller's
// typed client returns as a *RemoteError. The answered request was handled,
// so it is committed, not parked (see FailRequest); returned where nobody
// is answered (a command's handler), it is parked as rejected.
func Failf(code wire.ErrorCode, format string, args ...any) error {
	return &Error{Code: CodeRejected, Answer: code, Err: fmt.Errorf(format, args...)}
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
// the chain), CodeRemote for a *RemoteError, CodeCancelled and CodeTimeout
// for the context's errors (also when a transport operation ended on them),
// CodeTransport for any other *TransportError, and CodeHandler for any other
// error. A nil err has code 0.
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
		return CodeRemote
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
// one place retryability is decided (the README's "Errors and retries"
// table). Handler, timeout and no-capable-agent errors are retried, as is any
// plain error; a *RemoteError and a *TransportError are retried when they say
// so (Retryable, Transient); every other code is permanent.
func IsRetryable(err error) bool {
	switch CodeOf(err) {
	case CodeHandler, CodeTimeout, CodeNoCapableAgent:
		return true
	case CodeRemote:
		var re *RemoteError
		errors.As(err, &re)
		return re.Retryable
	case CodeTransport:
		return IsTransient(err)
	}
	return false
}

// answerCode is the AGDX error code a waiting caller receives for a request
// handler's permanent err: the err's Answer if it has one, otherwise one
// derived from its code.
func answerCode(err error) wire.ErrorCode {
	var e *Error
	if errors.As(err, &e) && e.Answer != 0 {
		return e.Answer
	}
	switch CodeOf(err) {
	case CodeCancelled:
		return wire.ErrorCancelled
	case CodeTimeout:
		return wire.ErrorDeadlineExceeded
	case CodeUnsupported:
		return wire.ErrorUnsupported
	case CodeRejected, CodeInvalid:
		return wire.ErrorInvalidRequest
	}
	return wire.ErrorInternal
}

func errorf(code Code, format string, args ...any) error {
	return &Error{Code: code, Err: fmt.Errorf(format, args...)}
}
