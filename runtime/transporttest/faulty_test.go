package transporttest_test

import (
	"context"
	"errors"
	"testing"

	"github.com/lasergo/laser/embedlog"
	"github.com/lasergo/laser/internal/logstore"
	"github.com/lasergo/laser/runtime"
	"github.com/lasergo/laser/runtime/transporttest"
)

var errInjected = errors.New("injected")

func newFaulty(t *testing.T, topics ...string) (*transporttest.Faulty, *logstore.Log) {
	t.Helper()
	l := logstore.New("laser")
	if err := l.EnsureTopics(context.Background(), 1, topics...); err != nil {
		t.Fatal(err)
	}
	return transporttest.NewFaulty(l), l
}

func out(payload string) runtime.Outgoing {
	return runtime.Outgoing{Key: "k", Payload: []byte(payload)}
}

func TestFaultyPassesConformance(t *testing.T) {
	transporttest.Run(t, func(t *testing.T) runtime.Transport {
		return transporttest.NewFaulty(embedlog.New("laser", embedlog.Config{}))
	})
}

func TestFaultyFailPublish(t *testing.T) {
	f, l := newFaulty(t, "a", "dlq")
	ctx := context.Background()
	f.FailPublish(func(topic string) error {
		if topic == "dlq" {
			return errInjected
		}
		return nil
	})
	if _, err := f.Publish(ctx, "dlq", out("x")); !errors.Is(err, errInjected) {
		t.Fatalf("Publish to dlq: %v, want the injected error", err)
	}
	if _, err := f.Publish(ctx, "a", out("y"), out("z")); err != nil {
		t.Fatalf("Publish to a: %v", err)
	}
	if n, _ := l.NextOffset(ctx, "dlq", 0); n != 0 {
		t.Errorf("a failed publish reached the log (%d records)", n)
	}
	if f.Published("a") != 2 || f.Published("dlq") != 0 || f.PublishAttempts("dlq") != 1 {
		t.Errorf("counters: a=%d dlq=%d attempts(dlq)=%d", f.Published("a"), f.Published("dlq"), f.PublishAttempts("dlq"))
	}
	f.FailPublish(nil)
	if _, err := f.Publish(ctx, "dlq", out("x")); err != nil {
		t.Errorf("Publish after disarming: %v", err)
	}
}

func TestFaultyFailCommitAndCounters(t *testing.T) {
	f, l := newFaulty(t, "a")
	ctx := context.Background()
	if _, err := f.Publish(ctx, "a", out("0"), out("1")); err != nil {
		t.Fatal(err)
	}
	sub, err := f.Join(ctx, "a", "g")
	if err != nil {
		t.Fatal(err)
	}
	f.FailCommit(func(_ uint32, offset uint64) error {
		if offset == 1 {
			return errInjected
		}
		return nil
	})
	if err := sub.Commit(ctx, 0, 0); err != nil {
		t.Fatal(err)
	}
	if err := sub.Commit(ctx, 0, 1); !errors.Is(err, errInjected) {
		t.Fatalf("Commit(0, 1): %v, want the injected error", err)
	}
	if off, ok, _ := l.StoredOffset(ctx, "a", "g", 0); !ok || off != 0 {
		t.Errorf("stored offset %d (%v); the failed commit must not store", off, ok)
	}
	want := []transporttest.Commit{{Topic: "a", Group: "g", Partition: 0, Offset: 0}}
	if got := f.Commits(); len(got) != 1 || got[0] != want[0] || f.CommitCount() != 1 {
		t.Errorf("Commits() = %v, want %v", got, want)
	}
}

func TestFaultyFailPollAndJoin(t *testing.T) {
	f, _ := newFaulty(t, "a")
	ctx := context.Background()
	if _, err := f.Publish(ctx, "a", out("0")); err != nil {
		t.Fatal(err)
	}
	f.FailJoin(func(topic, group string) error { return errInjected })
	if _, err := f.Join(ctx, "a", "g"); !errors.Is(err, errInjected) {
		t.Fatalf("Join: %v, want the injected error", err)
	}
	f.FailJoin(nil)
	sub, err := f.Join(ctx, "a", "g")
	if err != nil {
		t.Fatal(err)
	}
	f.FailPoll(func() error { return errInjected })
	if _, err := sub.Poll(ctx, 10); !errors.Is(err, errInjected) {
		t.Fatalf("Poll: %v, want the injected error", err)
	}
	f.FailPoll(nil)
	if recs, err := sub.Poll(ctx, 10); err != nil || len(recs) != 1 {
		t.Fatalf("Poll after disarming = %d records, %v; the failed poll must not consume", len(recs), err)
	}
}

func TestFaultyDisconnect(t *testing.T) {
	f, l := newFaulty(t, "a")
	ctx := context.Background()
	sub, err := f.Join(ctx, "a", "g")
	if err != nil {
		t.Fatal(err)
	}
	f.Disconnect()
	_, pubErr := f.Publish(ctx, "a", out("x"))
	_, joinErr := f.Join(ctx, "a", "g")
	_, pollErr := sub.Poll(ctx, 1)
	_, _, offErr := f.StoredOffset(ctx, "a", "g", 0)
	_, rangeErr := f.ReadRange(ctx, "a", 0, 0, 1)
	_, partsErr := f.Partitions(ctx, "a")
	_, _, idsErr := f.TopicIDs(ctx, "a")
	_, nextErr := f.NextOffset(ctx, "a", 0)
	for name, err := range map[string]error{
		"publish": pubErr, "join": joinErr, "poll": pollErr, "commit": sub.Commit(ctx, 0, 0),
		"stored offset": offErr, "read range": rangeErr, "partitions": partsErr, "topic ids": idsErr,
		"next offset": nextErr, "ensure topics": f.EnsureTopics(ctx, 1, "b"),
	} {
		if !errors.Is(err, runtime.ErrDisconnected) {
			t.Errorf("%s while disconnected: %v, want ErrDisconnected", name, err)
		}
	}
	tp, _ := l.Topic("a")
	if g, _ := tp.Group("g"); len(g.Members()) != 0 {
		t.Errorf("the dropped subscription is still a member: %v", g.Members())
	}

	f.Reconnect()
	if _, err := sub.Poll(ctx, 1); !errors.Is(err, runtime.ErrDisconnected) {
		t.Errorf("old subscription after Reconnect: %v, want ErrDisconnected (membership is gone)", err)
	}
	fresh, err := f.Join(ctx, "a", "g")
	if err != nil {
		t.Fatalf("Join after Reconnect: %v", err)
	}
	if _, err := fresh.Poll(ctx, 1); err != nil {
		t.Errorf("new subscription after Reconnect: %v", err)
	}
}

func TestFaultyHookMayCallBack(t *testing.T) {
	f, _ := newFaulty(t, "a")
	ctx := context.Background()
	sub, err := f.Join(ctx, "a", "g")
	if err != nil {
		t.Fatal(err)
	}
	// A hook that disconnects mid-operation models a connection dying on
	// exactly this call.
	f.FailPoll(func() error {
		f.Disconnect()
		return errInjected
	})
	if _, err := sub.Poll(ctx, 1); !errors.Is(err, errInjected) {
		t.Fatalf("Poll: %v", err)
	}
	if _, err := f.Publish(ctx, "a", out("x")); !errors.Is(err, runtime.ErrDisconnected) {
		t.Errorf("Publish after the hook disconnected: %v", err)
	}
}
