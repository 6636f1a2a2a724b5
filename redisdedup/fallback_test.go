package redisdedup_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/lasergo/laser/dedup"
	"github.com/lasergo/laser/internal/redistest"
	"github.com/lasergo/laser/redisdedup"
)

// replyError is an error reply of the server, as go-redis reads one.
type replyError string

func (e replyError) Error() string { return string(e) }
func (replyError) RedisError()     {}

// refuser answers, in the server's place, the pipelined commands refuse
// returns an error for, and sends the others on.
type refuser struct {
	refuse func(cmd redis.Cmder) error
}

func (r *refuser) DialHook(next redis.DialHook) redis.DialHook          { return next }
func (r *refuser) ProcessHook(next redis.ProcessHook) redis.ProcessHook { return next }
func (r *refuser) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		var pass []redis.Cmder
		var first error
		for _, cmd := range cmds {
			if err := r.refuse(cmd); err != nil {
				cmd.SetErr(err)
				first = errors.Join(first, err)
				continue
			}
			pass = append(pass, cmd)
		}
		if len(pass) > 0 {
			if err := next(ctx, pass); err != nil && first == nil {
				first = err
			}
		}
		return first
	}
}

// isSetNXGet reports a SET asking for NX and GET together, which a server
// older than Redis 7 refuses with a syntax error.
func isSetNXGet(cmd redis.Cmder) bool {
	if cmd.Name() != "set" {
		return false
	}
	var nx, get bool
	for _, a := range cmd.Args() {
		s, _ := a.(string)
		nx = nx || strings.EqualFold(s, "nx")
		get = get || strings.EqualFold(s, "get")
	}
	return nx && get
}

// before7 makes rdb answer as a Redis 6 does, for the commands it lacks;
// the counter counts the commands sent, a refused SET NX GET as "setnxget".
func before7(rdb *redis.Client) *nameCounter {
	counter := &nameCounter{names: map[string]int{}}
	rdb.AddHook(counter)
	rdb.AddHook(&refuser{refuse: func(cmd redis.Cmder) error {
		if isSetNXGet(cmd) {
			counter.add(redis.NewCmd(context.Background(), "setnxget"))
			return replyError("ERR syntax error")
		}
		return nil
	}})
	return counter
}

func TestClaimBatchFallsBackToTheScriptOnARedisBefore7(t *testing.T) {
	srv := redistest.Start(t)
	rdb := client(t, srv.Addr())
	other := redisdedup.New(rdb, "g")
	claimBatch(t, other, "theirs", "done")
	if err := other.CompleteBatch(t.Context(), []string{"done"}); err != nil {
		t.Fatal(err)
	}
	d := redisdedup.New(rdb, "g")
	counter := before7(rdb)
	got := claimBatch(t, d, "new", "done", "theirs")
	want := []dedup.KeyState{dedup.KeyClaimed, dedup.KeyDuplicate, dedup.KeyBusy}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("states %v, want %v", got, want)
	}
	// The refused SETs are asked once; from then on the script alone.
	if got := claimBatch(t, d, "new", "new-2"); got[0] != dedup.KeyHeld || got[1] != dedup.KeyClaimed {
		t.Fatalf("states %v, want held and claimed", got)
	}
	if fresh, err := d.Observe(t.Context(), "new-3"); !fresh || err != nil {
		t.Fatalf("observe = %v, %v; want a claim", fresh, err)
	}
	if n := counter.count("setnxget"); n != 3 {
		t.Fatalf("%d SET NX GET sent; want the first batch's three only", n)
	}
	if n := counter.count("evalsha") + counter.count("eval"); n < 6 {
		t.Fatalf("%d script calls; want one for each of the six keys after the refusal", n)
	}
	if v := rdb.Get(t.Context(), d.Key("new-2")).Val(); !strings.HasPrefix(v, "c|") || rdb.PTTL(t.Context(), d.Key("new-2")).Val() <= 0 {
		t.Fatalf("a script claim holds %q; want a claim with its lease", v)
	}
}

// The claim, complete and release paths take batches of any length: every
// command and script names one key (none unpacks a list of keys in Lua,
// which bounded a script call to 512 keys), so nothing is cut.
func TestBatchesLongerThan512KeysGoWhole(t *testing.T) {
	srv := redistest.Start(t)
	for _, tc := range []struct {
		name    string
		before7 bool
	}{{"set", false}, {"script", true}} {
		t.Run(tc.name, func(t *testing.T) {
			rdb := client(t, srv.Addr())
			prefix := "p-" + tc.name + ":"
			var counter *nameCounter
			if tc.before7 {
				counter = before7(rdb)
			}
			d := redisdedup.New(rdb, "g", redisdedup.Config{Prefix: prefix, Lease: time.Hour})
			const n = 1500
			keys := make([]string, n)
			for i := range keys {
				keys[i] = fmt.Sprintf("k%d", i)
			}
			for i, st := range claimBatch(t, d, keys...) {
				if st != dedup.KeyClaimed {
					t.Fatalf("key %d: %v, want claimed", i, st)
				}
			}
			for i, st := range claimBatch(t, d, keys...) {
				if st != dedup.KeyHeld {
					t.Fatalf("key %d claimed again: %v, want held", i, st)
				}
			}
			if err := d.CompleteBatch(t.Context(), keys[:1000]); err != nil {
				t.Fatal(err)
			}
			if err := d.ReleaseBatch(t.Context(), keys[1000:]); err != nil {
				t.Fatal(err)
			}
			got := claimBatch(t, redisdedup.New(rdb, "g", redisdedup.Config{Prefix: prefix}), keys...)
			for i, st := range got {
				if want := map[bool]dedup.KeyState{true: dedup.KeyDuplicate, false: dedup.KeyClaimed}[i < 1000]; st != want {
					t.Fatalf("key %d: %v, want %v", i, st, want)
				}
			}
			// Each of the two deduplicators learns of the refusal once.
			if counter != nil && counter.count("setnxget") != 2*n {
				t.Fatalf("%d SETs with NX and GET sent; want each deduplicator's first batch only", counter.count("setnxget"))
			}
		})
	}
}
