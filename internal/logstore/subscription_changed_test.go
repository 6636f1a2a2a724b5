package logstore_test

import (
	"context"
	"testing"

	"github.com/lasergo/laser/internal/logstore"
	"github.com/lasergo/laser/runtime"
)

// TestSubscriptionChangedClosesOnAppend pins the wake-up an idle consumer
// relies on: the channel taken before a poll is closed by the next append.
func TestSubscriptionChangedClosesOnAppend(t *testing.T) {
	ctx := context.Background()
	l := logstore.New("laser")
	if err := l.EnsureTopics(ctx, 1, "t"); err != nil {
		t.Fatal(err)
	}
	sub, err := l.Join(ctx, "t", "g")
	if err != nil {
		t.Fatal(err)
	}
	changed := sub.(interface{ Changed() <-chan struct{} }).Changed()
	select {
	case <-changed:
		t.Fatal("closed before anything was appended")
	default:
	}
	if _, err := l.Publish(ctx, "t", runtime.Outgoing{Payload: []byte("x")}); err != nil {
		t.Fatal(err)
	}
	select {
	case <-changed:
	default:
		t.Fatal("an append did not close the channel")
	}
}
