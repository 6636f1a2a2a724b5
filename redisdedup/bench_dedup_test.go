package redisdedup_test

import (
	"fmt"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/lasergo/laser/internal/redistest"
	"github.com/lasergo/laser/redisdedup"
	"github.com/lasergo/laser/runtime"
)

// BenchmarkConsumerDedup compares the consumer deduplicating in memory (the
// default window) with the Redis deduplicator on a local redis-server, for
// Serial and for 4 lanes; compare msgs/s side by side.
func BenchmarkConsumerDedup(b *testing.B) {
	srv := redistest.Start(b)
	rdb := redis.NewClient(&redis.Options{Addr: srv.Addr()})
	b.Cleanup(func() { _ = rdb.Close() })
	scope := 0
	for _, store := range []string{"memory", "redis"} {
		for _, bc := range []struct {
			name string
			c    runtime.Concurrency
		}{{"serial", runtime.Serial}, {"lanes4", runtime.PerPartition(4)}} {
			b.Run(store+"/"+bc.name, func(b *testing.B) {
				var dedup runtime.Deduplicator // nil: the in-memory window
				if store == "redis" {
					scope++ // a fresh scope per run: every key is new
					dedup = redisdedup.New(rdb, fmt.Sprintf("bench-%d", scope))
				}
				benchConsume(b, bc.c, dedup)
			})
		}
	}
}
