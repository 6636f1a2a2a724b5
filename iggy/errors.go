package iggy

import (
	"errors"
	"fmt"

	ierror "github.com/apache/iggy/foreign/go/errors"

	"github.com/lasergo/laser/runtime"
)

// ErrTimeout reports a call that got no answer within the call timeout; the
// connection it was using is abandoned and rebuilt on the next call. It is
// a runtime timeout: runtime.CodeOf(err) == runtime.CodeTimeout holds.
var ErrTimeout error = &runtime.Error{Code: runtime.CodeTimeout, Msg: "iggy: call timed out"}

// ErrSDKPanic reports a panic inside the Iggy SDK, usually its decoder
// meeting a short or malformed response; the transport recovers it.
var ErrSDKPanic = errors.New("iggy: SDK panicked")

// ErrClosed reports a call on a closed Transport or subscription; it wraps
// runtime.ErrDisconnected, since nothing will bring the connection back.
var ErrClosed = errors.New("iggy: closed")

// ErrConnectionLost reports a call whose connection broke or could not be
// made. It is transient: the next call dials again (logging in and, for a
// subscription, rejoining its group), so a consumer backs off and resumes
// with its place kept instead of stopping.
var ErrConnectionLost = errors.New("iggy: connection lost")

// errClass is what an error means for the connection and for a retry.
type errClass uint8

const (
	// classPermanent: configuration or data errors; a retry gives the same answer.
	classPermanent errClass = iota
	// classTransient: a retry may succeed; the connection stays.
	classTransient
	// classSession: the server no longer knows this session's login or
	// membership; the connection is rebuilt, and the error is transient.
	classSession
	// classLost: the connection broke or could not be made; it is rebuilt
	// on the next call, and the error is transient (ErrConnectionLost).
	classLost
	// classDisconnected: the transport or subscription is closed for good;
	// the error wraps runtime.ErrDisconnected.
	classDisconnected
)

// classify sorts an SDK error: raw net and io errors and the codes meaning
// a lost connection are lost connections; codes meaning a lost login or
// membership need a new session; code 1 (the SDK's catch-all for codes it
// does not know, such as NotResolvedConsumer 3022 or the server's shard and
// task timeouts) and a VSR request not committed yet (57) may pass on
// retry; every other Iggy code is permanent.
func classify(err error) errClass {
	if se, ok := errors.AsType[*serverError](err); ok && se.code == transientNotCommitted {
		return classTransient
	}
	if _, ok := errors.AsType[*replyTooLarge](err); ok {
		return classPermanent // read past: the link is in step, and the record will not shrink
	}
	var ie ierror.IggyError
	if !errors.As(err, &ie) {
		return classLost
	}
	switch ie.Code() {
	case ierror.DisconnectedCode, ierror.CannotEstablishConnectionCode, ierror.NotConnectedCode,
		ierror.ClientShutdownCode, ierror.ConnectionClosedCode, ierror.EmptyResponseCode:
		return classLost
	case ierror.StaleClientCode, ierror.UnauthenticatedCode, ierror.ConsumerGroupMemberNotFoundCode:
		return classSession
	case ierror.ErrorCode:
		return classTransient
	}
	return classPermanent
}

// failed is the failure of operation op: a *runtime.Error of
// runtime.CodeTransport that a retry will not cure.
func failed(op string, err error) error {
	return &runtime.Error{Code: runtime.CodeTransport, Msg: op, Err: err}
}

// transient is the failure of operation op that a retry may cure: it
// matches runtime.ErrTransient.
func transient(op string, err error) error {
	return &runtime.Error{Code: runtime.CodeTransport, Msg: op, Retryable: true, Err: err}
}

// wrap turns an error of operation op into a transport failure (failed,
// transient) by its class.
func wrap(op string, class errClass, err error) error {
	switch class {
	case classLost:
		if !errors.Is(err, ErrConnectionLost) {
			err = fmt.Errorf("%w: %w", ErrConnectionLost, err)
		}
		return transient(op, err)
	case classDisconnected:
		if !errors.Is(err, runtime.ErrDisconnected) {
			err = fmt.Errorf("%w: %w", runtime.ErrDisconnected, err)
		}
		return transient(op, err)
	case classTransient, classSession:
		return transient(op, err)
	}
	return failed(op, err)
}
