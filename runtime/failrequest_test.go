package runtime_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/lasergo/laser/clock"
	"github.com/lasergo/laser/runtime"
	"github.com/lasergo/laser/wire"
)

// outcomes is a ConsumerObserver that reports how each record ended.
type outcomes struct {
	runtime.MiddlewareDefaults
	ended chan runtime.Delivery
}

func (outcomes) ObserveConsumer(*runtime.Consumer) {}

func (o outcomes) ObserveRecord(ctx context.Context, d *runtime.Delivery, next func(context.Context)) {
	next(ctx)
	o.ended <- *d
}

// requestThrough runs an agent whose request handler fails with err through
// FailRequest, sends it one request and returns the caller's error and how
// the consumer finished with the request.
func requestThrough(t *testing.T, err error) (runtime.Delivery, error) {
	t.Helper()
	log := newLog(t, 1, clock.System{})
	c := newClient(t, log, clock.System{}, nil)
	seen := outcomes{ended: make(chan runtime.Delivery, 4)}
	runAgent(t, c, runtime.AgentConfig{ID: "orders", Respond: runtime.TopicResponses,
		Middleware: []runtime.Middleware{seen},
		Handler: handlerFunc(func(ctx *runtime.Ctx) error {
			return ctx.FailRequest(err)
		})})
	_, callErr := c.Request(t.Context(), runtime.Out{From: "caller", Target: "orders", Body: []byte("42")}, runtime.WithTimeout(waitLimit))
	return recv(t, seen.ended, "the request's outcome"), callErr
}

func TestAFailfAnswerIsAHandledRequestCommittedNotParked(t *testing.T) {
	d, callErr := requestThrough(t, runtime.Failf(wire.ErrorToolFailure, "no order %q", "42"))
	var remote *runtime.Error
	if !(errors.As(callErr, &remote) && remote.Remote()) || remote.Wire != wire.ErrorToolFailure || remote.Msg != `no order "42"` {
		t.Fatalf("the caller got %v, want the not-found answer", callErr)
	}
	if d.Result != runtime.ResultHandled || d.Err != nil {
		t.Fatalf("the request ended %s (%s, %v), want handled: an answered error is no dead letter", d.Result, d.Reason, d.Err)
	}
}

func TestARejectionInARequestIsAnsweredAndStillParked(t *testing.T) {
	d, callErr := requestThrough(t, runtime.Reject(fmt.Errorf("body is no order")))
	var remote *runtime.Error
	if !(errors.As(callErr, &remote) && remote.Remote()) || remote.Wire != wire.ErrorInvalidRequest {
		t.Fatalf("the caller got %v, want an invalid-request answer", callErr)
	}
	if d.Result != runtime.ResultDeadLettered || d.Reason != wire.ReasonRejected {
		t.Fatalf("the request ended %s (%s), want parked as rejected", d.Result, d.Reason)
	}
}

// TestCodeOfReadsALocalAndARemoteFailureAlike: a request handler's failure
// and the answer its caller receives have the same runtime.Code.
func TestCodeOfReadsALocalAndARemoteFailureAlike(t *testing.T) {
	tests := []struct {
		name string
		err  error
	}{
		{"Reject", runtime.Reject(errors.New("no amount"))},
		{"unsupported", &runtime.Error{Code: runtime.CodeUnsupported, Msg: "no such currency"}},
		{"unauthorized", &runtime.Error{Code: runtime.CodeUnauthorized, Msg: "not your account"}},
		{"Failf invalid_request", runtime.Failf(wire.ErrorInvalidRequest, "no amount")},
		{"Failf unauthorized", runtime.Failf(wire.ErrorUnauthorized, "not yours")},
		{"Failf unsupported", runtime.Failf(wire.ErrorUnsupported, "no such currency")},
		{"Failf deadline_exceeded", runtime.Failf(wire.ErrorDeadlineExceeded, "the bank was slow")},
		{"Failf cancelled", runtime.Failf(wire.ErrorCancelled, "the order was withdrawn")},
		{"Failf tool_failure", runtime.Failf(wire.ErrorToolFailure, "the ledger is down")},
		{"Failf internal", runtime.Failf(wire.ErrorInternal, "bug")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, callErr := requestThrough(t, tt.err)
			if local, remote := runtime.CodeOf(tt.err), runtime.CodeOf(callErr); local != remote {
				t.Fatalf("the handler failed with code %s, its caller read %s (%v)", local, remote, callErr)
			}
		})
	}
}

// handlerThrough runs an agent with a hand-written handler, sends it one
// request and returns the caller's error and how the consumer finished.
func handlerThrough(t *testing.T, h func(*runtime.Ctx) error) (runtime.Delivery, error) {
	t.Helper()
	log := newLog(t, 1, clock.System{})
	c := newClient(t, log, clock.System{}, nil)
	seen := outcomes{ended: make(chan runtime.Delivery, 4)}
	runAgent(t, c, runtime.AgentConfig{ID: "orders", Respond: runtime.TopicResponses,
		Middleware: []runtime.Middleware{seen}, Handler: handlerFunc(h)})
	_, callErr := c.Request(t.Context(), runtime.Out{From: "caller", Target: "orders", Body: []byte("42")}, runtime.WithTimeout(waitLimit))
	return recv(t, seen.ended, "the request's outcome"), callErr
}

func TestAFailfFromAHandWrittenHandlerAnswersTheCallerAndIsCommitted(t *testing.T) {
	d, callErr := handlerThrough(t, func(*runtime.Ctx) error {
		return runtime.Failf(wire.ErrorToolFailure, "no order %q", "42")
	})
	var remote *runtime.Error
	if !(errors.As(callErr, &remote) && remote.Remote()) || remote.Wire != wire.ErrorToolFailure || runtime.CodeOf(callErr) != runtime.CodeToolFailure {
		t.Fatalf("the caller got %v, want the tool-failure answer", callErr)
	}
	if d.Result != runtime.ResultHandled || d.Err != nil {
		t.Fatalf("the request ended %s (%s, %v), want handled", d.Result, d.Reason, d.Err)
	}
}

func TestARejectionFromACommandHandlerIsParked(t *testing.T) {
	log := newLog(t, 1, clock.System{})
	c := newClient(t, log, clock.System{}, nil)
	seen := outcomes{ended: make(chan runtime.Delivery, 4)}
	runAgent(t, c, runtime.AgentConfig{ID: "orders", Respond: runtime.TopicResponses,
		Middleware: []runtime.Middleware{seen},
		Handler:    handlerFunc(func(*runtime.Ctx) error { return runtime.Reject(errors.New("body is no order")) })})
	if _, err := c.Send(t.Context(), runtime.Out{From: "caller", Target: "orders", Body: []byte("42")}); err != nil {
		t.Fatal(err)
	}
	if d := recv(t, seen.ended, "the command's outcome"); d.Result != runtime.ResultDeadLettered || d.Reason != wire.ReasonRejected {
		t.Fatalf("the command ended %s (%s), want parked as rejected", d.Result, d.Reason)
	}
}

// streamThrough runs an agent whose streaming handler finishes its stream
// with err, reads the stream and returns the reader's error and how the
// consumer finished with the request.
func streamThrough(t *testing.T, err error) (runtime.Delivery, error) {
	t.Helper()
	log := newLog(t, 1, clock.System{})
	c := newClient(t, log, clock.System{}, nil)
	seen := outcomes{ended: make(chan runtime.Delivery, 4)}
	runAgent(t, c, runtime.AgentConfig{ID: "writer", Respond: runtime.TopicResponses,
		Middleware: []runtime.Middleware{seen},
		Handler: handlerFunc(func(ctx *runtime.Ctx) error {
			s, serr := runtime.OpenTypedStream[string](ctx, wire.ContentCBOR)
			if serr != nil {
				return serr
			}
			if serr := s.Send("one"); serr != nil {
				return serr
			}
			return s.Finish(err)
		})})
	var readErr error
	for _, e := range c.Stream(t.Context(), runtime.Out{From: "caller", Target: "writer", Body: []byte("go")}, runtime.WithTimeout(waitLimit)) {
		if e != nil {
			readErr = e
		}
	}
	return recv(t, seen.ended, "the stream request's outcome"), readErr
}

func TestAFailfEndingAStreamIsAnsweredAndCommittedNotParked(t *testing.T) {
	d, readErr := streamThrough(t, runtime.Failf(wire.ErrorToolFailure, "the model went away"))
	if runtime.CodeOf(readErr) != runtime.CodeToolFailure {
		t.Fatalf("the reader got %v (code %s), want the tool-failure answer", readErr, runtime.CodeOf(readErr))
	}
	if d.Result != runtime.ResultHandled || d.Err != nil {
		t.Fatalf("the stream request ended %s (%s, %v), want handled: the handler chose its answer", d.Result, d.Reason, d.Err)
	}
}

func TestARejectionEndingAStreamIsAnsweredAndParked(t *testing.T) {
	d, readErr := streamThrough(t, runtime.Reject(errors.New("no prompt")))
	if runtime.CodeOf(readErr) != runtime.CodeRejected {
		t.Fatalf("the reader got %v (code %s), want an invalid-request answer", readErr, runtime.CodeOf(readErr))
	}
	if d.Result != runtime.ResultDeadLettered || d.Reason != wire.ReasonRejected {
		t.Fatalf("the stream request ended %s (%s), want parked as rejected", d.Result, d.Reason)
	}
}
