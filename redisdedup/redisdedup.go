// Package redisdedup is a durable deduplicator on Redis for the reliable
// consumer: replicas of an agent share it, and it survives their restarts,
// so a redelivered message is not handled twice however it came back.
//
//	cfg.Deduplicator = redisdedup.New(rdb, "billing") // rdb is a *redis.Client
//
// Each message costs Redis one key, written twice: Observe or ClaimBatch
// claims it for the message about to be handled (SET NX with a lease and
// the claim's owner), and Complete or CompleteBatch, called by the consumer
// once the message was handled or parked, overwrites that claim with the
// remembered mark and the TTL (dedup.Completer). A remembered key is a
// duplicate; a claim is not, so a process killed between claiming and
// handling does not lose the message: the claim lapses after its lease (or
// at once, when the same owner comes back), and the redelivery is handled.
// A key is forgotten when its TTL ends; nothing bounds the keys by count
// (size Redis for the message rate times the TTL).
//
// It is a dedup.BatchDeduplicator: the consumer claims the keys of a
// polled batch in one pipeline (ClaimBatch: a plain SET NX PX GET per key,
// Redis 7 or later; the claim script only for this owner's own claims, and
// for every key on an older server) and completes handled keys many per
// pipeline in the background (CompleteBatch: a plain SET each), before it
// commits their offsets, so a message costs a fraction of a round trip.
// Every command and script names one key, so the keys of a scope spread
// over the shards of a Redis Cluster (a redis.ClusterClient).
//
// When Redis cannot be reached, or another replica's claim is still within
// its lease, Observe fails with an error matching runtime.ErrTransient: the
// consumer waits and asks again, the record stays uncommitted, and nothing
// is let through as a silent duplicate.
//
// The keys are laid out as <Prefix>v2:<scope>:<key>; the v2 names this
// layout (one key per message), and keys of the earlier layout (claims,
// marks and a sorted-set window under <Prefix>{<scope>}:) are not read.
package redisdedup

import (
	"cmp"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
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
	DefaultTTL    = 7 * 24 * time.Hour
	DefaultLease  = 30 * time.Second
	DefaultPrefix = "laser:dedup:"
)

// layout follows the prefix in every key: the version of the key layout,
// so that a later layout can tell its keys from these and read them.
const layout = "v2:"

// remembered is the value of a completed key; a claim starts with "c|".
const remembered = "d"

// ErrClaimed reports a key claimed by a message still in flight: on
// another replica (until the claim's lease ends) or in this process. It
// matches runtime.ErrTransient, so the consumer asks again later.
var ErrClaimed = fmt.Errorf("redisdedup: key is claimed by a message in flight: %w", runtime.ErrTransient)

// Config tunes a Deduplicator; zero fields take the defaults.
type Config struct {
	// TTL is how long a handled key is remembered. Redis holds one key per
	// message for that long (about 170 bytes with a short key); there is
	// no bound by count. Default 7 days.
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
	// never share an owner. Any string; default: a random name per
	// Deduplicator.
	Owner string
	// Prefix starts every Redis key, before the layout's version.
	// Default "laser:dedup:".
	Prefix string
}

// Deduplicator implements dedup.Deduplicator, dedup.Forgetter,
// dedup.Completer and dedup.BatchDeduplicator on Redis. Safe for
// concurrent use.
type Deduplicator struct {
	rdb   redis.UniversalClient
	opts  Config
	base  string // prefix, layout and escaped scope
	owner string // "c|<escaped owner>|": the part of a claim naming its owner
	claim string // owner part and this incarnation
	lease string // milliseconds, as the claim script takes them
	// scriptClaims is set once the server refused SET NX GET: ClaimBatch
	// then claims by script only.
	scriptClaims atomic.Bool
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
// the zero Config takes every default). Give each consumer its own: the
// instance is the claims' owner, and a consumer takes a claim its owner
// holds on a key none of its own loops holds as its own (see
// dedup.BatchDeduplicator).
func New(rdb redis.UniversalClient, scope string, cfg ...Config) *Deduplicator {
	var o Config
	if len(cfg) > 0 {
		o = cfg[0]
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
	owner := "c|" + escape(o.Owner, '|') + "|"
	return &Deduplicator{
		rdb:   rdb,
		opts:  o,
		base:  o.Prefix + layout + escape(scope, ':') + ":",
		owner: owner,
		claim: owner + nonce(),
		lease: strconv.FormatInt(max(o.Lease.Milliseconds(), 1), 10),
	}
}

// escape percent-encodes '%' and sep in s, so that s holds no sep and
// two different strings stay different: the first sep after it ends it.
func escape(s string, sep byte) string {
	if strings.IndexByte(s, sep) < 0 && strings.IndexByte(s, '%') < 0 {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if c := s[i]; c == sep || c == '%' {
			fmt.Fprintf(&b, "%%%02X", c)
		} else {
			b.WriteByte(c)
		}
	}
	return b.String()
}

// Key returns the Redis key holding the claim or mark of a scoped dedup key.
func (d *Deduplicator) Key(key string) string { return d.base + key }

// claimScript claims KEYS[1] for ARGV[1] (this incarnation) with a lease of
// ARGV[3] ms, answering 1 claimed, 0 remembered (a duplicate), 3 already
// this incarnation's claim (renewed), 2 another live incarnation's claim. A
// claim of a dead incarnation of this owner (its prefix ARGV[2], another
// incarnation) is taken.
var claimScript = redis.NewScript(`
local v = redis.call('GET', KEYS[1])
if v == 'd' then return 0 end
if v == ARGV[1] then
  redis.call('PEXPIRE', KEYS[1], ARGV[3])
  return 3
end
if v and string.sub(v, 1, string.len(ARGV[2])) ~= ARGV[2] then return 2 end
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[3])
return 1
`)

// dropScript deletes KEYS[1] when it is this incarnation's claim (ARGV[1]),
// or a remembered key when ARGV[2] is "1"; another claim is left alone.
var dropScript = redis.NewScript(`
local v = redis.call('GET', KEYS[1])
if v == ARGV[1] or (ARGV[2] == '1' and v == 'd') then
  redis.call('DEL', KEYS[1])
  return 1
end
return 0
`)

// Observe implements dedup.Deduplicator: it claims key as ClaimBatch does
// and reports whether it is new. A remembered key is not new; a key
// claimed by a message in flight (in this process too) fails with
// ErrClaimed; an unreachable Redis fails with an error matching
// runtime.ErrTransient. A fresh key costs one round trip.
func (d *Deduplicator) Observe(ctx context.Context, key string) (bool, error) {
	var state [1]dedup.KeyState
	if err := d.ClaimBatch(ctx, []string{key}, state[:]); err != nil {
		return false, err
	}
	switch state[0] {
	case dedup.KeyClaimed:
		return true, nil
	case dedup.KeyDuplicate:
		return false, nil
	default:
		return false, ErrClaimed
	}
}

// Complete implements dedup.Completer: key is remembered for the TTL.
func (d *Deduplicator) Complete(ctx context.Context, key string) error {
	return d.CompleteBatch(ctx, []string{key})
}

// Forget implements dedup.Forgetter: this process's claim on key (or the
// remembered key) is taken back, so a redelivery is handled.
func (d *Deduplicator) Forget(ctx context.Context, key string) error {
	if _, err := d.eachKey(ctx, dropScript, []string{key}, d.claim, "1"); err != nil {
		return d.fail("forget", err)
	}
	return nil
}

// ClaimBatch implements dedup.BatchDeduplicator: each key is claimed,
// and its state written to states. A key already claimed by this
// incarnation is dedup.KeyHeld, and its lease starts again.
//
// The claims go as one pipeline of plain SET NX PX GET commands (Redis 7
// or later), one per key, rather than as a script: a fresh key, the common
// case, is claimed by its SET, and the old value the SET answers tells a
// remembered key and another live owner's claim apart without a second
// look. Only the keys that need a decision the SET cannot make (this
// owner's own claims, to be renewed or taken back from a dead incarnation)
// go to the claim script, one call per key, in a second pipeline. A server
// that refuses the combined SET (older than 7.0) gets the script for every
// key from then on.
//
// A ClaimBatch that fails after claiming some keys (a pipeline cut short,
// one shard of a cluster down) takes those claims back before it returns,
// as far as Redis lets it; what it cannot take back lapses after the lease.
func (d *Deduplicator) ClaimBatch(ctx context.Context, keys []string, states []dedup.KeyState) error {
	if len(states) != len(keys) {
		return fmt.Errorf("redisdedup: claim %d keys into %d states", len(keys), len(states))
	}
	var claimed []string
	var at []int
	byScript := d.scriptClaims.Load()
	if !byScript {
		var err error
		claimed, at, err = d.claimBySet(ctx, keys, states)
		if errors.Is(err, errSetRefused) {
			d.scriptClaims.Store(true)
			byScript = true
		} else if err != nil {
			d.undo(ctx, claimed)
			return d.fail("claim", err)
		}
	}
	if byScript {
		at = make([]int, len(keys))
		for i := range at {
			at[i] = i
		}
	}
	if len(at) == 0 {
		return nil
	}
	again := make([]string, len(at))
	for j, i := range at {
		again[j] = keys[i]
	}
	codes, err := d.eachKey(ctx, claimScript, again, d.claim, d.owner, d.lease)
	for j, c := range codes {
		if c.Err() != nil {
			continue
		}
		switch n, _ := c.Int64(); n {
		case 1:
			states[at[j]] = dedup.KeyClaimed
			claimed = append(claimed, again[j])
		case 0:
			states[at[j]] = dedup.KeyDuplicate
		case 3:
			states[at[j]] = dedup.KeyHeld
		default:
			states[at[j]] = dedup.KeyBusy
		}
	}
	if err != nil {
		d.undo(ctx, claimed)
		return d.fail("claim", err)
	}
	return nil
}

// errSetRefused reports a server that does not take SET with both NX and
// GET.
var errSetRefused = errors.New("redisdedup: SET NX GET refused")

// claimBySet claims keys with one pipelined SET NX PX GET each and writes
// the states it can tell. It returns the keys it claimed (also on an
// error, for ClaimBatch to take back) and the indexes of keys already
// claimed by this owner (any incarnation), which the claim script decides.
func (d *Deduplicator) claimBySet(ctx context.Context, keys []string, states []dedup.KeyState) (claimed []string, again []int, err error) {
	cmds := make([]*redis.Cmd, len(keys))
	err = d.pipelined(ctx, func(p redis.Pipeliner) {
		for i, k := range keys {
			cmds[i] = p.Do(ctx, "set", d.Key(k), d.claim, "nx", "px", d.lease, "get")
		}
	})
	refused := false
	for i, cmd := range cmds {
		v, cerr := cmd.Text()
		switch {
		case errors.Is(cerr, redis.Nil):
			states[i] = dedup.KeyClaimed // it was free: the SET claimed it
			claimed = append(claimed, keys[i])
		case cerr != nil:
			refused = refused || refusesSet(cerr)
			err = cmp.Or(err, cerr)
		case v == remembered:
			states[i] = dedup.KeyDuplicate
		case strings.HasPrefix(v, d.owner):
			again = append(again, i) // ours: renew it, or take it from a dead incarnation
		default:
			states[i] = dedup.KeyBusy
		}
	}
	if refused && len(claimed) == 0 {
		return nil, nil, errSetRefused
	}
	return claimed, again, err
}

// refusesSet reports the syntax error of a server older than 7.0 asked
// for SET with NX and GET together.
func refusesSet(err error) bool {
	var reply redis.Error
	return errors.As(err, &reply) && !transient(err) && strings.Contains(strings.ToLower(reply.Error()), "syntax")
}

// undo takes back the claims a failed ClaimBatch made; a failure is left
// to the lease.
func (d *Deduplicator) undo(ctx context.Context, claimed []string) {
	if len(claimed) > 0 {
		_, _ = d.eachKey(context.WithoutCancel(ctx), dropScript, claimed, d.claim, "0")
	}
}

// CompleteBatch implements dedup.BatchDeduplicator: every key is
// remembered for the TTL, with one plain SET each (cheaper for Redis than
// a SET called from a script) in one pipeline, overwriting its claim.
// Completing is idempotent: a pipeline cut short fails, and the consumer
// asks again before it commits any offset past the keys.
func (d *Deduplicator) CompleteBatch(ctx context.Context, keys []string) error {
	sets := make([]*redis.StatusCmd, len(keys))
	err := d.pipelined(ctx, func(p redis.Pipeliner) {
		for i, k := range keys {
			sets[i] = p.Set(ctx, d.Key(k), remembered, d.opts.TTL)
		}
	})
	for _, c := range sets {
		err = cmp.Or(err, c.Err())
	}
	if err != nil {
		return d.fail("complete", err)
	}
	return nil
}

// ReleaseBatch implements dedup.BatchDeduplicator: this incarnation's
// claims on keys are dropped, one script call per key in one pipeline.
func (d *Deduplicator) ReleaseBatch(ctx context.Context, keys []string) error {
	if _, err := d.eachKey(ctx, dropScript, keys, d.claim, "0"); err != nil {
		return d.fail("release", err)
	}
	return nil
}

// Lease implements dedup.BatchDeduplicator: Config.Lease.
func (d *Deduplicator) Lease() time.Duration { return d.opts.Lease }

// eachKey runs script once for each key, by digest, in one pipeline; the
// keys whose node did not know the script (a restarted Redis, a cluster
// node not asked before) get it sent whole in a second pipeline, which
// that node then keeps. cmds[i] answers keys[i]; err is the first failure.
func (d *Deduplicator) eachKey(ctx context.Context, script *redis.Script, keys []string, args ...any) (cmds []*redis.Cmd, err error) {
	cmds = make([]*redis.Cmd, len(keys))
	err = d.pipelined(ctx, func(p redis.Pipeliner) {
		for i, k := range keys {
			cmds[i] = script.EvalSha(ctx, p, []string{d.Key(k)}, args...)
		}
	})
	var missing []int
	for i, c := range cmds {
		if isNoScript(c.Err()) {
			missing = append(missing, i)
		}
	}
	if len(missing) > 0 {
		err = cmp.Or(err, d.pipelined(ctx, func(p redis.Pipeliner) {
			for _, i := range missing {
				cmds[i] = script.Eval(ctx, p, []string{d.Key(keys[i])}, args...)
			}
		}))
	}
	for _, c := range cmds {
		err = cmp.Or(err, c.Err())
	}
	return cmds, err
}

// pipelined sends the commands fn queues in one pipeline (one per node of
// a cluster). Each command holds its own answer or error; the error
// returned is a failure of the pipeline that no command holds.
func (d *Deduplicator) pipelined(ctx context.Context, fn func(redis.Pipeliner)) error {
	p := d.rdb.Pipeline()
	fn(p)
	cmds, err := p.Exec(ctx)
	if err == nil || errors.Is(err, redis.Nil) {
		return nil
	}
	for _, c := range cmds {
		if c.Err() == err {
			return nil // a command's own answer, read by the caller
		}
	}
	return err
}

// isNoScript reports a server that did not know a script's digest.
func isNoScript(err error) bool {
	var reply redis.Error
	return errors.As(err, &reply) && strings.HasPrefix(reply.Error(), "NOSCRIPT")
}

// Error is a failed call to Redis.
type Error struct {
	Op        string // claim, complete, forget or release
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
