package conversation

import (
	"errors"
	"fmt"
	"slices"
	"sync/atomic"

	"github.com/lasergo/laser/runtime"
	"github.com/lasergo/laser/wire"
)

// DefaultMaxBytes is the default byte budget of one assembly: the most
// payload and header bytes it holds at once.
const DefaultMaxBytes = 64 << 20

// ErrOverBudget reports an assembly whose records would hold more than its
// byte budget (Options.MaxBytes): a policy that cannot be applied while
// reading (a PolicyFunc) over a conversation larger than the budget.
var ErrOverBudget = errors.New("conversation: the records exceed the byte budget")

// keeper holds one partition's matching records while it is read, applying
// what of the policy can be applied there: leading ByAgent filters, then a
// LastN or TokenBudget bound. The records a policy selects from the merged
// history are always among those the keepers kept, because a partition's
// share of the newest N (or of a token budget) is its own newest N (or a
// newest run within the budget). Records are kept once per record id, so a
// replayed copy of a turn is not a second turn.
type keeper struct {
	filters []ByAgent
	lastN   int // > 0: keep at most this many
	budget  *TokenBudget
	tokens  int

	got   []entry // oldest first; got[head:] is live
	head  int
	ids   map[wire.ID]int // record id -> kept count (a removed one drops to 0)
	bytes *byteBudget
}

// newKeeper returns the keeper of policy p over a shared budget.
func newKeeper(p Policy, budget *byteBudget) *keeper {
	k := &keeper{ids: make(map[wire.ID]int), bytes: budget}
	policies := []Policy{p}
	if c, ok := p.(Chain); ok {
		policies = c
	}
scan:
	for _, q := range policies {
		switch q := q.(type) {
		case ByAgent:
			k.filters = append(k.filters, q)
			continue
		case LastN:
			k.lastN = int(q)
			if k.lastN <= 0 {
				k.lastN = -1 // keeps nothing
			}
		case TokenBudget:
			k.budget = &q
		}
		break scan // what follows applies to the merged history only
	}
	return k
}

// offer keeps e if the policy may select it, evicting what it no longer can.
func (k *keeper) offer(e entry) error {
	for _, f := range k.filters {
		if s := e.m.Provenance.Agent; s == "" || !slices.Contains(f, s) {
			return nil
		}
	}
	if k.lastN < 0 {
		return nil
	}
	if env := e.m.Envelope; env != nil && env.Record != nil {
		if k.ids[*env.Record] > 0 {
			return nil
		}
		k.ids[*env.Record]++
	}
	if err := k.bytes.take(size(e.m)); err != nil {
		return err
	}
	k.got = append(k.got, e)
	if k.budget != nil {
		k.tokens += k.budget.estimate(e.m)
	}
	for k.live() > 1 && (k.lastN > 0 && k.live() > k.lastN || k.budget != nil && k.tokens > k.budget.Max) {
		k.drop()
	}
	// Compact once half the slice is dropped records.
	if k.head > 32 && k.head*2 > len(k.got) {
		k.got = append(k.got[:0], k.got[k.head:]...)
		k.head = 0
	}
	return nil
}

func (k *keeper) live() int { return len(k.got) - k.head }

// drop evicts the oldest kept record.
func (k *keeper) drop() {
	e := k.got[k.head]
	k.got[k.head] = entry{}
	k.head++
	k.bytes.give(size(e.m))
	if k.budget != nil {
		k.tokens -= k.budget.estimate(e.m)
	}
	if env := e.m.Envelope; env != nil && env.Record != nil {
		if k.ids[*env.Record]--; k.ids[*env.Record] <= 0 {
			delete(k.ids, *env.Record)
		}
	}
}

// kept returns the records kept, oldest first.
func (k *keeper) kept() []entry { return k.got[k.head:] }

func (b *TokenBudget) estimate(m *runtime.Message) int {
	if b.Estimate != nil {
		return b.Estimate(m)
	}
	return EstimateTokens(m)
}

// size is what a kept record charges the byte budget.
func size(m *runtime.Message) int { return len(m.Payload) + m.Headers.Size() }

// byteBudget is the bytes an assembly may hold, shared by its readers.
type byteBudget struct {
	limit int64 // < 0: unbounded
	held  atomic.Int64
}

func (b *byteBudget) take(n int) error {
	if b.limit < 0 {
		return nil
	}
	if held := b.held.Add(int64(n)); held > b.limit {
		b.held.Add(int64(-n))
		return fmt.Errorf("%w: more than %d bytes held", ErrOverBudget, b.limit)
	}
	return nil
}

func (b *byteBudget) give(n int) {
	if b.limit >= 0 {
		b.held.Add(int64(-n))
	}
}
