package agui_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/lasergo/laser/bridge"
	"github.com/lasergo/laser/bridge/agui"
	"github.com/lasergo/laser/embedlog"
	"github.com/lasergo/laser/internal/bridgetest"
	"github.com/lasergo/laser/runtime"
	"github.com/lasergo/laser/wire"
)

// countingLog counts the records read back and signals each tail lookup.
type countingLog struct {
	runtime.Transport
	read  atomic.Int64
	tails chan struct{}
}

func (c *countingLog) ReadRange(ctx context.Context, topic string, partition uint32, offset uint64, count int) ([]runtime.Incoming, error) {
	recs, err := c.Transport.ReadRange(ctx, topic, partition, offset, count)
	c.read.Add(int64(len(recs)))
	return recs, err
}

func (c *countingLog) NextOffset(ctx context.Context, topic string, partition uint32) (uint64, error) {
	select {
	case c.tails <- struct{}{}:
	default:
	}
	return c.Transport.NextOffset(ctx, topic, partition)
}

func TestSSEFollowReadsOnlyWhatLandsAfterTheLastRecordRead(t *testing.T) {
	log := &countingLog{Transport: embedlog.New("bridges", embedlog.Config{}), tails: make(chan struct{}, 1)}
	client := bridgetest.Client(t, log)
	for range 50 {
		chat(t, client, client.IDs().NewID(), "someone else's words")
	}
	conv := client.IDs().NewID()
	publishStatus(t, client, conv, wire.TaskSubmitted)
	srv := httptest.NewServer(&agui.Handler{Client: client, Topic: runtime.TopicLLMIO, Follow: true, PollInterval: time.Millisecond})
	t.Cleanup(srv.Close)
	events := sse(t, get(t, srv.URL+"/?threadId="+conv.String()))
	if e := next(t, events); e.Type != agui.RunStarted {
		t.Fatalf("first event %+v, want the run started", e)
	}
	<-log.tails // the first poll began: the initial read is over
	baseline := log.read.Load()
	for range 20 {
		<-log.tails
	}
	if again := log.read.Load() - baseline; again != 0 {
		t.Fatalf("20 idle polls read %d records back, want none (the window re-read)", again)
	}
	chat(t, client, conv, "live")
	publishStatus(t, client, conv, wire.TaskCompleted)
	var got []agui.EventType
	for e := range events {
		got = append(got, e.Type)
	}
	want := []agui.EventType{agui.TextMessageStart, agui.TextMessageContent, agui.TextMessageEnd, agui.RunFinished}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("events after the start (-want +got):\n%s", diff)
	}
}

func TestSSEFollowIsBoundedPerClient(t *testing.T) {
	client := bridgetest.MemClient(t)
	conv := client.IDs().NewID()
	publishStatus(t, client, conv, wire.TaskSubmitted)
	srv := httptest.NewServer(&agui.Handler{Client: client, Topic: runtime.TopicLLMIO, Follow: true, MaxStreamsPerClient: 1})
	t.Cleanup(srv.Close)
	if e := next(t, sse(t, get(t, srv.URL+"/?threadId="+conv.String()))); e.Type != agui.RunStarted {
		t.Fatalf("first event %+v", e)
	}
	resp, err := http.Get(srv.URL + "/?threadId=" + conv.String())
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusTooManyRequests {
		t.Fatalf("a second live stream from one client: status %s, want 429", resp.Status)
	}
}

// signedStatus publishes a task status signed by the gateway's key.
func signedStatus(t *testing.T, client *runtime.Client, keys *bridgetest.Keys, conv wire.ID, s wire.TaskState) {
	t.Helper()
	op, corr := wire.OperationTask, conv
	env := &wire.Envelope{Kind: wire.KindStatus, Conversation: conv, Source: "agui-gateway", Correlation: &corr, Operation: &op, TaskState: &s}
	if _, err := bridge.PublishSigned(t.Context(), client, runtime.TopicLLMIO, env, wire.ContentRaw, keys.Gateway); err != nil {
		t.Fatal(err)
	}
}

func TestSSEUnderAVerifierShowsNoUnsignedChunk(t *testing.T) {
	keys := bridgetest.NewKeys(t)
	client := bridgetest.TrustedClient(t, keys.Registry)
	conv := client.IDs().NewID()
	signedStatus(t, client, keys, conv, wire.TaskSubmitted)
	chat(t, client, conv, "unsigned words")
	srv := httptest.NewServer(&agui.Handler{Client: client, Topic: runtime.TopicLLMIO})
	t.Cleanup(srv.Close)
	var got []agui.EventType
	for e := range sse(t, get(t, srv.URL+"/?threadId="+conv.String())) {
		got = append(got, e.Type)
	}
	if diff := cmp.Diff([]agui.EventType{agui.RunStarted}, got); diff != "" {
		t.Fatalf("events (-want +got):\n%s", diff)
	}
}

func TestSSEFollowUnderAVerifierShowsNoUnsignedChunk(t *testing.T) {
	keys := bridgetest.NewKeys(t)
	client := bridgetest.TrustedClient(t, keys.Registry)
	conv := client.IDs().NewID()
	signedStatus(t, client, keys, conv, wire.TaskSubmitted)
	srv := httptest.NewServer(&agui.Handler{Client: client, Topic: runtime.TopicLLMIO, Follow: true, PollInterval: time.Millisecond})
	t.Cleanup(srv.Close)
	events := sse(t, get(t, srv.URL+"/?threadId="+conv.String()))
	if e := next(t, events); e.Type != agui.RunStarted {
		t.Fatalf("first event %+v", e)
	}
	chat(t, client, conv, "unsigned live words")
	signedStatus(t, client, keys, conv, wire.TaskCompleted)
	var got []agui.EventType
	for e := range events {
		got = append(got, e.Type)
	}
	if diff := cmp.Diff([]agui.EventType{agui.RunFinished}, got); diff != "" {
		t.Fatalf("events after the start (-want +got):\n%s", diff)
	}
}
