package runtime_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/lasergo/laser/clock"
	"github.com/lasergo/laser/runtime"
	"github.com/lasergo/laser/wire"
)

// parkOne runs a consumer whose handler returns fail(body), publishes one
// message and a sentinel, and returns the capsule of the first once the
// sentinel was handled: the consumer must carry on after parking it.
func parkOne(t *testing.T, fail func(body []byte) error) *wire.DeadLetter {
	t.Helper()
	log := newLog(t, 1, clock.System{})
	sink, dls := deadLetters()
	handled := make(chan string, 2)
	r := start(t, log, runtime.ConsumerConfig{
		Agent: agent,
		Handler: handlerFunc(func(c *runtime.Ctx) error {
			if body := c.Message().Body(); string(body) != "sentinel" {
				return fail(body)
			}
			handled <- "sentinel"
			return nil
		}),
		Tuning: runtime.Tuning{
			DeadLetterSink: sink,
			Retry:          runtime.RetryPolicy{MaxAttempts: 1},
		},
	})
	c := conv()
	poison := plain(t, log, wire.Provenance{Conversation: c, Agent: sender}, "\xff\xfe")
	sentinel := plain(t, log, wire.Provenance{Conversation: c, Agent: sender}, "sentinel")
	dl := recv(t, dls, "dead letter")
	if dl.PublishErr != nil {
		t.Fatalf("the capsule was not published: %v", dl.PublishErr)
	}
	recv(t, handled, "sentinel after the poison")
	if err := r.shutdown(t); err != nil {
		t.Fatalf("the consumer stopped: %v", err)
	}
	if off, ok := stored(t, log, sentinel.Partition); !ok || off != sentinel.Offset {
		t.Fatalf("stored %d (%v), want %d", off, ok, sentinel.Offset)
	}
	caps := readAll(t, log, dlq)
	if len(caps) != 1 {
		t.Fatalf("%d capsules, want 1", len(caps))
	}
	capsule, err := wire.DecodeDeadLetter(caps[0].Payload)
	if err != nil {
		t.Fatal(err)
	}
	if capsule.Source.Offset != poison.Offset || string(capsule.Payload) != "\xff\xfe" {
		t.Fatalf("capsule %+v", capsule)
	}
	return capsule
}

func TestNonUTF8RejectionTextIsParkedAndTheConsumerCarriesOn(t *testing.T) {
	capsule := parkOne(t, func(body []byte) error { return runtime.Reject(fmt.Errorf("bad body %s", body)) })
	if capsule.Reason != wire.ReasonRejected || capsule.Detail == nil || *capsule.Detail != "rejected: bad body \uFFFD" {
		t.Fatalf("capsule %s detail %q", capsule.Reason, *capsule.Detail)
	}
}

func TestNonUTF8RetryableErrorTextIsParkedAndTheConsumerCarriesOn(t *testing.T) {
	capsule := parkOne(t, func(body []byte) error { return errors.New("cannot store " + string(body)) })
	if capsule.Reason != wire.ReasonRetryExhausted || *capsule.Detail != "cannot store \uFFFD" {
		t.Fatalf("capsule %s detail %q", capsule.Reason, *capsule.Detail)
	}
}

func TestHugeErrorTextIsCutToTheDetailCap(t *testing.T) {
	huge := strings.Repeat("é", runtime.MaxDeadLetterDetail) // two bytes each
	capsule := parkOne(t, func([]byte) error { return runtime.Reject(fmt.Errorf("%s", huge)) })
	d := *capsule.Detail
	if len(d) > runtime.MaxDeadLetterDetail || !utf8.ValidString(d) || !strings.HasPrefix(d, "rejected: éé") || !strings.HasSuffix(d, "é…") {
		t.Fatalf("detail of %d bytes, valid %v, ends %q", len(d), utf8.ValidString(d), d[max(0, len(d)-8):])
	}
}

// nilPointerError is an error type whose methods dereference their receiver.
type nilPointerError struct{ msg string }

func (e *nilPointerError) Error() string { return e.msg }

func TestErrorWhoseTextPanicsIsParkedAndTheConsumerCarriesOn(t *testing.T) {
	capsule := parkOne(t, func([]byte) error {
		var e *nilPointerError
		return runtime.Reject(e)
	})
	if capsule.Reason != wire.ReasonRejected || !strings.Contains(*capsule.Detail, "could not be read") {
		t.Fatalf("capsule %s detail %q", capsule.Reason, *capsule.Detail)
	}
}

func TestRejectionDetailReadsRejectedColonMessageLikeTheReference(t *testing.T) {
	capsule := parkOne(t, func([]byte) error { return runtime.Reject(fmt.Errorf("invalid amount")) })
	if *capsule.Detail != "rejected: invalid amount" {
		t.Fatalf("detail %q, want the reference's %q", *capsule.Detail, "rejected: invalid amount")
	}
}

func TestFailRequestWithNonUTF8TextAnswersTheCallerAndParksTheCommand(t *testing.T) {
	log := newLog(t, 1, clock.System{})
	c := newClient(t, log, clock.System{}, nil)
	sink, dls := deadLetters()
	runAgent(t, c, runtime.AgentConfig{ID: "strict", Respond: runtime.TopicResponses,
		Tuning: runtime.Tuning{DeadLetterSink: sink},
		Handler: handlerFunc(func(ctx *runtime.Ctx) error {
			return ctx.FailRequest(runtime.Reject(fmt.Errorf("bad body %s", ctx.Message().Body())))
		})})
	_, err := c.Request(context.Background(), runtime.Out{From: "caller", Target: "strict", Body: []byte("\xff\xfe")}, runtime.WithTimeout(waitLimit))
	var remote *runtime.Error
	if !(errors.As(err, &remote) && remote.Remote()) || remote.Msg != "bad body \uFFFD" {
		t.Fatalf("err = %v, want a remote error with the text made valid", err)
	}
	dl := recv(t, dls, "dead letter")
	if dl.PublishErr != nil || dl.Capsule.Reason != wire.ReasonRejected || *dl.Capsule.Detail != "rejected: bad body \uFFFD" {
		t.Fatalf("capsule %+v (publish %v)", dl.Capsule, dl.PublishErr)
	}
}
