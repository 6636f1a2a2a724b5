package runtime_test

import (
	"context"
	"errors"
	"testing"

	"github.com/lasergo/laser/clock"
	"github.com/lasergo/laser/embedlog"
	"github.com/lasergo/laser/runtime"
	"github.com/lasergo/laser/sign"
	"github.com/lasergo/laser/wire"
)

// announcing signals on asked each record appended to topic "asks".
type announcing struct {
	runtime.Transport
	asked chan runtime.Position
}

func (a *announcing) Publish(ctx context.Context, topic string, recs ...runtime.Outgoing) ([]runtime.Position, error) {
	pos, err := a.Transport.Publish(ctx, topic, recs...)
	if err == nil && topic == "asks" {
		for _, p := range pos {
			a.asked <- p
		}
	}
	return pos, err
}

// pendingRequest starts c.Request of body on topic "asks" (replies on
// "answers") over a and returns the request as a reader of the log sees it,
// and the channel the caller's outcome arrives on.
func pendingRequest(t *testing.T, c *runtime.Client, a *announcing, body string) (*runtime.Message, chan requestOutcome) {
	t.Helper()
	out := make(chan requestOutcome, 1)
	go func() {
		m, err := c.Request(context.Background(), runtime.Out{Topic: "asks", From: "asker", Target: "person", Body: []byte(body)},
			runtime.WithReplyTopic("answers"), runtime.WithTimeout(waitLimit))
		out <- requestOutcome{m, err}
	}()
	pos := recv(t, a.asked, "the request on the log")
	recs, err := a.ReadRange(context.Background(), "asks", pos.Partition, pos.Offset, 1)
	if err != nil || len(recs) != 1 {
		t.Fatalf("read the request: %d records, %v", len(recs), err)
	}
	m, err := runtime.DecodeRecord("asks", &recs[0], 0)
	if err != nil {
		t.Fatal(err)
	}
	return m, out
}

// newAsking returns a log with topics asks and answers, announcing asks.
func newAsking(t *testing.T) *announcing {
	t.Helper()
	log := embedlog.New("laser", embedlog.Config{})
	if err := log.EnsureTopics(context.Background(), 1, "asks", "answers"); err != nil {
		t.Fatal(err)
	}
	return &announcing{Transport: log, asked: make(chan runtime.Position, 1)}
}

type requestOutcome struct {
	m   *runtime.Message
	err error
}

func TestClientAnswerRespondsToARequestReadFromTheLog(t *testing.T) {
	key := newKey(41)
	reg := sign.NewRegistry()
	if err := reg.Enroll("person", key.Public()); err != nil {
		t.Fatal(err)
	}
	log := newAsking(t)
	c := newClient(t, log, clock.System{}, reg)
	req, outcome := pendingRequest(t, c, log, "refund 40?")
	sent, err := c.Send(context.Background(), runtime.Out{Kind: wire.KindResponse, Topic: "answers", From: "person", Body: []byte("yes"), ReplyTo: req}, runtime.WithSigningKey(key))
	if err != nil {
		t.Fatal(err)
	}
	got := recv(t, outcome, "request outcome")
	if got.err != nil {
		t.Fatal(got.err)
	}
	env := got.m.Envelope
	if env == nil || env.Kind != wire.KindResponse || string(got.m.Body()) != "yes" || got.m.VerifiedPrincipal != "person" || *env.Record != *sent.Record {
		t.Fatalf("reply %+v (answer %v), body %q, principal %q", env, sent.Record, got.m.Body(), got.m.VerifiedPrincipal)
	}
	if env.Conversation != req.Envelope.Conversation || env.Target == nil || *env.Target != "asker" {
		t.Fatalf("reply conversation %s target %v, want %s to asker", env.Conversation, env.Target, req.Envelope.Conversation)
	}
}

func TestClientAnswerWithAnErrorIsARemoteErrorToTheCaller(t *testing.T) {
	log := newAsking(t)
	c := newClient(t, log, clock.System{}, nil)
	req, outcome := pendingRequest(t, c, log, "delete everything?")
	reason := "no"
	body, err := (&wire.ErrorBody{Code: wire.ErrorUnauthorized, Message: &reason}).Marshal()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Send(context.Background(), runtime.Out{Kind: wire.KindError, Topic: "answers", From: "person", Body: body, ReplyTo: req}); err != nil {
		t.Fatal(err)
	}
	got := recv(t, outcome, "request outcome")
	var remote *runtime.Error
	if !(errors.As(got.err, &remote) && remote.Remote()) || remote.Wire != wire.ErrorUnauthorized || remote.Msg != "no" {
		t.Fatalf("err = %v, want a remote *runtime.Error unauthorized: no", got.err)
	}
}

func TestClientAnswerRefusesWhatIsNotARequest(t *testing.T) {
	log := newLog(t, 1, clock.System{})
	c := newClient(t, log, clock.System{}, nil)
	plain(t, log, wire.Provenance{Conversation: conv(), Agent: sender, Correlation: "c-1"}, "approve?")
	m, err := runtime.DecodeRecord(topic, &readAll(t, log, topic)[0], 0)
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.Send(context.Background(), runtime.Out{Kind: wire.KindResponse, Topic: resp, From: "person", Body: []byte("yes"), ReplyTo: m})
	if runtime.CodeOf(err) != runtime.CodeInvalid {
		t.Fatalf("err = %v, want CodeInvalid", err)
	}
	if recs := readAll(t, log, resp); len(recs) != 0 {
		t.Fatalf("%d records on %s after a refused answer", len(recs), resp)
	}
}

func TestClientAnswerRefusesAContentTypeOnAnErrorAndANilRequest(t *testing.T) {
	log := newAsking(t)
	c := newClient(t, log, clock.System{}, nil)
	req, _ := pendingRequest(t, c, log, "approve?")
	reason := "no"
	body, err := (&wire.ErrorBody{Code: wire.ErrorUnauthorized, Message: &reason}).Marshal()
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.Send(context.Background(), runtime.Out{Kind: wire.KindError, Topic: "answers", From: "person", Body: body, ReplyTo: req}, runtime.WithContentType(wire.ContentJSON))
	if runtime.CodeOf(err) != runtime.CodeConfig {
		t.Fatalf("err = %v, want CodeConfig: an error body is CBOR", err)
	}
	if _, err := c.Send(context.Background(), runtime.Out{Kind: wire.KindResponse, Topic: "answers", From: "person"}); runtime.CodeOf(err) != runtime.CodeInvalid {
		t.Fatalf("nil request: err = %v, want CodeInvalid", err)
	}
	if recs := readAll(t, log, "answers"); len(recs) != 0 {
		t.Fatalf("%d answers published by refused calls", len(recs))
	}
}
