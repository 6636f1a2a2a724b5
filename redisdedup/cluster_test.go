package redisdedup_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/lasergo/laser/dedup"
	"github.com/lasergo/laser/embedlog"
	"github.com/lasergo/laser/internal/redistest"
	"github.com/lasergo/laser/redisdedup"
	"github.com/lasergo/laser/runtime"
	"github.com/lasergo/laser/wire"
)

// clusterClient returns a client of a fresh three-master Redis Cluster.
func clusterClient(t *testing.T) *redis.ClusterClient {
	t.Helper()
	c := redistest.StartCluster(t, 3)
	rdb := redis.NewClusterClient(&redis.ClusterOptions{Addrs: c.Addrs(), DialTimeout: time.Second})
	t.Cleanup(func() { _ = rdb.Close() })
	return rdb
}

// shards counts the masters the Redis keys of keys live on.
func shards(t *testing.T, rdb *redis.ClusterClient, d *redisdedup.Deduplicator, keys []string) int {
	t.Helper()
	seen := map[string]bool{}
	for _, k := range keys {
		node, err := rdb.MasterForKey(t.Context(), d.Key(k))
		if err != nil {
			t.Fatal(err)
		}
		seen[node.String()] = true
	}
	return len(seen)
}

func TestOnAClusterABatchSpreadOverShardsIsClaimedCompletedAndReleasedWhole(t *testing.T) {
	rdb := clusterClient(t)
	d, other := redisdedup.New(rdb, "billing"), redisdedup.New(rdb, "billing")
	keys := make([]string, 60)
	for i := range keys {
		keys[i] = dedup.Key("shop", fmt.Sprintf("order-%d", i))
	}
	if n := shards(t, rdb, d, keys); n != 3 {
		t.Fatalf("the batch's keys live on %d shards; the test wants all three", n)
	}
	states := make([]dedup.KeyState, len(keys))
	if err := d.ClaimBatch(t.Context(), keys, states); err != nil {
		t.Fatal(err)
	}
	for i, st := range states {
		if st != dedup.KeyClaimed {
			t.Fatalf("key %d: %v, want claimed", i, st)
		}
	}
	// Held keys go to the claim script on every shard, which each learns
	// from the script sent whole.
	if err := d.ClaimBatch(t.Context(), keys, states); err != nil {
		t.Fatal(err)
	}
	for i, st := range states {
		if st != dedup.KeyHeld {
			t.Fatalf("key %d claimed again: %v, want held", i, st)
		}
	}
	if err := other.ClaimBatch(t.Context(), keys, states); err != nil {
		t.Fatal(err)
	}
	for i, st := range states {
		if st != dedup.KeyBusy {
			t.Fatalf("key %d seen by another replica: %v, want busy", i, st)
		}
	}
	if err := d.CompleteBatch(t.Context(), keys[:40]); err != nil {
		t.Fatal(err)
	}
	if err := d.ReleaseBatch(t.Context(), keys[40:]); err != nil {
		t.Fatal(err)
	}
	if err := other.ClaimBatch(t.Context(), keys, states); err != nil {
		t.Fatal(err)
	}
	for i, st := range states {
		if want := map[bool]dedup.KeyState{true: dedup.KeyDuplicate, false: dedup.KeyClaimed}[i < 40]; st != want {
			t.Fatalf("key %d: %v, want %v", i, st, want)
		}
	}
	if err := other.Forget(t.Context(), keys[0]); err != nil {
		t.Fatal(err)
	}
	if fresh, err := d.Observe(t.Context(), keys[0]); !fresh || err != nil {
		t.Fatalf("observe of a forgotten key = %v, %v; want it new", fresh, err)
	}
}

// Two replicas on a cluster, each consuming its own partition, every
// command sent to both: each is handled once, none lost, Serial and lanes.
func TestOnAClusterReplicasHandleEachCommandOnce(t *testing.T) {
	rdb := clusterClient(t)
	for _, mode := range modes {
		t.Run(mode.name, func(t *testing.T) {
			logs := make([]*embedlog.Log, 2)
			for i := range logs {
				logs[i] = embedlog.New("laser", embedlog.Config{})
				if err := logs[i].EnsureTopics(t.Context(), 1, topic, runtime.TopicDLQ); err != nil {
					t.Fatal(err)
				}
			}
			const n = 300
			for i := range n {
				for _, log := range logs {
					send(t, log, wire.IDFromUint128(40, uint64(i)), fmt.Sprintf("order-%d", i), fmt.Sprint(i))
				}
			}
			handled := make(chan string, 2*n)
			scope := "cluster-" + mode.name
			var stops []func() error
			for i, log := range logs {
				d := redisdedup.New(rdb, scope, redisdedup.Config{Owner: fmt.Sprintf("replica-%d", i), Lease: 2 * time.Second})
				stops = append(stops, consumerWith(t, log, d, handled, mode.c))
			}
			counts := map[string]int{}
			for _, body := range drain(t, handled, n) {
				counts[body]++
			}
			for _, stop := range stops {
				if err := stop(); err != nil {
					t.Fatal(err)
				}
			}
			for len(handled) > 0 {
				counts[<-handled]++
			}
			for i := range n {
				if c := counts[fmt.Sprint(i)]; c != 1 {
					t.Fatalf("command %d handled %d times; want once", i, c)
				}
			}
			d := redisdedup.New(rdb, scope)
			keys := make([]string, n)
			for i := range keys {
				keys[i] = dedup.Key("shop", fmt.Sprintf("order-%d", i))
			}
			if s := shards(t, rdb, d, keys); s != 3 {
				t.Fatalf("the keys live on %d shards, want three", s)
			}
			states := make([]dedup.KeyState, n)
			if err := d.ClaimBatch(t.Context(), keys, states); err != nil {
				t.Fatal(err)
			}
			for i, st := range states {
				if st != dedup.KeyDuplicate {
					t.Fatalf("key %d: %v after both replicas stopped, want remembered", i, st)
				}
			}
		})
	}
}
