package runtime_test

import (
	"fmt"
	"hash/fnv"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/lasergo/laser/clock"
	"github.com/lasergo/laser/runtime"
	"github.com/lasergo/laser/wire"
)

// stressRec is where a published record landed, and its place among its
// conversation's records.
type stressRec struct {
	part uint32
	off  uint64
	conv int
	seq  int
}

// h32 is the FNV-1a hash of s: the stress's choices, fixed by its seed.
func h32(s string) uint32 { h := fnv.New32a(); h.Write([]byte(s)); return h.Sum32() }

// runStress publishes records of convs conversations (two hot ones get two
// thirds of them) over parts partitions, with handlers that fail and
// retry or take a while by a hash of seed, runs a consumer until stopAfter
// records were handled, stops it gracefully, and checks: no stored offset
// passes an unhandled record; per key, handling follows log order; no
// record is handled twice within the session. Then a second session
// finishes, and every partition's stored offset is its last record.
func runStress(t *testing.T, mode runtime.Concurrency, parts uint32, convs, total, stopAfter, maxQ, batch int, seed string, byPartition bool) {
	log := newLog(t, parts, clock.System{})
	ids := make([]wire.ID, convs)
	for i := range ids {
		ids[i] = conv()
	}
	recs := map[string]stressRec{}
	seqs := make([]int, convs)
	for i := 0; i < total; i++ {
		c := int(h32(seed+strconv.Itoa(i)) % uint32(convs))
		if i%3 != 0 {
			c = int(h32(seed+"hot"+strconv.Itoa(i)) % 2) // two hot conversations
		}
		body := fmt.Sprintf("c%d-%d", c, seqs[c])
		pos := plain(t, log, wire.Provenance{Conversation: ids[c]}, body)
		recs[body] = stressRec{pos.Partition, pos.Offset, c, seqs[c]}
		seqs[c]++
	}
	prevHandled := map[string]bool{}
	for session := 0; session < 2; session++ {
		var mu sync.Mutex
		handled := map[string]int{}
		lastSeq := map[int]int{}
		lastOff := map[uint32]int64{}
		var errs []string
		n := 0
		stopNow := make(chan struct{})
		var once sync.Once
		r := start(t, log, runtime.ConsumerConfig{
			Agent: agent,
			Handler: handlerFunc(func(c *runtime.Ctx) error {
				b := string(c.Message().Body())
				hv := h32(seed + b + strconv.Itoa(c.Attempt()))
				if hv%7 == 0 && c.Attempt() < 3 {
					return errBoom
				}
				if hv%5 == 0 {
					time.Sleep(time.Duration(hv%3) * time.Millisecond)
				}
				rec := recs[b]
				mu.Lock()
				defer mu.Unlock()
				handled[b]++
				if handled[b] > 1 {
					errs = append(errs, "twice: "+b)
				}
				if byPartition {
					if lo, ok := lastOff[rec.part]; ok && int64(rec.off) <= lo {
						errs = append(errs, fmt.Sprintf("partition %d order: %d after %d", rec.part, rec.off, lo))
					}
					lastOff[rec.part] = int64(rec.off)
				} else {
					if ls, ok := lastSeq[rec.conv]; ok && rec.seq <= ls {
						errs = append(errs, fmt.Sprintf("conv %d order: %d after %d", rec.conv, rec.seq, ls))
					}
					lastSeq[rec.conv] = rec.seq
				}
				n++
				if session == 0 && n == stopAfter {
					once.Do(func() { close(stopNow) })
				}
				return nil
			}),
			Tuning: runtime.Tuning{Concurrency: mode, MaxQueuedRecords: maxQ, PollBatch: batch,
				Retry: runtime.RetryPolicy{MaxAttempts: 3, BaseDelay: time.Millisecond}},
		})
		if session == 0 {
			recv(t, stopNow, "stopAfter handled")
		} else {
			deadline := time.Now().Add(20 * time.Second)
			for {
				allDone := true
				for p := uint32(0); p < parts; p++ {
					end, _ := log.ReadRange(t.Context(), topic, p, 0, 1<<20)
					if len(end) == 0 {
						continue
					}
					off, ok := stored(t, log, p)
					if !ok || off != end[len(end)-1].Offset {
						allDone = false
					}
				}
				if allDone || time.Now().After(deadline) {
					break
				}
				time.Sleep(20 * time.Millisecond)
			}
		}
		if err := r.shutdown(t); err != nil {
			t.Fatalf("session %d: %v", session, err)
		}
		mu.Lock()
		for _, e := range errs[:min(len(errs), 10)] {
			t.Errorf("session %d: %s", session, e)
		}
		// Nothing at or below a stored offset is unhandled, in this or an
		// earlier session.
		for b, rec := range recs {
			off, ok := stored(t, log, rec.part)
			if ok && rec.off <= off && handled[b] == 0 && !prevHandled[b] {
				t.Errorf("session %d: stored %d:%d past unhandled %s at %d", session, rec.part, off, b, rec.off)
			}
		}
		for b := range handled {
			prevHandled[b] = true
		}
		mu.Unlock()
		if session == 1 {
			for p := uint32(0); p < parts; p++ {
				end, _ := log.ReadRange(t.Context(), topic, p, 0, 1<<20)
				if len(end) == 0 {
					continue
				}
				if off, ok := stored(t, log, p); !ok || off != end[len(end)-1].Offset {
					t.Errorf("partition %d stored %d,%v, want %d", p, off, ok, end[len(end)-1].Offset)
				}
			}
		}
	}
}

// stressSeeds are the seeds runStress runs with: LASER_STRESS_SEEDS
// (comma-separated) to try others.
func stressSeeds() []string {
	if s := os.Getenv("LASER_STRESS_SEEDS"); s != "" {
		return strings.Split(s, ",")
	}
	return []string{"a", "b", "c"}
}

// TestUnderLoadAStopCommitsNoUnhandledRecordAndARestartFinishes runs
// runStress under every mode, with hot keys, retries, a graceful stop
// midway and a second session.
func TestUnderLoadAStopCommitsNoUnhandledRecordAndARestartFinishes(t *testing.T) {
	for _, tc := range []struct {
		mode                    runtime.Concurrency
		parts                   uint32
		total, stopAfter, batch int
		byPartition             bool
	}{
		{runtime.PerConversation(4), 4, 600, 200, 16, false},
		{runtime.PerPartition(1), 6, 600, 200, 16, true},
		{runtime.PerPartition(2), 6, 600, 200, 7, true},
		{runtime.Serial, 3, 300, 100, 16, true},
	} {
		t.Run(tc.mode.String(), func(t *testing.T) {
			for _, seed := range stressSeeds() {
				runStress(t, tc.mode, tc.parts, 20, tc.total, tc.stopAfter, 8, tc.batch, seed, tc.byPartition)
			}
		})
	}
}
