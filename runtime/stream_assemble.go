package runtime

import (
	"hash/maphash"

	"github.com/lasergo/laser/wire"
)

// chunkAssembler puts the chunks of one stream back in sequence order. It
// binds to the channel of the first record it sees (a responder that
// restarts after a crash opens a new channel, which it ignores), holds at
// most limit chunks that arrived early, and reports every breach of the
// chunk rules as an *Error (streamFailure).
//
// A copy of a chunk it already has (a producer's retry after an ambiguous
// publish failure, a replayed signed chunk) is dropped when it is identical:
// same kind, same terminal flag, same body. It remembers an 8-byte digest
// of every chunk yielded so far to tell, which is what a stream costs beyond
// its reorder buffer. The first terminal stands: a second one at another
// sequence is a breach, never a replacement.
type chunkAssembler struct {
	limit   int
	channel wire.ID
	bound   bool
	next    uint64            // the sequence to yield next
	pending map[uint64][]byte // early arrivals by sequence
	seed    maphash.Seed
	yielded []uint64 // digest of each chunk yielded, by sequence

	terminal       bool
	terminalSeq    uint64
	terminalDigest uint64
	terminalBody   []byte
	remote         error // the responder's error that ends the stream
	finished       bool
}

func newChunkAssembler(limit int) *chunkAssembler {
	return &chunkAssembler{limit: limit, pending: make(map[uint64][]byte), seed: maphash.MakeSeed()}
}

// yieldAdded adds m to a and yields the bodies it completes, in order,
// then m's failure if it has one; it reports whether the stream goes on
// (false once it finished or failed, or yield asked to stop).
func (a *chunkAssembler) yieldAdded(m *Message, yield func([]byte, error) bool) bool {
	ready, finished, err := a.add(m)
	for _, b := range ready {
		if !yield(b, nil) {
			return false
		}
	}
	if err != nil {
		yield(nil, err)
		return false
	}
	return !finished
}

func (a *chunkAssembler) fail(fault error, seq uint64) error {
	return streamFailure(a.channel, seq, fault)
}

// timeout is the error of a stream that went quiet: a gap when the terminal
// is known, a missing terminal otherwise.
func (a *chunkAssembler) timeout() error {
	if a.terminal {
		return a.fail(errStreamGap, a.next)
	}
	return a.fail(errStreamTimeout, a.next)
}

// digest identifies a chunk's contents: its kind, whether it is the
// terminal, and its body. The seed is random per stream, so nobody can
// craft a different chunk with the digest of a real one.
func (a *chunkAssembler) digest(env *wire.Envelope) uint64 {
	var h maphash.Hash
	h.SetSeed(a.seed)
	_, _ = h.WriteString(string(env.Kind))
	if env.Last {
		_ = h.WriteByte(1)
	} else {
		_ = h.WriteByte(0)
	}
	_, _ = h.Write(env.Body)
	return h.Sum64()
}

// dataDigest is the digest of a data chunk with body b.
func (a *chunkAssembler) dataDigest(b []byte) uint64 {
	return a.digest(&wire.Envelope{Kind: wire.KindChunk, Body: b})
}

// add takes one stream record and returns the bodies now ready in order,
// whether the stream is complete, and the error that ends it, if any.
func (a *chunkAssembler) add(m *Message) (ready [][]byte, finished bool, err error) {
	env := m.Envelope
	if !a.bound {
		a.channel, a.bound = *env.Channel, true
	} else if *env.Channel != a.channel {
		return nil, a.finished, nil
	}
	if env.Sequence == nil { // an error on the channel without a place in it
		return nil, true, remoteError(m)
	}
	seq := *env.Sequence
	isTerminal := env.Last || env.Kind == wire.KindError
	// A sequence the stream already has: an identical copy is dropped, a
	// different one is a breach.
	var have uint64
	known := true
	switch held, early := a.pending[seq]; {
	case seq < a.next:
		have = a.yielded[seq]
	case early:
		have = a.dataDigest(held)
	case a.terminal && seq == a.terminalSeq:
		have = a.terminalDigest
	default:
		known = false
	}
	if known {
		if a.digest(env) == have {
			return nil, a.finished, nil
		}
		return nil, true, a.fail(errStreamDuplicate, seq)
	}
	switch {
	case a.finished || (a.terminal && seq > a.terminalSeq):
		return nil, true, a.fail(errStreamAfterTerminal, seq)
	case isTerminal && a.terminal:
		return nil, true, a.fail(errStreamTwoTerminals, seq)
	}
	if isTerminal {
		for early := range a.pending {
			if early > seq {
				return nil, true, a.fail(errStreamAfterTerminal, early)
			}
		}
		a.terminal, a.terminalSeq, a.terminalDigest = true, seq, a.digest(env)
		if env.Kind == wire.KindError {
			a.remote = remoteError(m)
		} else {
			a.terminalBody = env.Body
		}
	} else {
		if len(a.pending) >= a.limit {
			return nil, true, a.fail(errStreamOverflow, seq)
		}
		a.pending[seq] = env.Body
	}
	for {
		b, ok := a.pending[a.next]
		if !ok {
			break
		}
		delete(a.pending, a.next)
		ready = append(ready, b)
		a.yielded = append(a.yielded, a.dataDigest(b))
		a.next++
	}
	if a.terminal && a.next == a.terminalSeq {
		a.finished = true
		if a.remote != nil {
			return ready, true, a.remote
		}
		if len(a.terminalBody) > 0 {
			ready = append(ready, a.terminalBody)
		}
		return ready, true, nil
	}
	return ready, false, nil
}
