package redisdedup_test

import (
	"errors"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/lasergo/laser/dedup"
	"github.com/lasergo/laser/internal/redistest"
	"github.com/lasergo/laser/redisdedup"
	"github.com/lasergo/laser/runtime"
)

// isClaimScript reports a call of the claim script, by its shape: one key
// and three arguments (the drop script takes two).
func isClaimScript(cmd redis.Cmder) bool {
	return (cmd.Name() == "evalsha" || cmd.Name() == "eval") && len(cmd.Args()) == 7
}

// claimFailsMidway claims keys and checks that the claim failed
// transiently.
func claimFailsMidway(t *testing.T, d *redisdedup.Deduplicator, keys ...string) {
	t.Helper()
	if err := d.ClaimBatch(t.Context(), keys, make([]dedup.KeyState, len(keys))); !errors.Is(err, runtime.ErrTransient) {
		t.Fatalf("claim = %v, want a transient failure", err)
	}
}

func TestAClaimBatchFailingAfterItsSetsTakesItsClaimsBack(t *testing.T) {
	srv := redistest.Start(t)
	rdb := client(t, srv.Addr())
	d := redisdedup.New(rdb, "g")
	claimBatch(t, d, "mine")
	rdb.AddHook(&refuser{refuse: func(cmd redis.Cmder) error {
		if isClaimScript(cmd) {
			return replyError("LOADING Redis is loading the dataset in memory")
		}
		return nil
	}})
	// The SETs claim a and b; "mine" needs the script, which fails.
	claimFailsMidway(t, d, "a", "mine", "b")
	if n := rdb.Exists(t.Context(), d.Key("a"), d.Key("b")).Val(); n != 0 {
		t.Fatalf("%d claims of the failed call are left to hold other replicas for a lease", n)
	}
	if rdb.Exists(t.Context(), d.Key("mine")).Val() != 1 {
		t.Fatal("the claim held before the failed call was taken back too")
	}
}

func TestAClaimBatchPartlyRefusedTakesItsClaimsBack(t *testing.T) {
	srv := redistest.Start(t)
	rdb := client(t, srv.Addr())
	d := redisdedup.New(rdb, "g")
	// As a cluster with one shard down: the SET of b finds no node.
	rdb.AddHook(&refuser{refuse: func(cmd redis.Cmder) error {
		if cmd.Name() == "set" && len(cmd.Args()) > 1 && cmd.Args()[1] == d.Key("b") {
			return replyError("CLUSTERDOWN The cluster is down")
		}
		return nil
	}})
	claimFailsMidway(t, d, "a", "b", "c")
	if n := rdb.Exists(t.Context(), d.Key("a"), d.Key("b"), d.Key("c")).Val(); n != 0 {
		t.Fatalf("%d claims of the failed call are left to hold other replicas for a lease", n)
	}
}
