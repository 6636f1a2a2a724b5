package redisdedup_test

import (
	"bufio"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

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
// redis/memory (the goal is at least 0.5), and redis-cpu-us/msg, the CPU
// redis-server itself spent per message over the Redis run (INFO cpu, user
// and system; the goal is at most 2 µs). For scale on a shared machine it
// also reports redis-cpu-us/set, what one plain SET with a TTL costs the
// same server in the same minute (pipelined 256 at a time, as the
// deduplicator sends them): a message costs two such writes to one key.
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
			before := redisCPU(b, rdb)
			redisRate := consumebench.Rate(b, bc.c, redisdedup.New(rdb, fmt.Sprintf("bench-%d", scope)))
			cpu := redisCPU(b, rdb) - before
			b.ReportMetric(memory, "memory-msgs/s")
			b.ReportMetric(redisRate, "redis-msgs/s")
			b.ReportMetric(redisRate/memory, "redis/memory")
			b.ReportMetric(cpu*1e6/float64(b.N), "redis-cpu-us/msg")
			b.ReportMetric(setCPU(b, rdb, fmt.Sprintf("ref-%d:", scope)), "redis-cpu-us/set")
		})
	}
}

// setCPU returns the server's CPU microseconds per plain SET with a TTL,
// over 100,000 SETs pipelined 256 at a time under prefix.
func setCPU(b *testing.B, rdb *redis.Client, prefix string) float64 {
	b.Helper()
	const n, per = 100_000, 256
	before := redisCPU(b, rdb)
	for i := 0; i < n; i += per {
		p := rdb.Pipeline()
		for j := i; j < min(i+per, n); j++ {
			p.Set(b.Context(), prefix+strconv.Itoa(j), "d", time.Hour)
		}
		if _, err := p.Exec(b.Context()); err != nil {
			b.Fatal(err)
		}
	}
	return (redisCPU(b, rdb) - before) * 1e6 / n
}

// redisCPU returns the CPU seconds, user and system, the server has spent
// since it started.
func redisCPU(b *testing.B, rdb *redis.Client) float64 {
	b.Helper()
	info, err := rdb.Info(b.Context(), "cpu").Result()
	if err != nil {
		b.Fatal(err)
	}
	var sum float64
	var seen int
	sc := bufio.NewScanner(strings.NewReader(info))
	for sc.Scan() {
		name, value, ok := strings.Cut(strings.TrimSpace(sc.Text()), ":")
		if !ok || (name != "used_cpu_user" && name != "used_cpu_sys") {
			continue
		}
		v, err := strconv.ParseFloat(value, 64)
		if err != nil {
			b.Fatalf("INFO cpu: %s = %q: %v", name, value, err)
		}
		sum += v
		seen++
	}
	if seen != 2 {
		b.Fatalf("INFO cpu has no used_cpu_user and used_cpu_sys:\n%s", info)
	}
	return sum
}
