package transporttest

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/lasergo/laser/runtime"
	"github.com/lasergo/laser/wire"
)

// nilError is an error type whose Error dereferences its receiver, so a
// typed nil of it panics when read.
type nilError struct{ msg string }

func (e *nilError) Error() string { return e.msg }

// hostileErrors are handler errors that once stopped a consumer or could:
// text that is not UTF-8 (the capsule detail could not be encoded), text
// far larger than a record, and an error that panics when read.
var hostileErrors = []func(body string) error{
	func(body string) error { return runtime.Reject(fmt.Errorf("bad body %s", body)) },
	func(body string) error { return errors.New("cannot store " + body) },
	func(body string) error { return runtime.Reject(fmt.Errorf("%s", strings.Repeat(body, 64<<10))) },
	func(string) error { var e *nilError; return runtime.Reject(e) },
	func(string) error { return runtime.Reject(errors.New("")) },
}

func scenarioHostileErrorsNeverStopTheConsumer(t *testing.T, tr runtime.Transport) {
	w := newWorld(t, tr, 1)
	k := w.start(tr, func(c *runtime.ConsumerConfig) {
		c.Retry = runtime.RetryPolicy{MaxAttempts: 1}
		next := c.Handler
		c.Handler = runtime.HandlerFunc(func(ctx *runtime.Ctx) error {
			m := ctx.Message()
			if i, err := strconv.Atoi(m.Provenance.IdempotencyKey); err == nil {
				return hostileErrors[i](string(m.Body()))
			}
			return next.Handle(ctx)
		})
	})
	c := w.conv()
	for i := range hostileErrors {
		w.send(wire.Provenance{Conversation: c, Agent: "shop", IdempotencyKey: strconv.Itoa(i)}, "\xff\xfe\x00")
	}
	sentinel := w.send(wire.Provenance{Conversation: c}, "sentinel")
	for i := range hostileErrors {
		if dl := w.deadLetter(); dl.PublishErr != nil {
			t.Fatalf("capsule %d of %d was not published: %v", i+1, len(hostileErrors), dl.PublishErr)
		}
	}
	if got := w.expect(1); got[0] != "sentinel" {
		t.Fatalf("handled %v", got)
	}
	if err := w.shutdown(k); err != nil {
		t.Fatalf("the consumer stopped: %v", err)
	}
	caps := w.capsules()
	if len(caps) != len(hostileErrors) {
		t.Fatalf("%d capsules, want %d", len(caps), len(hostileErrors))
	}
	for i, d := range caps {
		if d.Detail == nil || !utf8.ValidString(*d.Detail) || len(*d.Detail) > runtime.MaxDeadLetterDetail || string(d.Payload) != "\xff\xfe\x00" {
			t.Errorf("capsule %d: %s", i, describeCapsule(d))
		}
	}
	if got := w.stored(); got[sentinel.Partition] != sentinel.Offset {
		t.Fatalf("stored %v, want the sentinel's offset %d", got, sentinel.Offset)
	}
}

func describeCapsule(d *wire.DeadLetter) string {
	if d.Detail == nil {
		return fmt.Sprintf("%s without detail, payload %q", d.Reason, d.Payload)
	}
	return fmt.Sprintf("%s detail of %d bytes (valid UTF-8 %v), payload %q", d.Reason, len(*d.Detail), utf8.ValidString(*d.Detail), d.Payload)
}
