package runtime

import (
	"context"
	"errors"
	"fmt"
)

// Code classifies a runtime error; it decides whether the reliable consumer
// retries a failed handler or dead-letters the message at once.
type Code uint8

// Error codes. The retryable ones are Handler, Timeout, PolicyDeferred,
// NoCapableAgent, NoInbox and Transport; every other code is permanent.
const (
	CodeHandler Code = iota + 1
	CodeHandlerConfig
	CodeRejected
	CodeTimeout
	CodeNoRespondTopic
	CodeStateStore
	CodeConfig
	CodeCodec
	CodeInvalid
	CodeProtocol
	CodeUnsupported
	CodeSignature
	CodePolicyBlocked
	CodePolicyDeferred
	CodeNoCapableAgent
	CodeNoInbox
	CodeFenceViolation
	CodeBudgetExceeded
	CodeCancelled
	CodeTransport
	CodeNotPickedUp
)

var codeNames = map[Code]string{
	CodeHandler:        "handler",
	CodeHandlerConfig:  "handler config",
	CodeRejected:       "rejected",
	CodeTimeout:        "timeout",
	CodeNoRespondTopic: "no respond topic",
	CodeStateStore:     "state store",
	CodeConfig:         "config",
	CodeCodec:          "codec",
	CodeInvalid:        "invalid",
	CodeProtocol:       "protocol",
	CodeUnsupported:    "unsupported",
	CodeSignature:      "signature",
	CodePolicyBlocked:  "policy blocked",
	CodePolicyDeferred: "policy deferred",
	CodeNoCapableAgent: "no capable agent",
	CodeNoInbox:        "no inbox",
	CodeFenceViolation: "fence violation",
	CodeBudgetExceeded: "budget exceeded",
	CodeCancelled:      "cancelled",
	CodeTransport:      "transport",
	CodeNotPickedUp:    "not picked up",
}

// String returns the code's name.
func (c Code) String() string {
	if n, ok := codeNames[c]; ok {
		return n
	}
	return fmt.Sprintf("code(%d)", uint8(c))
}

// Retryable reports whether an error of this code may succeed when retried;
// the set is the reference runtime's.
func (c Code) Retryable() bool {
	switch c {
	case CodeHandler, CodeTimeout, CodePolicyDeferred, CodeNoCapableAgent, CodeNoInbox, CodeTransport:
		return true
	}
	return false
}

// Error is a classified runtime error. errors.Is matches it against the
// sentinel of its code (ErrRejected, ErrTimeout, ...).
type Error struct {
	Code Code
	Msg  string
	Err  error
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

// Retryable reports whether the consumer should retry the failed handler.
func (e *Error) Retryable() bool { return e.Code.Retryable() }

// Is matches a sentinel (an *Error with only a Code) of the same code.
func (e *Error) Is(target error) bool {
	t, ok := target.(*Error)
	return ok && t.Msg == "" && t.Err == nil && t.Code == e.Code
}

// Sentinels for errors.Is; each matches every *Error of its code.
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
	ErrCancelled      = &Error{Code: CodeCancelled}
	ErrNotPickedUp    = &Error{Code: CodeNotPickedUp}
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

// Retry marks err as transient so the consumer retries it under its policy,
// even when err wraps something permanent.
func Retry(err error) error {
	if err == nil {
		return nil
	}
	return &Error{Code: CodeHandler, Err: err}
}

// classified is any error that states its own retryability.
type classified interface{ Retryable() bool }

// IsRetryable reports whether a failed handler should be retried. Errors
// that carry a class (runtime.Error, a transient transport error) say so
// themselves; a cancelled context is permanent; any other plain error counts
// as a transient handler failure, like the reference's Handler error.
func IsRetryable(err error) bool {
	if err == nil {
		return false
	}
	var c classified
	if errors.As(err, &c) {
		return c.Retryable()
	}
	var re *RemoteError
	if errors.As(err, &re) {
		return re.Retryable
	}
	var te *TransportError
	if errors.As(err, &te) {
		return true
	}
	if errors.Is(err, context.Canceled) {
		return false
	}
	return true
}

func errorf(code Code, format string, args ...any) error {
	return &Error{Code: code, Err: fmt.Errorf(format, args...)}
}
