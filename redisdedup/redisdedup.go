// Package redisdedup is a durable deduplicator on Redis for the reliable
// consumer: replicas of an agent share it, and it survives their restarts,
// so a redelivered message is not handled twice however it came back.
//
//	cfg.Deduplicator = redisdedup.New(rdb, "billing") // rdb is a *redis.Client
//
// It marks keys in two steps (dedup.Completer): Observe claims a key for
// the message about to be handled and Complete, called by the consumer
// once the message was handled or parked, turns the claim into a
// remembered key. A remembered key is a duplicate; a claim is not, so a
// process killed between claiming and handling does not lose the message:
// the claim lapses after its lease (or at once, when the same owner comes
// back), and the redelivery is handled. Each Observe is one round trip (a
// Lua script run with EVALSHA).
//
// It is a dedup.BatchDeduplicator too: the consumer claims the keys of a
// polled batch in one pipeline (ClaimBatch: a plain SET NX PX GET per key,
// Redis 7 or later; the claim script only for this owner's own claims, and
// for every key on an older server) and completes handled keys many per
// pipeline in the background (CompleteBatch), before it commits their
// offsets, so a message costs a fraction of a round trip instead of two.
//
// When Redis cannot be reached, or another replica's claim is still within
// its lease, Observe fails with an error matching runtime.ErrTransient: the
// consumer waits and asks again, the record stays uncommitted, and nothing
// is let through as a silent duplicate.
package redisdedup

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/lasergo/laser/dedup"
	"github.com/lasergo/laser/runtime"
)

// Defaults of Config.
const (
	DefaultWindow = 1_000_000
	DefaultTTL    = 7 * 24 * time.Hour
	DefaultLease  = 30 * time.Second
	DefaultPrefix = "laser:dedup:"
)

// ErrClaimed reports a key claimed by a message still in flight: on
// another replica (until the claim's lease ends) or in this process. It
// matches runtime.ErrTransient, so the consumer asks again later.
var ErrClaimed = fmt.Errorf("redisdedup: key is claimed by a message in flight: %w", runtime.ErrTransient)

// Config tunes a Deduplicator; zero fields take the defaults.
type Config struct {
	// Window is the most keys remembered per scope; past it the oldest
	// are forgotten. Default 1,000,000.
	Window int
	// TTL is how long a handled key is remembered. Default 7 days.
	TTL time.Duration
	// Lease is how long a claim keeps other replicas waiting when its
	// owner neither completes nor forgets it (the owner was killed); make
	// it longer than your slowest handler, with a tenth to spare (the
	// consumer claims a batch's keys at once and renews them once they are
	// older than a tenth of the lease). Default 30 s.
	Lease time.Duration
	// Owner names this replica, stably across its restarts (a pod or host
	// name): a restarted owner takes its dead incarnation's claims back at
	// once instead of waiting for their lease. Two live processes must
	// never share an owner. Default: a random name per Deduplicator.
	Owner string
	// Prefix starts every Redis key. Default "laser:dedup:".
	Prefix string
}

// Deduplicator implements dedup.Deduplicator, dedup.Forgetter and
// dedup.Completer on Redis. Safe for concurrent use.
type Deduplicator struct {
	rdb   redis.UniversalClient
	opts  Config
	base  string // prefix and hash-tagged scope: every key of a scope shares a cluster slot
	owner string // "c|<owner>|": the part of a claim naming its owner
	claim string // owner part and this incarnation
	lease string // milliseconds, as the scripts take them
	ttl   string
	win   string
	// scriptClaims is set once the server refused SET NX GET: ClaimBatch
	// then claims by script only.
	scriptClaims atomic.Bool
	scriptLoaded atomic.Bool // the claim script was loaded with a pipeline
	windowLoaded atomic.Bool // the window script was, likewise
}

var (
	_ dedup.Deduplicator      = (*Deduplicator)(nil)
	_ dedup.Forgetter         = (*Deduplicator)(nil)
	_ dedup.Completer         = (*Deduplicator)(nil)
	_ dedup.BatchDeduplicator = (*Deduplicator)(nil)
)

// New returns a deduplicator keeping the keys of scope (name it after the
// consumer group: replicas of one group share a scope, other groups must
// not) in the Redis behind rdb, configured by cfg when given (at most one;
// the zero Config takes every default).
func New(rdb redis.UniversalClient, scope string, cfg ...Config) *Deduplicator {
	var o Config
	if len(cfg) > 0 {
		o = cfg[0]
	}
	if o.Window <= 0 {
		o.Window = DefaultWindow
	}
	if o.TTL <= 0 {
		o.TTL = DefaultTTL
	}
	if o.Lease <= 0 {
		o.Lease = DefaultLease
	}
	if o.Prefix == "" {
		o.Prefix = DefaultPrefix
	}
	if o.Owner == "" {
		o.Owner = nonce()
	}
	owner := "c|" + o.Owner + "|"
	return &Deduplicator{
		rdb:   rdb,
		opts:  o,
		base:  o.Prefix + "{" + scope + "}:",
		owner: owner,
		claim: owner + nonce(),
		lease: strconv.FormatInt(max(o.Lease.Milliseconds(), 1), 10),
		ttl:   strconv.FormatInt(max(o.TTL.Milliseconds(), 1), 10),
		win:   strconv.Itoa(o.Window),
	}
}

// Key returns the Redis key holding the mark of a scoped dedup key.
func (d *Deduplicator) Key(key string) string { return d.base + "k:" + key }

// windowKey is the sorted set of remembered keys, scored by when they were
// completed, that bounds the window by count.
func (d *Deduplicator) windowKey() string { return d.base + "w" }

// observeScript claims KEYS[1] unless it is remembered (0: a duplicate) or
// claimed by someone else's live incarnation (2: busy). A claim of a dead
// incarnation of this owner (same owner prefix, other incarnation) is taken.
var observeScript = redis.NewScript(`
local v = redis.call('GET', KEYS[1])
if v == 'd' then return 0 end
if v then
  if v == ARGV[1] then return 2 end
  if string.sub(v, 1, string.len(ARGV[2])) ~= ARGV[2] then return 2 end
end
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[3])
return 1
`)

// completeScript remembers KEYS[1] for ARGV[1] ms and bounds the window
// KEYS[2] to ARGV[2] keys, forgetting the oldest first.
var completeScript = redis.NewScript(`
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
redis.call('SET', KEYS[1], 'd', 'PX', ARGV[1])
redis.call('ZADD', KEYS[2], now, KEYS[1])
redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', now - tonumber(ARGV[1]))
local n = redis.call('ZCARD', KEYS[2])
local limit = tonumber(ARGV[2])
if n > limit then
  local old = redis.call('ZPOPMIN', KEYS[2], n - limit)
  for i = 1, #old, 2 do
    if redis.call('GET', old[i]) == 'd' then redis.call('DEL', old[i]) end
  end
end
redis.call('PEXPIRE', KEYS[2], ARGV[1])
return 1
`)

// forgetScript drops KEYS[1] when it is this incarnation's claim or a
// remembered key; another replica's claim is left alone.
var forgetScript = redis.NewScript(`
local v = redis.call('GET', KEYS[1])
if v == ARGV[1] or v == 'd' then
  redis.call('DEL', KEYS[1])
  redis.call('ZREM', KEYS[2], KEYS[1])
  return 1
end
return 0
`)

// claimBatchScript is observeScript for every key of KEYS, answering one
// code each: 1 claimed, 0 remembered (a duplicate), 3 already this
// incarnation's claim (renewed), 2 another live incarnation's claim.
var claimBatchScript = redis.NewScript(claimBatchSource)

const claimBatchSource = `
local out = {}
local n = string.len(ARGV[2])
for i, k in ipairs(KEYS) do
  if redis.call('SET', k, ARGV[1], 'NX', 'PX', ARGV[3]) then
    out[i] = 1
  else
    local v = redis.call('GET', k)
    if v == 'd' then
      out[i] = 0
    elseif v == ARGV[1] then
      redis.call('PEXPIRE', k, ARGV[3])
      out[i] = 3
    elseif v and string.sub(v, 1, n) ~= ARGV[2] then
      out[i] = 2
    else
      redis.call('SET', k, ARGV[1], 'PX', ARGV[3])
      out[i] = 1
    end
  end
end
return out
`

// windowBatchScript enters KEYS[2..] in the window KEYS[1], scored by now,
// in one ZADD, and bounds the window as completeScript does: entries older
// than ARGV[1] ms go, then the oldest past ARGV[2] entries, their marks
// deleted when remembered. CompleteBatch sets the marks themselves, just
// before.
var windowBatchScript = redis.NewScript(windowBatchSource)

const windowBatchSource = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local add = {}
for i = 2, #KEYS do
  add[#add + 1] = now
  add[#add + 1] = KEYS[i]
end
if #add > 0 then redis.call('ZADD', KEYS[1], unpack(add)) end
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now - tonumber(ARGV[1]))
local n = redis.call('ZCARD', KEYS[1])
local limit = tonumber(ARGV[2])
if n > limit then
  local old = redis.call('ZPOPMIN', KEYS[1], n - limit)
  for i = 1, #old, 2 do
    if redis.call('GET', old[i]) == 'd' then redis.call('DEL', old[i]) end
  end
end
redis.call('PEXPIRE', KEYS[1], ARGV[1])
return 1
`

// releaseBatchScript drops each key of KEYS that is this incarnation's
// claim; remembered keys and other claims are left alone.
var releaseBatchScript = redis.NewScript(`
local n = 0
for _, k in ipairs(KEYS) do
  if redis.call('GET', k) == ARGV[1] then
    redis.call('DEL', k)
    n = n + 1
  end
end
return n
`)

// batchLimit is the most keys one script call takes; a longer batch is cut
// into calls of this size (the Lua stack bounds unpack).
const batchLimit = 512

// Observe implements dedup.Deduplicator: it claims key and reports
// whether it is new. A remembered key is not new; a key claimed by a
// message in flight fails with ErrClaimed; an unreachable Redis fails with
// an error matching runtime.ErrTransient.
func (d *Deduplicator) Observe(ctx context.Context, key string) (bool, error) {
	n, err := observeScript.Run(ctx, d.rdb, []string{d.Key(key)}, d.claim, d.owner, d.lease).Int()
	if err != nil {
		return false, d.fail("observe", err)
	}
	switch n {
	case 1:
		return true, nil
	case 0:
		return false, nil
	default:
		return false, ErrClaimed
	}
}

// Complete implements dedup.Completer: key is remembered for the TTL.
func (d *Deduplicator) Complete(ctx context.Context, key string) error {
	if err := completeScript.Run(ctx, d.rdb, []string{d.Key(key), d.windowKey()}, d.ttl, d.win).Err(); err != nil {
		return d.fail("complete", err)
	}
	return nil
}

// Forget implements dedup.Forgetter: this process's claim on key (or the
// remembered key) is taken back, so a redelivery is handled.
func (d *Deduplicator) Forget(ctx context.Context, key string) error {
	if err := forgetScript.Run(ctx, d.rdb, []string{d.Key(key), d.windowKey()}, d.claim).Err(); err != nil {
		return d.fail("forget", err)
	}
	return nil
}

// ClaimBatch implements dedup.BatchDeduplicator: each key is claimed
// as Observe claims it, and its state written to states. A key already
// claimed by this incarnation is dedup.KeyHeld, and its lease starts
// again.
//
// The claims go as one pipeline of plain SET NX PX GET commands (Redis 7
// or later), one per key, rather than as a script: a fresh key, the common
// case, is claimed by its SET, and the old value the SET answers tells a
// remembered key and another live owner's claim apart without a second
// look. Only the keys that need a decision the SET cannot make (this
// owner's own claims, to be renewed or taken back from a dead incarnation)
// go to the claim script in a second call. A server that refuses the
// combined SET (older than 7.0) gets the script for every key from then on.
func (d *Deduplicator) ClaimBatch(ctx context.Context, keys []string, states []dedup.KeyState) error {
	if len(states) != len(keys) {
		return fmt.Errorf("redisdedup: claim %d keys into %d states", len(keys), len(states))
	}
	if !d.scriptClaims.Load() {
		again, err := d.claimBySet(ctx, keys, states)
		if err == nil {
			if len(again) == 0 {
				return nil
			}
			sub := make([]string, len(again))
			subStates := make([]dedup.KeyState, len(again))
			for j, i := range again {
				sub[j] = keys[i]
			}
			if err := d.claimByScript(ctx, sub, subStates); err != nil {
				return err
			}
			for j, i := range again {
				states[i] = subStates[j]
			}
			return nil
		}
		if !errors.Is(err, errSetRefused) {
			return err
		}
		d.scriptClaims.Store(true)
	}
	return d.claimByScript(ctx, keys, states)
}

// errSetRefused reports a server that does not take SET with both NX and
// GET.
var errSetRefused = errors.New("redisdedup: SET NX GET refused")

// claimBySet claims keys with one pipelined SET NX PX GET each and writes
// the states it can tell; it returns the indexes of keys already claimed
// by this owner (any incarnation), which the claim script decides.
func (d *Deduplicator) claimBySet(ctx context.Context, keys []string, states []dedup.KeyState) (again []int, err error) {
	cmds := make([]*redis.Cmd, len(keys))
	load := !d.scriptLoaded.Load()
	_, err = d.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		if load {
			// The first pipeline loads the claim script, so a key that
			// needs it later costs one EVALSHA, not a refused one and an EVAL.
			p.ScriptLoad(ctx, claimBatchSource) // Script.Load would take the digest before the pipeline ran
		}
		for i, k := range keys {
			cmds[i] = p.Do(ctx, "set", d.Key(k), d.claim, "nx", "px", d.lease, "get")
		}
		return nil
	})
	if err != nil && !errors.Is(err, redis.Nil) {
		var reply redis.Error
		if errors.As(err, &reply) && !transient(err) && strings.Contains(strings.ToLower(reply.Error()), "syntax") {
			return nil, errSetRefused
		}
		return nil, d.fail("claim", err)
	}
	if load {
		d.scriptLoaded.Store(true)
	}
	for i, cmd := range cmds {
		v, err := cmd.Text()
		switch {
		case errors.Is(err, redis.Nil):
			states[i] = dedup.KeyClaimed // it was free: the SET claimed it
		case err != nil:
			return nil, d.fail("claim", err)
		case v == "d":
			states[i] = dedup.KeyDuplicate
		case strings.HasPrefix(v, d.owner):
			again = append(again, i) // ours: renew it, or take it from a dead incarnation
		default:
			states[i] = dedup.KeyBusy
		}
	}
	return again, nil
}

// claimByScript claims keys with the claim script, one call per 512 keys.
func (d *Deduplicator) claimByScript(ctx context.Context, keys []string, states []dedup.KeyState) error {
	for len(keys) > 0 {
		n := min(len(keys), batchLimit)
		codes, err := claimBatchScript.Run(ctx, d.rdb, d.keys(nil, keys[:n]), d.claim, d.owner, d.lease).Int64Slice()
		if err != nil {
			return d.fail("claim", err)
		}
		if len(codes) != n {
			return d.fail("claim", fmt.Errorf("script answered %d codes for %d keys", len(codes), n))
		}
		for i, c := range codes {
			switch c {
			case 1:
				states[i] = dedup.KeyClaimed
			case 0:
				states[i] = dedup.KeyDuplicate
			case 3:
				states[i] = dedup.KeyHeld
			default:
				states[i] = dedup.KeyBusy
			}
		}
		keys, states = keys[n:], states[n:]
	}
	return nil
}

// CompleteBatch implements dedup.BatchDeduplicator: every key is
// remembered for the TTL. The keys go as one pipeline (per 512 keys): one
// plain SET each, which is cheaper for Redis than a SET called from a
// script, then the window script, which enters them all in the window with
// one ZADD and bounds it (after the SETs, so the keys it evicts are
// remembered ones). A pipeline cut short between the two leaves keys
// remembered for the TTL but outside the count bound, and CompleteBatch
// fails: the consumer asks again, and no offset past them is committed
// until it succeeded.
func (d *Deduplicator) CompleteBatch(ctx context.Context, keys []string) error {
	for len(keys) > 0 {
		n := min(len(keys), batchLimit)
		err := d.completeBySet(ctx, keys[:n], false)
		if isNoScript(err) {
			// The node that holds the keys does not know the script (Redis
			// restarted, or on a cluster the preload went to another node):
			// ask again sending the script whole, which that node then keeps;
			// completing is idempotent.
			d.windowLoaded.Store(false)
			err = d.completeBySet(ctx, keys[:n], true)
		}
		if err != nil {
			return d.fail("complete", err)
		}
		keys = keys[n:]
	}
	return nil
}

// completeBySet sends one pipeline completing keys; whole sends the window
// script's source (EVAL) rather than its digest.
func (d *Deduplicator) completeBySet(ctx context.Context, keys []string, whole bool) error {
	load := !whole && !d.windowLoaded.Load()
	var window *redis.Cmd
	sets := make([]*redis.StatusCmd, len(keys))
	_, err := d.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		if load {
			p.ScriptLoad(ctx, windowBatchSource)
		}
		for i, k := range keys {
			sets[i] = p.Set(ctx, d.Key(k), "d", d.opts.TTL)
		}
		if whole {
			window = p.Eval(ctx, windowBatchSource, d.keys([]string{d.windowKey()}, keys), d.ttl, d.win)
		} else {
			window = p.EvalSha(ctx, windowBatchScript.Hash(), d.keys([]string{d.windowKey()}, keys), d.ttl, d.win)
		}
		return nil
	})
	if err != nil {
		return err
	}
	if err := window.Err(); err != nil {
		return err
	}
	if load || whole {
		d.windowLoaded.Store(true) // the node the keys live on holds it now
	}
	for _, c := range sets {
		if err := c.Err(); err != nil {
			return err
		}
	}
	return nil
}

// isNoScript reports a server that did not know a script's digest.
func isNoScript(err error) bool {
	var reply redis.Error
	return errors.As(err, &reply) && strings.HasPrefix(reply.Error(), "NOSCRIPT")
}

// ReleaseBatch implements dedup.BatchDeduplicator: this incarnation's
// claims on keys are dropped, in one script call (per 512 keys).
func (d *Deduplicator) ReleaseBatch(ctx context.Context, keys []string) error {
	for len(keys) > 0 {
		n := min(len(keys), batchLimit)
		if err := releaseBatchScript.Run(ctx, d.rdb, d.keys(nil, keys[:n]), d.claim).Err(); err != nil {
			return d.fail("release", err)
		}
		keys = keys[n:]
	}
	return nil
}

// Lease implements dedup.BatchDeduplicator: Config.Lease.
func (d *Deduplicator) Lease() time.Duration { return d.opts.Lease }

// keys appends the Redis keys of keys to dst.
func (d *Deduplicator) keys(dst, keys []string) []string {
	dst = slices.Grow(dst, len(keys))
	for _, k := range keys {
		dst = append(dst, d.Key(k))
	}
	return dst
}

// Error is a failed call to Redis.
type Error struct {
	Op        string // observe, complete, forget, claim or release
	Transient bool   // Redis was unreachable or busy; asking again may help
	Err       error
}

func (e *Error) Error() string {
	kind := "redis refused"
	if e.Transient {
		kind = "redis unavailable"
	}
	return "redisdedup: " + e.Op + ": " + kind + ": " + e.Err.Error()
}

// Unwrap returns the cause.
func (e *Error) Unwrap() error { return e.Err }

// Is lets errors.Is(err, runtime.ErrTransient) see a transient failure.
func (e *Error) Is(target error) bool { return target == runtime.ErrTransient && e.Transient }

func (d *Deduplicator) fail(op string, err error) error {
	return &Error{Op: op, Transient: transient(err), Err: err}
}

// transient tells an unreachable or momentarily unable Redis (network
// errors, timeouts, a server loading or failing over) from a refusal that
// asking again will not cure (a wrong type under the key, a script error).
func transient(err error) bool {
	var reply redis.Error
	if !errors.As(err, &reply) {
		return true // network, timeout, closed pool: the server did not answer
	}
	msg := reply.Error()
	for _, p := range []string{"LOADING", "BUSY", "TRYAGAIN", "CLUSTERDOWN", "MASTERDOWN", "READONLY", "MOVED", "ASK"} {
		if strings.HasPrefix(msg, p) {
			return true
		}
	}
	return false
}

func nonce() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}
