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
	CodeTransport                      // a transport failure; retried when it matches ErrTransient
	CodeRemote                         // a remote failure whose wire code this module does not know
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

// Error is every failure the runtime reports, local or remote: a Code, a
// message and a cause. A remote failure (an AGDX error answer, Remote) also
// says who answered, with what wire code, whether a retry may succeed and
// the answer's detail; a failed read stream says where it broke. errors.Is
// matches an *Error against a bare &Error{Code: c} of the same code anywhere
// in the chain, where CodeOf reads the outermost code only.
type Error struct {
	Code Code
	Msg  string
	Err  error
	// From is the agent that answered with a remote failure.
	From string
	// Wire is the AGDX code a remote failure was answered with, kept as
	// received (a code newer than this module included).
	Wire wire.ErrorCode
	// Retryable says a retry may succeed: the remote answer's flag, or a
	// transport's (CodeTransport) on a transient failure, which then also
	// matches ErrTransient.
	Retryable bool
	// Detail is the remote answer's detail.
	Detail wire.Metadata
	// Channel and Sequence place a failed read stream: its channel (zero
	// when no chunk arrived) and the sequence concerned.
	Channel  wire.ID
	Sequence uint64

	// remote marks an AGDX error answer decoded from another agent.
	remote bool
	// answer marks a Failf error: the failure the handler chose to answer a
	// waiting caller with, permanent whatever its code.
	answer bool
	// wire, when set, is answered instead of wireCode(Code): the code Failf
	// was given when Code does not name it (one newer than this module), or
	// unsupported for the rejection of an unknown operation.
	wire wire.ErrorCode
}

func (e *Error) Error() string {
	if e.remote {
		msg := e.Msg
		if msg == "" {
			msg = "request failed"
		}
		if e.From != "" {
			return fmt.Sprintf("%s: %s (%s)", e.From, msg, e.Wire)
		}
		return fmt.Sprintf("%s (%s)", msg, e.Wire)
	}
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

// Remote reports whether another agent answered with this failure.
func (e *Error) Remote() bool { return e.remote }

// Is matches a bare *Error (only a Code) of the same code; a Failf error,
// permanent whatever its code, also matches a bare CodeRejected. A
// retryable transport failure matches ErrTransient.
func (e *Error) Is(target error) bool {
	if target == ErrTransient {
		return e.Code == CodeTransport && e.Retryable && !e.remote
	}
	t, ok := target.(*Error)
	if !ok || !t.bare() {
		return false
	}
	return t.Code == e.Code || (e.answer && t.Code == CodeRejected)
}

// bare reports whether e carries nothing but its Code.
func (e *Error) bare() bool {
	return e.Msg == "" && e.Err == nil && e.From == "" && e.Wire == 0 && !e.Retryable && e.Detail == nil &&
		e.Channel.IsZero() && e.Sequence == 0 && !e.remote && !e.answer && e.wire == 0
}

// The runtime's sentinels: the failures a caller branches on by identity.
// Every other failure is an *Error read with CodeOf.
var (
	// ErrTransient marks transport errors that a retry may cure: transports
	// wrap it, or return an *Error of CodeTransport with Retryable set.
	ErrTransient = errors.New("transient transport error")

	// ErrDisconnected reports a lost connection: the consumer stops at once on it
	// instead of backing off, because its group membership is gone.
	ErrDisconnected = fmt.Errorf("disconnected: %w", ErrTransient)

	// ErrPartitionLost reports a commit refused because the partition now
	// belongs to another member of the group (a rebalance). Nothing is lost:
	// the new owner resumes from the group's stored offset, so the consumer
	// drops the commit and carries on.
	ErrPartitionLost = errors.New("partition moved to another group member")
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
// the caller reads as a remote *Error of the same Code (CodeOf). The answered
// request was handled, so it is committed, not parked; returned where
// nobody is answered (a command's handler), it is parked as rejected. Its
// Code is the one code is received as (CodeInvalid for invalid_request, ...),
// and it also matches a bare &Error{Code: CodeRejected}.
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

// CodeOf returns the code of err: the outermost *Error's code (a remote
// failure's is the one its wire code maps to, so it reads as the same
// failure here would), CodeCancelled and CodeTimeout for the context's
// errors, and CodeHandler for any other error. A transport failure
// (CodeTransport) reads as its cause when the cause has a code of its own
// (a context's error, an iggy.ErrTimeout). A nil err has code 0.
func CodeOf(err error) Code {
	if err == nil {
		return 0
	}
	if e, ok := errors.AsType[*Error](err); ok {
		if e.Code == CodeTransport && e.Err != nil {
			if c := CodeOf(e.Err); c != CodeHandler {
				return c
			}
		}
		return e.Code
	}
	switch {
	case errors.Is(err, context.Canceled):
		return CodeCancelled
	case errors.Is(err, context.DeadlineExceeded):
		return CodeTimeout
	}
	return CodeHandler
}

// IsRetryable reports whether a failed handler should be retried; it is the
// one place retryability is decided (docs/errors.md). Handler, timeout and
// no-capable-agent errors are retried, as is any plain error; a Failf error
// never is; a remote failure is retried when its answer says so, a
// transport failure when it matches ErrTransient; every other code is
// permanent.
func IsRetryable(err error) bool {
	e, ok := errors.AsType[*Error](err)
	switch {
	case err == nil:
		return false
	case !ok:
		return retryableCode(CodeOf(err))
	case e.answer:
		return false
	case e.remote:
		return e.Retryable
	}
	if c := CodeOf(err); c != CodeTransport {
		return retryableCode(c)
	}
	return errors.Is(err, ErrTransient)
}

// retryableCode reports whether a failure of code c is retried.
func retryableCode(c Code) bool {
	return c == CodeHandler || c == CodeTimeout || c == CodeNoCapableAgent
}

// answerCode is the AGDX error code a waiting caller receives for a
// handler's permanent err: the one its Code maps to in codeTable, the code
// Failf was given, or, for a remote failure relayed as it is, the remote's
// own wire code (unknown ones included).
func answerCode(err error) wire.ErrorCode {
	if e, ok := errors.AsType[*Error](err); ok {
		switch {
		case e.wire != 0:
			return e.wire
		case e.remote && e.Wire != 0:
			return e.Wire
		}
	}
	return wireCode(CodeOf(err))
}

// answeringFailf makes a Failf error returned by any handler answer the
// waiting caller, as a generated request handler's does through
// Ctx.FailRequest: a hand-written handler needs no Ctx.Fail for it. Only a
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
		return c.FailRequest(err)
	}
}

// The faults that end a read stream: the cause of the *Error it fails with,
// whose Channel and Sequence say where.
var (
	// errStreamGap: the terminal chunk arrived but a chunk before it never
	// did within the stream's timeout.
	errStreamGap = errors.New("stream chunk missing")
	// errStreamDuplicate: a sequence number arrived twice with different
	// contents (an identical copy, such as a producer's retry, is dropped).
	errStreamDuplicate = errors.New("stream chunk duplicated")
	// errStreamTwoTerminals: a terminal chunk (or error) arrived at another
	// sequence than the terminal already seen; the first one stands.
	errStreamTwoTerminals = errors.New("stream has two terminal chunks")
	// errStreamAfterTerminal: a chunk arrived past the terminal one.
	errStreamAfterTerminal = errors.New("stream chunk after the terminal")
	// errStreamTimeout: the stream stopped without a terminal chunk; its
	// *Error has CodeTimeout.
	errStreamTimeout = errors.New("stream ended without a terminal chunk")
	// errStreamOverflow: the reader fell behind: the sender ran further
	// ahead of it than the stream's buffer holds, for longer than the client
	// waits for room (100 ms over the stream's life), or chunks arrived
	// out of order beyond the buffer.
	errStreamOverflow = errors.New("stream reorder buffer full")
)

// streamFailure is the error that ends the read stream on channel ch at
// sequence seq with fault: CodeTimeout for a stream that stopped without
// its terminal, CodeHandler for a breach of the chunk rules.
func streamFailure(ch wire.ID, seq uint64, fault error) *Error {
	code := CodeHandler
	if fault == errStreamTimeout {
		code = CodeTimeout
	}
	return &Error{Code: code, Msg: fmt.Sprintf("stream %s at sequence %d", ch, seq), Err: fault, Channel: ch, Sequence: seq}
}

func errorf(code Code, format string, args ...any) error {
	return &Error{Code: code, Err: fmt.Errorf(format, args...)}
}
