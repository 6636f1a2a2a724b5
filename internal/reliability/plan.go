package reliability

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"time"

	"github.com/lasergo/laser/dedup"
	"github.com/lasergo/laser/runtime"
	"github.com/lasergo/laser/wire"
)

// Kind says what a planned command is and so how it must end.
type Kind uint8

// Kinds of planned commands.
const (
	// Normal commands are handled: their effect is applied exactly once.
	Normal Kind = iota
	// Rejected commands are refused by the handler at once: dead-lettered
	// as rejected.
	Rejected
	// Failing commands fail every attempt: dead-lettered as retry_exhausted.
	Failing
	// Undecodable records do not decode: dead-lettered as decode_failed.
	Undecodable
)

var kindNames = [...]string{"normal", "rejected", "failing", "undecodable"}

// String names the kind.
func (k Kind) String() string {
	if int(k) < len(kindNames) {
		return kindNames[k]
	}
	return fmt.Sprintf("kind(%d)", uint8(k))
}

// Reason is the dead-letter reason a poison kind must end with; ok is false
// for Normal.
func (k Kind) Reason() (wire.DeadLetterReason, bool) {
	switch k {
	case Rejected:
		return wire.ReasonRejected, true
	case Failing:
		return wire.ReasonRetryExhausted, true
	case Undecodable:
		return wire.ReasonDecodeFailed, true
	}
	return 0, false
}

// Body prefixes the effect handler treats as poison.
const (
	RejectPrefix = "reject:"
	FailPrefix   = "fail:"
)

// ProducerAgent is the agent id planned commands are sent from.
const ProducerAgent = "reliability-producer"

// Command is one planned record.
type Command struct {
	Index  int
	Kind   Kind
	Key    string // idempotency key, also the effect's key
	Record runtime.Outgoing
}

// Plan is the crash test's workload: numbered commands, a few of them
// poison, drawn from a seeded generator so a failing run can be replayed.
type Plan struct {
	Seed     uint64
	Commands []Command
}

// NewPlan draws n commands from seed: about 2% rejected, 1% failing and 2%
// undecodable, the rest normal, spread over many conversations.
func NewPlan(seed uint64, n int) (*Plan, error) {
	rng := rand.New(rand.NewPCG(seed, 0x5eed))
	p := &Plan{Seed: seed, Commands: make([]Command, n)}
	for i := range p.Commands {
		kind := Normal
		switch r := rng.IntN(100); {
		case r < 2:
			kind = Rejected
		case r < 3:
			kind = Failing
		case r < 5:
			kind = Undecodable
		}
		c, err := NewCommand(seed, i, kind)
		if err != nil {
			return nil, err
		}
		p.Commands[i] = c
	}
	return p, nil
}

// NewCommand builds command i of kind for the plan of seed: a plain
// message from ProducerAgent in conversation (seed, i), keyed
// "cmd-<i>", its body the key (behind a prefix for poison kinds).
// Undecodable commands alternate between a malformed fence header (even i)
// and an AGDX record whose payload is not CBOR (odd i).
func NewCommand(seed uint64, i int, kind Kind) (Command, error) {
	key := fmt.Sprintf("cmd-%07d", i)
	prov := wire.Provenance{
		Conversation:   wire.IDFromUint128(seed, uint64(i)),
		Agent:          ProducerAgent,
		IdempotencyKey: key,
	}
	body := key
	switch kind {
	case Rejected:
		body = RejectPrefix + key
	case Failing:
		body = FailPrefix + key
	}
	headers, err := prov.Headers()
	if err != nil {
		return Command{}, fmt.Errorf("plan command %d: %w", i, err)
	}
	rec := runtime.Outgoing{Key: prov.PartitionKey(), Headers: headers, Payload: []byte(body)}
	if kind == Undecodable {
		if i%2 == 0 {
			rec.Headers = append(rec.Headers, wire.Header{Key: wire.HeaderFence, Value: wire.StringValue("not-a-number")})
			rec.Payload = []byte("undecodable fence " + key)
		} else {
			rec.Headers = wire.Headers{{Key: wire.HeaderAgentVersion, Value: wire.Uint32Value(wire.AgentOpVersion)}}
			rec.Payload = append([]byte{0xff, 0x00}, key...)
		}
	}
	return Command{Index: i, Kind: kind, Key: key, Record: rec}, nil
}

// HeaderAfter is the header of a conversation plan's normal command naming
// the previous normal command of its conversation: the effect handler
// checks that its effect is already applied, so effects within a
// conversation follow log order.
const HeaderAfter = "rel.after"

// NewConversationPlan is NewPlan with the commands spread round-robin over
// conversations (seed, 0..conversations-1) instead of one conversation
// each, so a conversation holds many commands, and each normal command
// names the previous normal one of its conversation in HeaderAfter.
func NewConversationPlan(seed uint64, n, conversations int) (*Plan, error) {
	p, err := NewPlan(seed, n)
	if err != nil {
		return nil, err
	}
	last := make(map[int]string, conversations)
	for i := range p.Commands {
		cmd := &p.Commands[i]
		conv := i % conversations
		if cmd.Kind == Undecodable {
			continue // no conversation to speak of: it never decodes
		}
		prov := wire.Provenance{Conversation: wire.IDFromUint128(seed, uint64(conv)), Agent: ProducerAgent, IdempotencyKey: cmd.Key}
		headers, err := prov.Headers()
		if err != nil {
			return nil, fmt.Errorf("plan command %d: %w", i, err)
		}
		if cmd.Kind == Normal {
			if prev, ok := last[conv]; ok {
				headers = append(headers, wire.Header{Key: HeaderAfter, Value: wire.StringValue(prev)})
			}
			last[conv] = cmd.Key
		}
		cmd.Record.Key, cmd.Record.Headers = prov.PartitionKey(), headers
	}
	return p, nil
}

// Count returns how many commands are of kind k.
func (p *Plan) Count(k Kind) int {
	n := 0
	for _, c := range p.Commands {
		if c.Kind == k {
			n++
		}
	}
	return n
}

// Poison returns how many commands must be dead-lettered.
func (p *Plan) Poison() int { return len(p.Commands) - p.Count(Normal) }

// EffectHandler is the crash worker's handler: it applies a normal
// command's effect to the store under its idempotency key (an effect already
// there is the idempotent success of a redelivery), refuses rejected
// commands and fails failing ones, and records what it did in the event log.
type EffectHandler struct {
	Store  *EffectStore
	Events *EventLog
	// OnEffect, when set, hears of every effect attempt after it is recorded.
	OnEffect func(key string, applied bool)
}

// Handle implements runtime.Handler.
func (h *EffectHandler) Handle(c *runtime.Ctx) error {
	m := c.Message()
	key := m.Provenance.IdempotencyKey
	body := string(m.Body())
	switch {
	case strings.HasPrefix(body, RejectPrefix):
		if err := h.Events.Record(EventPoison, key); err != nil {
			return err
		}
		return runtime.Reject(fmt.Errorf("poison command %s", key))
	case strings.HasPrefix(body, FailPrefix):
		if err := h.Events.Record(EventPoison, key); err != nil {
			return err
		}
		return fmt.Errorf("command %s fails on every attempt", key)
	}
	if v, ok := m.Headers.Get(HeaderAfter); ok {
		// Per-conversation order: the previous command's effect comes first.
		prev, err := v.AsString()
		if err != nil {
			return runtime.Reject(fmt.Errorf("header %s: %v", HeaderAfter, err))
		}
		if !h.Store.Has(prev) {
			if err := h.Events.Record(EventOutOfOrder, key); err != nil {
				return err
			}
		}
	}
	applied, err := h.Store.Apply(key, m.Payload)
	if err != nil {
		return err
	}
	kind := EventApplied
	if !applied {
		kind = EventDuplicate
	}
	if err := h.Events.Record(kind, key); err != nil {
		return err
	}
	if h.OnEffect != nil {
		h.OnEffect(key, applied)
	}
	return nil
}

// CountingDedup wraps a Deduplicator and records every repeat it drops in
// the event log.
type CountingDedup struct {
	Inner  dedup.Deduplicator
	Events *EventLog
}

// Counting wraps inner in a CountingDedup, or in a CountingBatchDedup when
// inner claims in batches, so the wrapper hides nothing the consumer
// detects (the batch path is the one a Redis deduplicator runs).
func Counting(inner dedup.Deduplicator, events *EventLog) dedup.Deduplicator {
	c := &CountingDedup{Inner: inner, Events: events}
	if b, ok := inner.(dedup.BatchDeduplicator); ok {
		return &CountingBatchDedup{CountingDedup: c, batch: b}
	}
	return c
}

// Observe implements dedup.Deduplicator.
func (d *CountingDedup) Observe(ctx context.Context, key string) (bool, error) {
	fresh, err := d.Inner.Observe(ctx, key)
	if err == nil && !fresh {
		if err := d.dropped(key); err != nil {
			return false, err
		}
	}
	return fresh, err
}

// dropped logs a repeat; the scoped key holds U+001F, and only the
// idempotency key is logged.
func (d *CountingDedup) dropped(key string) error {
	_, idem, found := strings.Cut(key, "\x1f")
	if !found {
		idem = key
	}
	return d.Events.Record(EventDedup, idem)
}

// CountingBatchDedup is a CountingDedup over a dedup.BatchDeduplicator.
type CountingBatchDedup struct {
	*CountingDedup
	batch dedup.BatchDeduplicator
}

// ClaimBatch implements dedup.BatchDeduplicator, logging every key found
// completed before.
func (d *CountingBatchDedup) ClaimBatch(ctx context.Context, keys []string, states []dedup.KeyState) error {
	if err := d.batch.ClaimBatch(ctx, keys, states); err != nil {
		return err
	}
	for i, st := range states {
		if st == dedup.KeyDuplicate {
			if err := d.dropped(keys[i]); err != nil {
				return err
			}
		}
	}
	return nil
}

// CompleteBatch implements dedup.BatchDeduplicator.
func (d *CountingBatchDedup) CompleteBatch(ctx context.Context, keys []string) error {
	return d.batch.CompleteBatch(ctx, keys)
}

// ReleaseBatch implements dedup.BatchDeduplicator.
func (d *CountingBatchDedup) ReleaseBatch(ctx context.Context, keys []string) error {
	return d.batch.ReleaseBatch(ctx, keys)
}

// Lease implements dedup.BatchDeduplicator.
func (d *CountingBatchDedup) Lease() time.Duration { return d.batch.Lease() }

// Forget implements dedup.Forgetter when the inner deduplicator does, so
// wrapping it does not change what the consumer can take back.
func (d *CountingDedup) Forget(ctx context.Context, key string) error {
	if f, ok := d.Inner.(dedup.Forgetter); ok {
		return f.Forget(ctx, key)
	}
	return nil
}

// Complete implements dedup.Completer when the inner deduplicator does.
func (d *CountingDedup) Complete(ctx context.Context, key string) error {
	if k, ok := d.Inner.(dedup.Completer); ok {
		return k.Complete(ctx, key)
	}
	return nil
}
