package runtime

import (
	"github.com/lasergo/laser/wire"
)

// chunkAssembler puts the chunks of one stream back in sequence order. It
// binds to the channel of the first record it sees (a responder that
// restarts after a crash opens a new channel, which it ignores), holds at
// most limit chunks that arrived early, and reports every breach of the
// chunk rules as a *StreamError.
type chunkAssembler struct {
	limit   int
	channel wire.ID
	bound   bool
	next    uint64            // the sequence to yield next
	pending map[uint64][]byte // early arrivals by sequence

	terminal     bool
	terminalSeq  uint64
	terminalBody []byte
	remote       error // the responder's error that ends the stream
	finished     bool
}

func newChunkAssembler(limit int) *chunkAssembler {
	return &chunkAssembler{limit: limit, pending: make(map[uint64][]byte)}
}

func (a *chunkAssembler) fail(sentinel error, seq uint64) error {
	return &StreamError{Channel: a.channel, Sequence: seq, Err: sentinel}
}

// timeout is the error of a stream that went quiet: a gap when the terminal
// is known, a missing terminal otherwise.
func (a *chunkAssembler) timeout() error {
	if a.terminal {
		return a.fail(ErrStreamGap, a.next)
	}
	return a.fail(ErrStreamTimeout, a.next)
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
	if a.finished || (a.terminal && seq > a.terminalSeq) {
		return nil, true, a.fail(ErrStreamAfterTerminal, seq)
	}
	if _, dup := a.pending[seq]; dup || seq < a.next || (a.terminal && seq == a.terminalSeq) {
		return nil, true, a.fail(ErrStreamDuplicate, seq)
	}
	if env.Last || env.Kind == wire.KindError {
		for early := range a.pending {
			if early > seq {
				return nil, true, a.fail(ErrStreamAfterTerminal, early)
			}
		}
		a.terminal, a.terminalSeq = true, seq
		if env.Kind == wire.KindError {
			a.remote = remoteError(m)
		} else {
			a.terminalBody = env.Body
		}
	} else {
		if len(a.pending) >= a.limit {
			return nil, true, a.fail(ErrStreamOverflow, seq)
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
