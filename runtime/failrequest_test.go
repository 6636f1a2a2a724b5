package runtime_test

import (
	"context"
	"errors"
	"testing"

	"github.com/lasergo/laser/clock"
	"github.com/lasergo/laser/runtime"
	"github.com/lasergo/laser/wire"
)

// outcomes is a RecordObserver that reports how each record ended.
type outcomes struct {
	runtime.MiddlewareDefaults
	ended chan runtime.Delivery
}

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
		Tuning: runtime.Tuning{Middleware: []runtime.Middleware{seen}},
		Handler: handlerFunc(func(ctx *runtime.Ctx) error {
			return runtime.FailRequest(ctx, err)
		})})
	_, callErr := c.Request(t.Context(), runtime.Command{From: "caller", Target: "orders", Body: []byte("42")}, runtime.WithTimeout(waitLimit))
	return recv(t, seen.ended, "the request's outcome"), callErr
}

func TestAFailfAnswerIsAHandledRequestCommittedNotParked(t *testing.T) {
	d, callErr := requestThrough(t, runtime.Failf(wire.ErrorToolFailure, "no order %q", "42"))
	var remote *runtime.RemoteError
	if !errors.As(callErr, &remote) || remote.Code != wire.ErrorToolFailure || remote.Message != `no order "42"` {
		t.Fatalf("the caller got %v, want the not-found answer", callErr)
	}
	if d.Result != runtime.ResultHandled || d.Err != nil {
		t.Fatalf("the request ended %s (%s, %v), want handled: an answered error is no dead letter", d.Result, d.Reason, d.Err)
	}
}

func TestARejectionInARequestIsAnsweredAndStillParked(t *testing.T) {
	d, callErr := requestThrough(t, runtime.Rejectf("body is no order"))
	var remote *runtime.RemoteError
	if !errors.As(callErr, &remote) || remote.Code != wire.ErrorInvalidRequest {
		t.Fatalf("the caller got %v, want an invalid-request answer", callErr)
	}
	if d.Result != runtime.ResultParked || d.Reason != wire.ReasonRejected {
		t.Fatalf("the request ended %s (%s), want parked as rejected", d.Result, d.Reason)
	}
}
