package redisdedup_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/lasergo/laser/dedup"
	"github.com/lasergo/laser/internal/redistest"
	"github.com/lasergo/laser/redisdedup"
	"github.com/lasergo/laser/runtime"
)

// client returns a client of a fresh server; it fails fast when the server
// is gone, as the tests of an outage want.
func client(t *testing.T, addr string) *redis.Client {
	t.Helper()
	rdb := redis.NewClient(&redis.Options{Addr: addr, MaxRetries: -1, DialTimeout: 200 * time.Millisecond})
	t.Cleanup(func() { _ = rdb.Close() })
	return rdb
}

func observe(t *testing.T, d *redisdedup.Deduplicator, key string) bool {
	t.Helper()
	fresh, err := d.Observe(context.Background(), key)
	if err != nil {
		t.Fatalf("observe %q: %v", key, err)
	}
	return fresh
}

func complete(t *testing.T, d *redisdedup.Deduplicator, key string) {
	t.Helper()
	if err := d.Complete(context.Background(), key); err != nil {
		t.Fatalf("complete %q: %v", key, err)
	}
}

func TestObserveClaimsOnceAcrossReplicasAndCompletedKeysAreDuplicates(t *testing.T) {
	srv := redistest.Start(t)
	rdb := client(t, srv.Addr())
	replicas := []*redisdedup.Deduplicator{redisdedup.New(rdb, "billing"), redisdedup.New(rdb, "billing"), redisdedup.New(rdb, "billing")}
	key := dedup.Key("shop", "order-1")

	var fresh, busy atomic.Int32
	var wg sync.WaitGroup
	for i := 0; i < 24; i++ {
		wg.Add(1)
		go func(d *redisdedup.Deduplicator) {
			defer wg.Done()
			ok, err := d.Observe(context.Background(), key)
			switch {
			case ok && err == nil:
				fresh.Add(1)
			case errors.Is(err, redisdedup.ErrClaimed) && errors.Is(err, runtime.ErrTransient):
				busy.Add(1)
			default:
				t.Errorf("observe = %v, %v; want a claim or ErrClaimed", ok, err)
			}
		}(replicas[i%len(replicas)])
	}
	wg.Wait()
	if fresh.Load() != 1 || busy.Load() != 23 {
		t.Fatalf("%d claims and %d busy answers; want exactly one claim", fresh.Load(), busy.Load())
	}
	// Whoever claimed completes; from then on every replica sees a duplicate.
	for _, d := range replicas {
		_ = d.Complete(context.Background(), key)
	}
	for i, d := range replicas {
		if observe(t, d, key) {
			t.Fatalf("replica %d: a completed key must be a duplicate", i)
		}
	}
}

func TestForgetTakesBackOnlyThisIncarnationsClaim(t *testing.T) {
	srv := redistest.Start(t)
	rdb := client(t, srv.Addr())
	mine, other := redisdedup.New(rdb, "g"), redisdedup.New(rdb, "g")
	if !observe(t, mine, "k") {
		t.Fatal("first observe must claim")
	}
	if err := other.Forget(context.Background(), "k"); err != nil {
		t.Fatal(err)
	}
	if _, err := other.Observe(context.Background(), "k"); !errors.Is(err, redisdedup.ErrClaimed) {
		t.Fatalf("another replica's Forget must leave the claim; observe = %v", err)
	}
	if err := mine.Forget(context.Background(), "k"); err != nil {
		t.Fatal(err)
	}
	if !observe(t, other, "k") {
		t.Fatal("a forgotten claim must be claimable again")
	}
}

func TestAMessageCostsRedisOneKeyClaimedThenOverwrittenByItsMark(t *testing.T) {
	srv := redistest.Start(t)
	rdb := client(t, srv.Addr())
	ttl, lease := time.Hour, time.Minute
	d := redisdedup.New(rdb, "g", redisdedup.Config{TTL: ttl, Lease: lease})
	keys := []string{"k1", "k2", "k3", "k4", "k5"}
	claimBatch(t, d, keys...)
	if err := d.CompleteBatch(t.Context(), keys[:3]); err != nil {
		t.Fatal(err)
	}
	// Nothing beside the keys themselves: no window, no index.
	all, err := rdb.Keys(t.Context(), "*").Result()
	if err != nil {
		t.Fatal(err)
	}
	if len(all) != len(keys) {
		t.Fatalf("redis holds %q; want one key per message, %d", all, len(keys))
	}
	for i, k := range keys {
		v, err := rdb.Get(t.Context(), d.Key(k)).Result()
		if err != nil {
			t.Fatal(err)
		}
		left := rdb.PTTL(t.Context(), d.Key(k)).Val()
		if done := i < 3; done {
			if v != "d" || left <= ttl-time.Minute || left > ttl {
				t.Fatalf("%s holds %q expiring in %v; want the mark with the TTL of %v", k, v, left, ttl)
			}
		} else if !strings.HasPrefix(v, "c|") || left <= 0 || left > lease {
			t.Fatalf("%s holds %q expiring in %v; want a claim with the lease of %v", k, v, left, lease)
		}
	}
}

func TestKeysAreLaidOutUnderTheVersionedPrefix(t *testing.T) {
	srv := redistest.Start(t)
	rdb := client(t, srv.Addr())
	if got, want := redisdedup.New(rdb, "billing").Key("shop\x1forder-1"), "laser:dedup:v2:billing:shop\x1forder-1"; got != want {
		t.Fatalf("key %q, want %q", got, want)
	}
	if got, want := redisdedup.New(rdb, "a:b%", redisdedup.Config{Prefix: "app:"}).Key("c"), "app:v2:a%3Ab%25:c"; got != want {
		t.Fatalf("key %q, want %q (the scope escaped, so it ends at its colon)", got, want)
	}
	// Keys of the earlier layout are not read: a mark stored there is not a duplicate.
	if err := rdb.Set(t.Context(), "laser:dedup:{g}:k:old", "d", time.Hour).Err(); err != nil {
		t.Fatal(err)
	}
	if !observe(t, redisdedup.New(rdb, "g"), "old") {
		t.Fatal("a key of the earlier layout was read")
	}
}

func TestScopesWithAColonDoNotShareKeys(t *testing.T) {
	srv := redistest.Start(t)
	rdb := client(t, srv.Addr())
	// Unescaped, both would be laser:dedup:v2:a:b:c.
	first, second := redisdedup.New(rdb, "a:b"), redisdedup.New(rdb, "a")
	observe(t, first, "c")
	complete(t, first, "c")
	if !observe(t, second, "b:c") {
		t.Fatal("scope a saw scope a:b's key as its own")
	}
}

func TestMarksExpireAfterTheTTLAndClaimsAfterTheLease(t *testing.T) {
	srv := redistest.Start(t)
	rdb := client(t, srv.Addr())
	ttl, lease := time.Hour, 5*time.Minute
	d := redisdedup.New(rdb, "g", redisdedup.Config{TTL: ttl, Lease: lease})
	ctx := context.Background()
	observe(t, d, "claimed")
	observe(t, d, "done")
	complete(t, d, "done")
	for key, limit := range map[string]time.Duration{"claimed": lease, "done": ttl} {
		left, err := rdb.PTTL(ctx, d.Key(key)).Result()
		if err != nil {
			t.Fatal(err)
		}
		if left <= 0 || left > limit || left < limit-time.Minute {
			t.Fatalf("%s expires in %v, want just under %v", key, left, limit)
		}
	}
	// An expired mark is new again: let Redis expire it now.
	if err := rdb.PExpire(ctx, d.Key("done"), time.Millisecond).Err(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for !observe(t, d, "done") {
		if time.Now().After(deadline) {
			t.Fatal("an expired mark was not new again")
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func TestAnotherOwnersClaimWaitsForItsLeaseButTheSameOwnerTakesItBackAtOnce(t *testing.T) {
	srv := redistest.Start(t)
	rdb := client(t, srv.Addr())
	lease := 300 * time.Millisecond
	dead := redisdedup.New(rdb, "g", redisdedup.Config{Owner: "replica-1", Lease: lease})
	observe(t, dead, "a")
	observe(t, dead, "b")
	// replica-1 was killed: its next incarnation takes "a" back at once ...
	reborn := redisdedup.New(rdb, "g", redisdedup.Config{Owner: "replica-1", Lease: lease})
	if !observe(t, reborn, "a") {
		t.Fatal("the same owner's next incarnation must take its claim back")
	}
	// ... while replica-2 must wait for the lease of "b".
	other := redisdedup.New(rdb, "g", redisdedup.Config{Owner: "replica-2", Lease: lease})
	if _, err := other.Observe(context.Background(), "b"); !errors.Is(err, redisdedup.ErrClaimed) {
		t.Fatalf("observe within the lease = %v, want ErrClaimed", err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		fresh, err := other.Observe(context.Background(), "b")
		if fresh {
			break
		}
		if !errors.Is(err, redisdedup.ErrClaimed) || time.Now().After(deadline) {
			t.Fatalf("after the lease: %v, %v", fresh, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func TestScopesAndSendersDoNotShareKeys(t *testing.T) {
	srv := redistest.Start(t)
	rdb := client(t, srv.Addr())
	billing, shipping := redisdedup.New(rdb, "billing"), redisdedup.New(rdb, "shipping")
	for _, d := range []*redisdedup.Deduplicator{billing, shipping} {
		for _, key := range []string{dedup.Key("shop", "1"), dedup.Key("till", "1"), "1"} {
			if !observe(t, d, key) {
				t.Fatalf("%q must be new in its own scope", key)
			}
			complete(t, d, key)
		}
	}
	if observe(t, billing, dedup.Key("shop", "1")) {
		t.Fatal("a completed key must be a duplicate within its scope")
	}
}

func TestRedisDownIsATransientErrorNeverAFreshMark(t *testing.T) {
	srv := redistest.Start(t)
	rdb := client(t, srv.Addr())
	d := redisdedup.New(rdb, "g")
	observe(t, d, "before")
	complete(t, d, "before")
	srv.Stop()
	fresh, err := d.Observe(context.Background(), "during")
	if fresh || err == nil {
		t.Fatalf("observe with Redis down = %v, %v; want an error", fresh, err)
	}
	if !errors.Is(err, runtime.ErrTransient) || !strings.Contains(err.Error(), "redis unavailable") {
		t.Fatalf("error %q must be transient and say Redis is unavailable", err)
	}
	if err := d.Complete(context.Background(), "during"); !errors.Is(err, runtime.ErrTransient) {
		t.Fatalf("complete with Redis down = %v", err)
	}
	srv.Restart()
	if !observe(t, d, "during") {
		t.Fatal("once Redis is back the key is new")
	}
}

func TestAWrongTypeUnderTheKeyIsAPermanentError(t *testing.T) {
	srv := redistest.Start(t)
	rdb := client(t, srv.Addr())
	d := redisdedup.New(rdb, "g")
	if err := rdb.LPush(context.Background(), d.Key("k"), "x").Err(); err != nil {
		t.Fatal(err)
	}
	if _, err := d.Observe(context.Background(), "k"); err == nil || errors.Is(err, runtime.ErrTransient) {
		t.Fatalf("observe over a list = %v; want a permanent error", err)
	}
}

// commandCounter counts a client's round trips: one per command, one per
// pipeline however many commands it carries.
type commandCounter struct{ n atomic.Int32 }

func (c *commandCounter) DialHook(next redis.DialHook) redis.DialHook { return next }
func (c *commandCounter) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		c.n.Add(1)
		return next(ctx, cmd)
	}
}
func (c *commandCounter) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		c.n.Add(1)
		return next(ctx, cmds)
	}
}

func TestObserveIsOneRoundTrip(t *testing.T) {
	srv := redistest.Start(t)
	rdb := client(t, srv.Addr())
	d := redisdedup.New(rdb, "g")
	observe(t, d, "warm-up")
	counter := &commandCounter{}
	rdb.AddHook(counter)
	for i := 0; i < 10; i++ {
		observe(t, d, fmt.Sprintf("k%d", i))
	}
	if n := counter.n.Load(); n != 10 {
		t.Fatalf("%d commands for 10 observes, want one each", n)
	}
}

// claimBatch claims keys in one ClaimBatch and returns their states.
func claimBatch(t *testing.T, d *redisdedup.Deduplicator, keys ...string) []dedup.KeyState {
	t.Helper()
	states := make([]dedup.KeyState, len(keys))
	if err := d.ClaimBatch(t.Context(), keys, states); err != nil {
		t.Fatalf("claim %q: %v", keys, err)
	}
	return states
}

func TestClaimBatchIsOneRoundTripAndAnswersEachKeysState(t *testing.T) {
	srv := redistest.Start(t)
	rdb := client(t, srv.Addr())
	d, other := redisdedup.New(rdb, "g"), redisdedup.New(rdb, "g")
	observe(t, d, "done")
	complete(t, d, "done")
	observe(t, d, "mine")
	observe(t, other, "theirs")
	claimBatch(t, d, "warm-up", "warm-up-2")
	claimBatch(t, d, "warm-up") // this owner's claim: the script, sent whole the first time
	counter := &commandCounter{}
	rdb.AddHook(counter)
	got := claimBatch(t, d, "new-1", "done", "mine", "theirs", "new-2")
	want := []dedup.KeyState{dedup.KeyClaimed, dedup.KeyDuplicate, dedup.KeyHeld, dedup.KeyBusy, dedup.KeyClaimed}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("states %v, want %v", got, want)
	}
	// One pipeline of SETs for all five, and one script call for the key
	// this owner already holds (its claim is renewed).
	if n := counter.n.Load(); n != 2 {
		t.Fatalf("%d round trips for a batch of 5 keys, want two", n)
	}
	// The claims are real: another replica is kept waiting, Observe agrees.
	if _, err := other.Observe(t.Context(), "new-1"); !errors.Is(err, redisdedup.ErrClaimed) {
		t.Fatalf("observe of a batch-claimed key by another replica = %v, want ErrClaimed", err)
	}
}

func TestClaimBatchTakesAnotherOwnersClaimOnlyAfterItsLease(t *testing.T) {
	srv := redistest.Start(t)
	rdb := client(t, srv.Addr())
	lease := 300 * time.Millisecond
	dead := redisdedup.New(rdb, "g", redisdedup.Config{Owner: "replica-1", Lease: lease})
	claimBatch(t, dead, "a", "b")
	claimedAt := time.Now()
	// replica-1 was killed: its next incarnation takes its claims back at once ...
	reborn := redisdedup.New(rdb, "g", redisdedup.Config{Owner: "replica-1", Lease: lease})
	if got := claimBatch(t, reborn, "a"); got[0] != dedup.KeyClaimed {
		t.Fatalf("the same owner's next incarnation got %v, want its claim back", got[0])
	}
	// ... while replica-2 waits for the lease of "b".
	other := redisdedup.New(rdb, "g", redisdedup.Config{Owner: "replica-2", Lease: lease})
	for {
		st := claimBatch(t, other, "b")[0]
		if st == dedup.KeyClaimed {
			break
		}
		if st != dedup.KeyBusy {
			t.Fatalf("state %v within the lease, want busy", st)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if waited := time.Since(claimedAt); waited < lease {
		t.Fatalf("replica-2 took the claim after %v, within the dead owner's lease of %v", waited, lease)
	}
}

func TestCompleteBatchRemembersEveryKey(t *testing.T) {
	srv := redistest.Start(t)
	rdb := client(t, srv.Addr())
	d := redisdedup.New(rdb, "g")
	keys := []string{"k1", "k2", "k3", "k4"}
	claimBatch(t, d, keys...)
	if err := d.CompleteBatch(t.Context(), keys); err != nil {
		t.Fatal(err)
	}
	other := redisdedup.New(rdb, "g")
	got := claimBatch(t, other, append(keys, "k5")...)
	want := []dedup.KeyState{dedup.KeyDuplicate, dedup.KeyDuplicate, dedup.KeyDuplicate, dedup.KeyDuplicate, dedup.KeyClaimed}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("after completing 4 keys: %v, want %v", got, want)
	}
}

func TestReleaseBatchDropsOnlyThisIncarnationsClaims(t *testing.T) {
	srv := redistest.Start(t)
	rdb := client(t, srv.Addr())
	mine, other := redisdedup.New(rdb, "g"), redisdedup.New(rdb, "g")
	claimBatch(t, mine, "mine", "done")
	complete(t, mine, "done")
	claimBatch(t, other, "theirs")
	if err := mine.ReleaseBatch(t.Context(), []string{"mine", "done", "theirs"}); err != nil {
		t.Fatal(err)
	}
	got := claimBatch(t, redisdedup.New(rdb, "g"), "mine", "done", "theirs")
	want := []dedup.KeyState{dedup.KeyClaimed, dedup.KeyDuplicate, dedup.KeyBusy}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("after the release: %v, want %v", got, want)
	}
}

// Owner "a" must not take owner "a|b"'s live claim as one of its own dead
// incarnations: unescaped, "c|a|b|<incarnation>" starts with "c|a|".
func TestAnOwnerWhoseNameHoldsABarSharesNoPrefixWithAnother(t *testing.T) {
	srv := redistest.Start(t)
	rdb := client(t, srv.Addr())
	for _, pair := range [][2]string{{"a|b", "a"}, {"a%7Cb", "a|b"}, {"a|b", "a%7Cb"}} {
		holder := redisdedup.New(rdb, "g", redisdedup.Config{Owner: pair[0]})
		key := "k-" + pair[0] + "-" + pair[1]
		claimBatch(t, holder, key)
		other := redisdedup.New(rdb, "g", redisdedup.Config{Owner: pair[1]})
		if got := claimBatch(t, other, key); got[0] != dedup.KeyBusy {
			t.Fatalf("owner %q on owner %q's live claim: %v, want busy", pair[1], pair[0], got[0])
		}
		if _, err := other.Observe(t.Context(), key); !errors.Is(err, redisdedup.ErrClaimed) {
			t.Fatalf("owner %q observing owner %q's live claim: %v, want ErrClaimed", pair[1], pair[0], err)
		}
		// The same owner's next incarnation still takes it back at once.
		reborn := redisdedup.New(rdb, "g", redisdedup.Config{Owner: pair[0]})
		if got := claimBatch(t, reborn, key); got[0] != dedup.KeyClaimed {
			t.Fatalf("owner %q's next incarnation: %v, want its claim back", pair[0], got[0])
		}
	}
}
