package redisdedup_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/lasergo/laser/dedup"
	"github.com/lasergo/laser/internal/redistest"
	"github.com/lasergo/laser/redisdedup"
)

// nameCounter counts the commands a client sends by name, alone or in a
// pipeline.
type nameCounter struct {
	mu    sync.Mutex
	names map[string]int
}

func (c *nameCounter) add(cmds ...redis.Cmder) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, cmd := range cmds {
		c.names[cmd.Name()]++
	}
}

func (c *nameCounter) count(name string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.names[name]
}

func (c *nameCounter) DialHook(next redis.DialHook) redis.DialHook { return next }
func (c *nameCounter) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		c.add(cmd)
		return next(ctx, cmd)
	}
}
func (c *nameCounter) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		c.add(cmds...)
		return next(ctx, cmds)
	}
}

func TestClaimBatchClaimsFreshKeysWithPlainSetsAndNoScript(t *testing.T) {
	srv := redistest.Start(t)
	rdb := client(t, srv.Addr())
	lease := time.Hour
	d := redisdedup.New(rdb, "g", redisdedup.Config{Lease: lease})
	claimBatch(t, d, "warm-up")
	counter := &nameCounter{names: map[string]int{}}
	rdb.AddHook(counter)
	if got := claimBatch(t, d, "a", "b", "c"); fmt.Sprint(got) != fmt.Sprint([]dedup.KeyState{dedup.KeyClaimed, dedup.KeyClaimed, dedup.KeyClaimed}) {
		t.Fatalf("states %v, want all claimed", got)
	}
	if s, e, es := counter.count("set"), counter.count("eval"), counter.count("evalsha"); s != 3 || e+es != 0 {
		t.Fatalf("%d SETs and %d scripts for 3 fresh keys; want one SET each and no script", s, e+es)
	}
	// The SET's claim is a real one, with the lease.
	if ttl := rdb.PTTL(t.Context(), d.Key("a")).Val(); ttl <= lease-time.Minute || ttl > lease {
		t.Fatalf("claim expires in %v, want about the lease of %v", ttl, lease)
	}
	// A key this incarnation holds goes to the script, which renews it.
	if err := rdb.PExpire(t.Context(), d.Key("a"), time.Minute).Err(); err != nil {
		t.Fatal(err)
	}
	if got := claimBatch(t, d, "a", "d"); got[0] != dedup.KeyHeld || got[1] != dedup.KeyClaimed {
		t.Fatalf("states %v, want held and claimed", got)
	}
	if es := counter.count("evalsha"); es != 1 {
		t.Fatalf("%d script calls for one held key, want one", es)
	}
	if ttl := rdb.PTTL(t.Context(), d.Key("a")).Val(); ttl <= lease-time.Minute {
		t.Fatalf("a held claim expires in %v, want its lease started again", ttl)
	}
}

func TestScriptsAreSentWholeToAServerThatLostThem(t *testing.T) {
	srv := redistest.Start(t)
	rdb := client(t, srv.Addr())
	d := redisdedup.New(rdb, "g")
	claimBatch(t, d, "a", "b", "c")
	claimBatch(t, d, "a") // the claim script runs once, so the server knows it
	if err := d.ReleaseBatch(t.Context(), []string{"c"}); err != nil {
		t.Fatal(err)
	}
	// As after a restart: the scripts are gone, the deduplicator does not know.
	if err := rdb.ScriptFlush(t.Context()).Err(); err != nil {
		t.Fatal(err)
	}
	counter := &nameCounter{names: map[string]int{}}
	rdb.AddHook(counter)
	if got := claimBatch(t, d, "a", "b"); got[0] != dedup.KeyHeld || got[1] != dedup.KeyHeld {
		t.Fatalf("states %v after the scripts were flushed, want both held", got)
	}
	if err := d.ReleaseBatch(t.Context(), []string{"a", "b"}); err != nil {
		t.Fatalf("release after the scripts were flushed: %v", err)
	}
	if n := rdb.Exists(t.Context(), d.Key("a"), d.Key("b")).Val(); n != 0 {
		t.Fatalf("%d of the released claims are left", n)
	}
	// Each script refused by digest once, then sent whole once per call.
	if es, e := counter.count("evalsha"), counter.count("eval"); es != 4 || e != 4 {
		t.Fatalf("%d EVALSHA and %d EVAL; want 4 of each (two keys, two scripts)", es, e)
	}
}
