package redisdedup_test

import (
	"fmt"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/lasergo/laser/internal/consumebench"
	"github.com/lasergo/laser/internal/redistest"
	"github.com/lasergo/laser/redisdedup"
	"github.com/lasergo/laser/runtime"
)

// BenchmarkConsumerDedup compares the consumer deduplicating in memory (the
// default window) with the Redis deduplicator on a local redis-server, for
// Serial and for 4 lanes: each mode runs both, one after the other on the
// same b.N, and reports memory-msgs/s, redis-msgs/s and their ratio
// redis/memory (the goal is at least 0.5).
func BenchmarkConsumerDedup(b *testing.B) {
	srv := redistest.Start(b)
	rdb := redis.NewClient(&redis.Options{Addr: srv.Addr()})
	b.Cleanup(func() { _ = rdb.Close() })
	scope := 0
	for _, bc := range []struct {
		name string
		c    runtime.Concurrency
	}{{"serial", runtime.Serial}, {"lanes4", runtime.PerPartition(4)}} {
		b.Run(bc.name, func(b *testing.B) {
			memory := consumebench.Rate(b, bc.c, nil) // nil: the in-memory window
			scope++                                   // a fresh scope per run: every key is new
			redisRate := consumebench.Rate(b, bc.c, redisdedup.New(rdb, fmt.Sprintf("bench-%d", scope)))
			b.ReportMetric(memory, "memory-msgs/s")
			b.ReportMetric(redisRate, "redis-msgs/s")
			b.ReportMetric(redisRate/memory, "redis/memory")
		})
	}
}
