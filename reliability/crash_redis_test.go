package reliability_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/lasergo/laser/internal/figures"
	"github.com/lasergo/laser/internal/redistest"
	"github.com/lasergo/laser/internal/reliability"
)

// crashReplicas is how many crash workers share the group in the Redis run.
const crashReplicas = 3

// TestCrashRecoveryRedis is the crash test with the durable deduplicator:
// three replicas of the worker share one group and one redis-server, and
// replicas are SIGKILLed at random points and restarted (under the same
// owner name), without warm dedup. At the end every command's effect is in
// the store exactly once or the command is parked, nothing is lost, and a
// redelivered command reached a handler again only when its handler was
// cut off by a kill, or its key's completion had not reached Redis yet
// (about one round trip after the handler): every other redelivery (handled by the dead
// incarnation, or by a replica that lost the partition in a rebalance) was
// dropped by Redis. It runs on one redis-server and on a three-master
// Redis Cluster, over the laser dev server and, when LASER_IGGY_ADDR is
// set, over that real Iggy; Serial, with lanes and PerConversation.
func TestCrashRecoveryRedis(t *testing.T) {
	laser, worker := buildBinaries(t)
	n, kills, limit := crashScale()
	kills *= 2
	seed := crashSeed(t)
	t.Logf("crash test seed %d (replay with %s=%d), %d commands, %d kills, %d replicas", seed, envSeed, seed, n, kills, crashReplicas)
	for _, b := range crashBackends(laser) {
		for _, store := range []string{"redis", "cluster"} {
			for _, v := range crashVariants {
				t.Run(store+"/"+b.name+"/"+v.name, func(t *testing.T) {
					ctx, cancel := context.WithTimeout(context.Background(), limit)
					defer cancel()
					addr := b.addr(t, ctx)
					var redisAddr string
					if store == "cluster" {
						// Three masters: the keys of one batch land on
						// different shards.
						redisAddr = strings.Join(redistest.StartCluster(t, 3).Addrs(), ",")
					} else {
						redisAddr = redistest.Start(t).Addr()
					}
					c := &crashRun{
						t: t, ctx: ctx, addr: addr, worker: worker, lanes: v.lanes, handlers: v.handlers, kills: kills, seed: seed,
						name:  store + "/" + b.name + "/" + v.name,
						topic: fmt.Sprintf("rel-rcmd-%d-%s-%s-%d", seed, store, v.name, time.Now().UnixNano()),
					}
					c.dlq = strings.Replace(c.topic, "rel-rcmd-", "rel-rdlq-", 1)
					c.runReplicas(n, redisAddr)
				})
			}
		}
	}
}

// runReplicas is run with several replicas deduplicating on Redis, or in
// memory each when redisAddr is "".
func (c *crashRun) runReplicas(n int, redisAddr string) {
	t := c.t
	c.setUp(n)
	replica := func(i int) *proc {
		if redisAddr == "" {
			return c.startWorker()
		}
		// A short lease: a replica killed mid-message holds up the one that
		// takes its partition for at most this long.
		return c.startWorker("-redis", redisAddr, "-owner", fmt.Sprintf("replica-%d", i), "-lease", "1s")
	}
	procs := make([]*proc, crashReplicas)
	for i := range procs {
		procs[i] = replica(i)
	}
	published := make(chan error, 1)
	go func() { published <- c.publish() }()

	rng := rand.New(rand.NewPCG(c.seed, 0x7ed15))
	expected := c.plan.Count(reliability.Normal)
	var killedAt []int
	for k := 0; k < c.kills; k++ {
		victim := rng.IntN(crashReplicas)
		cur := c.effects()
		span := max(1, (expected-cur)/(c.kills-k+1))
		threshold := min(cur+1+rng.IntN(2*span), expected)
		c.await(procs[victim], fmt.Sprintf("effect count to reach %d", threshold), func() (bool, error) {
			return c.effects() >= threshold, nil
		})
		procs[victim].kill()
		killedAt = append(killedAt, c.effects())
		procs[victim] = replica(victim)
	}

	c.await(procs[0], "every record to be handled and committed", c.finished(published, func() error {
		for _, p := range procs {
			if p.exited() {
				return fmt.Errorf("%s exited on its own: %v\n%s", p.name, p.err, p.stderr)
			}
		}
		return nil
	}))
	for _, p := range procs {
		c.awaitReady(p)
		if err := p.terminate(30 * time.Second); err != nil {
			t.Fatalf("final replica: %v", err)
		}
	}
	c.verify(killedAt)
	if redisAddr == "" {
		return // in-memory dedup: a replica taking a partition handles its tail again
	}

	// Only a command whose handler a kill cut off after its effect (at
	// most one per lane or handler slot of the victim), or whose key's
	// completion had not reached Redis yet, can reach a handler again;
	// Redis dropped every other redelivery. The consumer completes keys
	// in the background, in one call for all lanes that carries what was
	// handled during the call before: for the crash worker's handlers,
	// slower than a loopback round trip, about one key. So at most one
	// per lane, plus one, per kill. Observed (300 commands, 4 kills, seeds
	// 1, 7, 11, one Redis / a cluster): Serial 2, 6, 1 / 0, 0, 1 (bound 8);
	// 4 lanes 6, 3, 1 / 0, 3, 1 (bound 20); 16 handlers 7, 7, 17 / 6, 5, 4
	// (bound 68).
	ev, err := reliability.ReadEvents(filepath.Join(c.dir, "events.log"))
	if err != nil {
		t.Fatal(err)
	}
	inFlight := max(1, c.lanes, c.handlers)
	bound := len(killedAt) * (inFlight + 1)
	if got := ev.Total[reliability.EventDuplicate]; got > bound {
		t.Errorf("%d redeliveries reached a handler; at most %d can (one per lane, plus one, per kill)", got, bound)
	}
	figures.Record(t, figures.Row{Section: "crash", Case: c.name + "/replicas", Values: []figures.Value{
		figures.V("replicas", crashReplicas),
		figures.V("redis_dedup_drops", ev.Total[reliability.EventDedup]),
		figures.V("handler_saw_again", ev.Total[reliability.EventDuplicate]),
		figures.V("handler_saw_again_bound", bound),
	}})
}

// TestCrashRecoveryReplicas is the crash test of the PerConversation
// consumer with several replicas in one group and in-memory dedup (the
// Redis run above covers it with Redis when redis-server is installed):
// replicas are SIGKILLed and restarted, so partitions move between them
// with records in flight. Nothing is lost, no effect is applied twice
// (the effect store's exclusive create; the event log), and within each
// conversation every effect is applied after its predecessor's.
func TestCrashRecoveryReplicas(t *testing.T) {
	laser, worker := buildBinaries(t)
	n, kills, limit := crashScale()
	seed := crashSeed(t)
	t.Logf("crash test seed %d (replay with %s=%d), %d commands, %d kills, %d replicas", seed, envSeed, seed, n, kills, crashReplicas)
	for _, b := range crashBackends(laser) {
		t.Run(b.name+"/perconversation", func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), limit)
			defer cancel()
			addr := b.addr(t, ctx)
			c := &crashRun{
				t: t, ctx: ctx, addr: addr, worker: worker, handlers: crashHandlers, kills: kills, seed: seed,
				name:  "replicas/" + b.name + "/perconversation",
				topic: fmt.Sprintf("rel-pcmd-%d-%d", seed, time.Now().UnixNano()),
			}
			c.dlq = strings.Replace(c.topic, "rel-pcmd-", "rel-pdlq-", 1)
			c.runReplicas(n, "")
		})
	}
}
