package iggy_test

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/lasergo/laser/iggy"
	"github.com/lasergo/laser/iggytest"
)

// A subscription's calls run on the caller's goroutine under a socket
// deadline (with the system clock); these tests pin that the deadline and
// a cancellation still end a call to a stuck server, and that the
// subscription carries on where it was afterwards.

func TestSubscriptionPollToAStuckServerTimesOutAndResumes(t *testing.T) {
	s := iggytest.Start(t)
	tr := ready(t, s, 1, iggy.WithCallTimeout(300*time.Millisecond))
	ctx := t.Context()
	if _, err := tr.Publish(ctx, "t", records("r", 4)...); err != nil {
		t.Fatal(err)
	}
	sub := joinSub(t, tr, "g")
	first, err := sub.Poll(ctx, 2)
	if err != nil || len(first) != 2 {
		t.Fatalf("first poll = %d records, %v", len(first), err)
	}
	s.Hang(iggytest.CmdPoll)
	if _, err := sub.Poll(ctx, 10); !errors.Is(err, iggy.ErrTimeout) {
		t.Fatalf("poll of a stuck server: %v, want ErrTimeout", err)
	}
	s.Unhang()
	// The timed-out connection was dropped; let the server end its session
	// so the rebuilt one rejoins without waiting for a rebalance.
	if err := s.WaitConnections(ctx, 1); err != nil {
		t.Fatal(err)
	}
	rest, err := sub.Poll(ctx, 10)
	if err != nil {
		t.Fatalf("poll after the timeout: %v", err)
	}
	if got := append(payloads(first), payloads(rest)...); !slices.Equal(got, []string{"r-0", "r-1", "r-2", "r-3"}) {
		t.Fatalf("polled %q, want every record once in order", got)
	}
}

func TestSubscriptionPollCancelledReturnsAtOnce(t *testing.T) {
	s := iggytest.Start(t)
	tr := ready(t, s, 1, iggy.WithCallTimeout(time.Minute))
	sub := joinSub(t, tr, "g")
	s.Hang(iggytest.CmdPoll)
	defer s.Unhang()
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() {
		_, err := sub.Poll(ctx, 10)
		done <- err
	}()
	if err := s.WaitHeld(t.Context(), 1); err != nil {
		t.Fatal(err)
	}
	cancel()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("cancelled poll: %v, want context.Canceled", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("a cancelled poll did not return")
	}
}
