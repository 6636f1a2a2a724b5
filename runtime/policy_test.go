package runtime

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/lasergo/laser/dedup"
	"github.com/lasergo/laser/wire"
)

func TestRetryPolicyDelaysDoubleFromTheBaseAndSaturate(t *testing.T) {
	p := RetryPolicy{MaxAttempts: 5, BaseDelay: 100 * time.Millisecond}
	for attempt, want := range []time.Duration{100, 200, 400, 800} {
		if got := p.Delay(attempt); got != want*time.Millisecond {
			t.Fatalf("Delay(%d) = %v, want %v", attempt, got, want*time.Millisecond)
		}
	}
	if p.Delay(16) != p.Delay(60) {
		t.Fatal("the exponent is capped at 16")
	}
	huge := RetryPolicy{BaseDelay: time.Duration(1) << 60}
	if huge.Delay(16) <= 0 {
		t.Fatal("a huge base must saturate, not overflow")
	}
	if DefaultRetryPolicy.Delay(0) != 200*time.Millisecond || DefaultRetryPolicy.MaxAttempts != 5 {
		t.Fatalf("default policy %+v", DefaultRetryPolicy)
	}
}

func TestPollBackoffIsFiftyMillisecondsDoublingToOneSecond(t *testing.T) {
	for n, want := range []time.Duration{50, 100, 200, 400, 800, 1000, 1000} {
		if got := pollBackoff(n + 1); got != want*time.Millisecond {
			t.Fatalf("pollBackoff(%d) = %v, want %v", n+1, got, want*time.Millisecond)
		}
	}
}

func TestDedupKeyIsScopedBySenderWithUnitSeparator(t *testing.T) {
	if a, b := dedup.Key("planner", "attempt-1"), dedup.Key("worker", "attempt-1"); a == b {
		t.Fatal("two senders' keys collide")
	}
	if got := dedup.Key("planner", "k"); got != "planner\x1fk" {
		t.Fatalf("scoped key %q", got)
	}
	if got := dedup.Key("", "k"); got != "\x1fk" {
		t.Fatalf("unscoped key %q", got)
	}
}

// An unknown sender (a 256-byte source decodes to none) whose key holds the
// separator must not land on a named sender's key: the reproducer
// burnt shop's order-43 this way.
func TestDedupKeyOfUnknownSenderNeverEqualsANamedSendersKey(t *testing.T) {
	if dedup.Key("", "shop\x1forder-43") == dedup.Key("shop", "order-43") {
		t.Fatal("an unknown sender's key collides with shop's order-43")
	}
	if dedup.Key("a\x1fb", "c") == dedup.Key("a", "b\x1fc") {
		t.Fatal("a sender holding the separator collides with another")
	}
	w := dedup.NewSlidingWindow(8)
	_, shop := w.Mark("shop", "order-43")
	_, unknown := w.Mark("", "shop\x1forder-43")
	if !shop || !unknown {
		t.Fatal("the window's scoped hash conflates an unknown sender with shop")
	}
}

func TestSlidingWindowIsFIFOAndDoesNotRefreshOnRepeat(t *testing.T) {
	w := dedup.NewSlidingWindow(2)
	ctx := context.Background()
	observe := func(k string) bool {
		fresh, err := w.Observe(ctx, k)
		if err != nil {
			t.Fatal(err)
		}
		return fresh
	}
	if !observe("a") || !observe("b") {
		t.Fatal("new keys")
	}
	if observe("a") {
		t.Fatal("a repeat is a duplicate")
	}
	if !observe("c") { // evicts "a", the oldest, despite its repeat
		t.Fatal("c is new")
	}
	if !observe("a") {
		t.Fatal("a was evicted, so it is new again")
	}
	if observe("c") {
		t.Fatal("c is still in the window")
	}
	if w.Len() != 2 {
		t.Fatalf("len %d", w.Len())
	}
}

func TestFenceGateKeepsAHighWaterMarkPerConversation(t *testing.T) {
	g := newFenceGate()
	a, b := wire.IDFromUint128(0, 1), wire.IDFromUint128(0, 2)
	steps := []struct {
		conv  wire.ID
		fence uint64
		ok    bool
	}{
		{a, 1, true},
		{a, 2, true},
		{a, 1, false}, // stale holder
		{a, 2, true},  // the same holder retrying
		{b, 1, true},  // another conversation has its own mark
	}
	for i, s := range steps {
		if got := g.accept("", s.conv, s.fence, uint64(100+i)); got != s.ok {
			t.Fatalf("step %d: accept(%d) = %v", i, s.fence, got)
		}
	}
}

func TestFenceGateSweepsIdleEntriesOnlyAboveItsCapAndAtMostOncePerSecond(t *testing.T) {
	g := newFenceGate()
	for i := 0; i <= fenceSoftCap; i++ {
		g.accept("", wire.IDFromUint128(1, uint64(i)), 1, 0)
	}
	if g.len() != fenceSoftCap+1 {
		t.Fatalf("len %d", g.len())
	}
	// Not idle long enough: nothing is swept.
	g.accept("", wire.IDFromUint128(2, 0), 1, fenceIdleMicros-1)
	if g.len() != fenceSoftCap+2 {
		t.Fatalf("swept too early: len %d", g.len())
	}
	// Within a second of the last sweep, no second sweep runs.
	g.accept("", wire.IDFromUint128(2, 1), 1, fenceIdleMicros)
	if g.len() != fenceSoftCap+3 {
		t.Fatalf("swept twice within a second: len %d", g.len())
	}
	// A second later every entry idle for 600 s goes; recent ones stay.
	now := uint64(fenceIdleMicros + 2*fenceSweepMicros)
	g.accept("", wire.IDFromUint128(2, 2), 1, now)
	if g.len() != 3 {
		t.Fatalf("after the sweep len %d, want the 3 recent entries", g.len())
	}
}

func TestErrorTaxonomyMatchesTheReferenceRetryableSet(t *testing.T) {
	retryable := []error{
		errors.New("plain handler failure"),
		&Error{Code: CodeHandler},
		&Error{Code: CodeTimeout},
		&Error{Code: CodeNoCapableAgent},
		&Error{Code: CodeTransport, Msg: "poll", Retryable: true, Err: errors.New("broken pipe")},
		fmt.Errorf("wrapped: %w", ErrTransient),
		context.DeadlineExceeded,
		fmt.Errorf("wrapped: %w", &Error{Code: CodeTimeout}),
		Retry(Reject(errors.New("forced transient"))),
		&Error{Code: CodeHandler, Wire: wire.ErrorInternal, Retryable: true, remote: true},
	}
	permanent := []error{
		Reject(errors.New("bad input")),
		Reject(fmt.Errorf("bad %s", "input")),
		&Error{Code: CodeHandlerConfig},
		&Error{Code: CodeInvalid},
		&Error{Code: CodeCodec},
		&Error{Code: CodeSignature},
		&Error{Code: CodeNoRespondTopic},
		&Error{Code: CodeUnsupported},
		&Error{Code: CodeConfig},
		&Error{Code: CodeNotPickedUp},
		&Error{Code: CodeTransport, Msg: "ensure topics", Err: errors.New("topic exists with 3 partitions")},
		fmt.Errorf("wrapped: %w", &Error{Code: CodeTransport, Msg: "publish", Err: errors.New("forbidden")}),
		Failf(wire.ErrorUnauthorized, "no"),
		&Error{Code: CodeHandler, Wire: wire.ErrorInternal, remote: true},
		context.Canceled,
	}
	for _, err := range retryable {
		if !IsRetryable(err) {
			t.Errorf("%v should be retryable", err)
		}
	}
	for _, err := range permanent {
		if IsRetryable(err) {
			t.Errorf("%v should be permanent", err)
		}
	}
	if IsRetryable(nil) {
		t.Error("nil is not an error to retry")
	}
	if CodeOf(Reject(fmt.Errorf("x"))) != CodeRejected {
		t.Error("sentinels match by code")
	}
}

func TestSlidingWindowForgetMakesAKeyNewWithoutDisturbingEviction(t *testing.T) {
	w := dedup.NewSlidingWindow(2)
	ctx := context.Background()
	observe := func(k string) bool {
		fresh, _ := w.Observe(ctx, k)
		return fresh
	}
	observe("a")
	observe("b")
	if err := w.Forget(ctx, "a"); err != nil {
		t.Fatal(err)
	}
	if !observe("a") {
		t.Fatal("a forgotten key is new again")
	}
	// Evicting the stale slot of the first "a" must not drop the live one.
	observe("c")
	if observe("a") {
		t.Fatal("the re-observed key was evicted through its stale slot")
	}
	if !observe("b") {
		t.Fatal("b, the oldest live key, should have been evicted")
	}
}

func TestSlidingWindowStaysExactUnderManyForgets(t *testing.T) {
	w := dedup.NewSlidingWindow(3)
	ctx := context.Background()
	for i := range 200 {
		k := fmt.Sprint("k", i)
		if fresh, _ := w.Observe(ctx, k); !fresh {
			t.Fatalf("%s is new", k)
		}
		if i%3 == 0 {
			_ = w.Forget(ctx, k)
			if fresh, _ := w.Observe(ctx, k); !fresh {
				t.Fatalf("forgotten %s is new again", k)
			}
		}
		if n := w.Len(); n > 3 {
			t.Fatalf("window holds %d keys, capacity 3", n)
		}
	}
	// The ring holds the last three insertions: k199, then k198 twice (its
	// stale slot and its live one).
	if fresh, _ := w.Observe(ctx, "k198"); fresh {
		t.Fatal("k198 is still in the window")
	}
	if fresh, _ := w.Observe(ctx, "k197"); !fresh {
		t.Fatal("k197 should have been evicted")
	}
}

func TestCodeOfNamesEveryErrorClass(t *testing.T) {
	tests := []struct {
		err  error
		want Code
	}{
		{nil, 0},
		{errors.New("plain"), CodeHandler},
		{Reject(fmt.Errorf("bad")), CodeRejected},
		{Failf(wire.ErrorToolFailure, "declined"), CodeToolFailure},
		{Retry(Reject(fmt.Errorf("bad"))), CodeHandler},
		{fmt.Errorf("wrapped: %w", &Error{Code: CodeConfig, Msg: "x"}), CodeConfig},
		{&Error{Code: CodeHandler, Wire: wire.ErrorInternal, remote: true}, CodeHandler},
		{&Error{Code: CodeRemote, Wire: 42, remote: true}, CodeRemote},
		{&Error{Code: CodeTransport, Msg: "poll", Retryable: true, Err: errors.New("reset")}, CodeTransport},
		{&Error{Code: CodeTransport, Msg: "publish", Err: fmt.Errorf("waiting: %w", context.DeadlineExceeded)}, CodeTimeout},
		{&Error{Code: CodeTransport, Msg: "publish", Err: fmt.Errorf("waiting: %w", context.Canceled)}, CodeCancelled},
		{context.Canceled, CodeCancelled},
		{context.DeadlineExceeded, CodeTimeout},
	}
	for _, tt := range tests {
		if got := CodeOf(tt.err); got != tt.want {
			t.Errorf("CodeOf(%v) = %s, want %s", tt.err, got, tt.want)
		}
	}
}

func TestIsRetryableFollowsATransportFailuresRetryableField(t *testing.T) {
	transient := &Error{Code: CodeTransport, Msg: "poll", Retryable: true, Err: errors.New("reset")}
	permanent := &Error{Code: CodeTransport, Msg: "ensure topics", Err: errors.New("3 partitions, want 1..2")}
	if !IsRetryable(transient) || IsRetryable(permanent) {
		t.Fatalf("IsRetryable: transient %v, permanent %v; want true, false", IsRetryable(transient), IsRetryable(permanent))
	}
}
