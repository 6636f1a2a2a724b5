package runtime

import (
	"time"
)

// minIdleWait is the first wait after an empty poll that followed records;
// further empty polls double it up to PollInterval. A consumer that just
// handled something is likely to get more soon, and one that has been idle
// for a while costs the log one poll per PollInterval.
const minIdleWait = time.Millisecond

// polled is one batch handed from the prefetcher to the handling loop, or
// the poll failure that ended the prefetcher.
type polled struct {
	batch []Incoming
	// decoded holds batch[i] decoded when the prefetcher decoded ahead;
	// nil otherwise.
	decoded []decodedRecord
	err     error
}

// decodedRecord is DecodeRecord's result for one record.
type decodedRecord struct {
	m   *Message
	err error
}

// prefetcher polls on a goroutine of its own, so the next batch is on its
// way from the log while the current one is handled: at most one batch
// waits in the handoff besides the one being handled, so the read-ahead is
// bounded by one PollBatch. The poll-error policy of session.poll applies
// unchanged; the prefetcher stops on the first error it passes on.
type prefetcher struct {
	s *session
	// decode makes the prefetcher decode a batch the handler is not yet
	// waiting for, so decoding runs beside the handling of the previous one.
	decode bool
	slab   messageSlab   // the messages of the batch being decoded ahead
	out    chan polled   // unbuffered: a batch is handed over, never queued
	quit   chan struct{} // closed by the handling loop when it returns
	done   chan struct{} // closed when the goroutine has returned
}

// startPrefetch starts polling for s; the caller must call close when its
// loop returns, whatever the reason.
func (s *session) startPrefetch(decode bool) *prefetcher {
	p := &prefetcher{s: s, decode: decode, out: make(chan polled), quit: make(chan struct{}), done: make(chan struct{})}
	go p.run()
	return p
}

// nextOrWake waits for the next batch; ok is false once the consumer is
// stopping (gracefully or not) and no batch is to be handled any more. It
// returns early, with an empty batch, when wake or wake2 fires (a record or a
// commit failed).
func (p *prefetcher) nextOrWake(wake, wake2 <-chan struct{}) (polled, bool) {
	s := p.s
	if s.stopping() || s.workCtx.Err() != nil {
		return polled{}, false
	}
	select {
	case b, ok := <-p.out:
		return b, ok
	case <-wake:
		return polled{}, true
	case <-wake2:
		return polled{}, true
	case <-s.stop:
	case <-s.workCtx.Done():
	}
	return polled{}, false
}

// close stops the prefetcher and waits until no Poll of it is in flight,
// so the subscription can be left or closed safely. Records it polled and
// never handed over stay uncommitted, to be read again by the partition's
// next owner.
func (p *prefetcher) close() {
	close(p.quit)
	<-p.done
}

func (p *prefetcher) run() {
	defer close(p.done)
	defer close(p.out)
	s := p.s
	var notify ChangeNotifier
	if n, ok := s.sub.(ChangeNotifier); ok {
		notify = n
	}
	idle := minIdleWait
	for {
		select {
		case <-p.quit:
			return
		default:
		}
		if s.stopping() || s.workCtx.Err() != nil {
			return
		}
		var changed <-chan struct{}
		if notify != nil {
			changed = notify.Changed()
		}
		batch, err := s.poll()
		if err != nil {
			select {
			case p.out <- polled{err: err}:
			case <-p.quit:
			}
			return
		}
		if len(batch) == 0 {
			// Nothing ready: wait, longer the longer the log stays quiet.
			p.idleWait(min(idle, s.c.cfg.PollInterval), changed)
			idle = min(idle*2, s.c.cfg.PollInterval)
			continue
		}
		idle = minIdleWait
		next := polled{batch: batch}
		if p.decode {
			// A handler waiting for this batch takes it at once and decodes
			// it itself, so the next poll is not held up; a busy one gets it
			// decoded here while it works.
			select {
			case p.out <- next:
				continue
			default:
			}
			next.decoded = make([]decodedRecord, len(batch))
			p.slab.reset(len(batch))
			for i := range batch {
				next.decoded[i] = s.c.decode(&p.slab, &batch[i])
			}
			p.slab.reset(0)
		}
		select {
		case p.out <- next:
		case <-p.quit:
			return
		case <-s.stop:
			return
		case <-s.workCtx.Done():
			return
		}
	}
}

// idleWait sleeps d of real time after an empty poll, or less when the
// log reports a change or the consumer stops.
func (p *prefetcher) idleWait(d time.Duration, changed <-chan struct{}) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-changed:
	case <-p.quit:
	case <-p.s.stop:
	case <-p.s.workCtx.Done():
	}
}
