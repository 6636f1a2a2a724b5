// Command crashworker is the consumer process of the reliability suite's
// crash test. It connects to an Iggy server (or the laser dev server), runs
// one agent whose handler applies each command's effect to an on-disk
// effect store under its idempotency key, and records what it saw in an
// event log shared by all its incarnations. The test kills it with SIGKILL
// at random points and restarts it; SIGTERM or SIGINT stop it gracefully.
//
//	crashworker -addr iggy://iggy:iggy@127.0.0.1:8090/laser -topic t -dlq d \
//	    -effects DIR -events FILE [-lanes N | -handlers N] [-redis 127.0.0.1:6379 -owner NAME -lease 1s]
//
// With -redis the agent deduplicates on that Redis (package redisdedup)
// instead of in memory, under the owner name given (stable across the
// restarts of one replica).
// It prints "ready" once the agent joined its group. Exit codes: 0 after a
// graceful stop, 1 when the agent stopped on its own or failed to start,
// 2 for bad flags.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/lasergo/laser/dedup"
	"github.com/lasergo/laser/iggy"
	"github.com/lasergo/laser/internal/reliability"
	"github.com/lasergo/laser/redisdedup"
	"github.com/lasergo/laser/runtime"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	os.Exit(run(ctx, os.Args[1:], os.Stdout, os.Stderr))
}

type options struct {
	addr, topic, dlq, group string
	effects, events         string
	lanes, handlers         int
	grace                   time.Duration
	redis, owner            string
	lease                   time.Duration
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("crashworker", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var o options
	fs.StringVar(&o.addr, "addr", os.Getenv("LASER_IGGY_ADDR"), "server connection string (default $LASER_IGGY_ADDR)")
	fs.StringVar(&o.topic, "topic", "agent.commands", "topic to consume")
	fs.StringVar(&o.dlq, "dlq", runtime.TopicDLQ, "dead-letter topic")
	fs.StringVar(&o.group, "group", "crashworker", "consumer group")
	fs.StringVar(&o.effects, "effects", "", "effect store directory (required)")
	fs.StringVar(&o.events, "events", "", "event log file (required)")
	fs.IntVar(&o.lanes, "lanes", 0, "per-partition lanes; 0 runs the default Serial consumer")
	fs.IntVar(&o.handlers, "handlers", 0, "run PerConversation with this many handlers at once (excludes -lanes)")
	fs.DurationVar(&o.grace, "grace", 10*time.Second, "shutdown grace")
	fs.StringVar(&o.redis, "redis", "", "deduplicate on the Redis at host:port instead of in memory (several, comma-separated: the nodes of a Redis Cluster)")
	fs.StringVar(&o.owner, "owner", "", "the replica's stable owner name for the Redis deduplicator")
	fs.DurationVar(&o.lease, "lease", redisdedup.DefaultLease, "how long a dead replica's claim holds up the others (Redis)")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if o.addr == "" || o.effects == "" || o.events == "" || fs.NArg() != 0 {
		fmt.Fprintln(stderr, "crashworker: -addr (or LASER_IGGY_ADDR), -effects and -events are required; no arguments")
		return 2
	}
	if err := work(ctx, o, stdout, stderr); err != nil {
		fmt.Fprintln(stderr, "crashworker:", err)
		return 1
	}
	return 0
}

func work(ctx context.Context, o options, stdout, stderr io.Writer) error {
	logger := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	store, err := reliability.OpenEffectStore(o.effects)
	if err != nil {
		return err
	}
	events, err := reliability.OpenEventLog(o.events)
	if err != nil {
		return err
	}
	defer events.Close()
	if err := events.Record(reliability.EventStart, strconv.Itoa(os.Getpid())); err != nil {
		return err
	}

	dialCtx, cancel := context.WithTimeout(ctx, 10*time.Second)
	tr, err := iggy.Dial(dialCtx, o.addr, iggy.Config{Logger: logger})
	cancel()
	if err != nil {
		return err
	}
	defer tr.Close()

	var dedup dedup.Deduplicator = dedup.NewSlidingWindow(dedup.DefaultWindow)
	if o.redis != "" {
		// One address is a plain client, several a cluster client.
		rdb := redis.NewUniversalClient(&redis.UniversalOptions{Addrs: strings.Split(o.redis, ",")})
		defer rdb.Close()
		dedup = redisdedup.New(rdb, o.group, redisdedup.Config{Owner: o.owner, Lease: o.lease})
	}
	client := runtime.NewClient(tr, runtime.ClientConfig{Logger: logger})
	concurrency := runtime.Serial
	switch {
	case o.handlers > 0:
		concurrency = runtime.PerConversation(o.handlers)
	case o.lanes > 0:
		concurrency = runtime.PerPartition(o.lanes)
	}
	agent, err := client.NewAgent(runtime.AgentConfig{
		ID:      "crashworker",
		Listen:  o.topic,
		Group:   o.group,
		Handler: &reliability.EffectHandler{Store: store, Events: events},
		Tuning: runtime.Tuning{
			DeadLetterTopic: o.dlq,
			Concurrency:     concurrency,
			// Failing commands are retried three times without waiting long.
			Retry:         runtime.RetryPolicy{MaxAttempts: 3, BaseDelay: time.Millisecond},
			Deduplicator:  reliability.Counting(dedup, events),
			ShutdownGrace: o.grace,
		},
	})
	if err != nil {
		return err
	}
	// The agent runs under its own context: a signal asks for the graceful
	// stop, not the hard one.
	h := agent.Start(context.Background())
	readyCtx, cancelReady := context.WithTimeout(ctx, 30*time.Second)
	err = h.Ready(readyCtx)
	cancelReady()
	if err != nil {
		_ = h.Stop()
		return fmt.Errorf("agent not ready: %w", err)
	}
	fmt.Fprintln(stdout, "ready")
	select {
	case <-h.Done():
		err := h.Wait()
		if err == nil {
			err = errors.New("agent stopped without being asked to")
		}
		return fmt.Errorf("agent stopped: %w", err)
	case <-ctx.Done():
	}
	shutdownCtx, cancelShutdown := context.WithTimeout(context.Background(), o.grace+5*time.Second)
	defer cancelShutdown()
	if err := h.Shutdown(shutdownCtx); err != nil {
		return fmt.Errorf("shutdown: %w", err)
	}
	return nil
}
