package memory

import (
	"bytes"

	"github.com/lasergo/laser/wire"
)

// boundedSet is a set that, past its limit, forgets its oldest key, so a
// flood of keys holds at most limit of them; limit 0 means no bound.
type boundedSet[K comparable] struct {
	limit int
	keys  map[K]struct{}
	ring  []K
	head  int
}

func newBoundedSet[K comparable](limit int) boundedSet[K] {
	return boundedSet[K]{limit: limit, keys: make(map[K]struct{})}
}

func (s *boundedSet[K]) has(k K) bool {
	_, ok := s.keys[k]
	return ok
}

// add inserts k, reporting whether it was absent, and evicts the oldest
// key when the set is full: the evicted key and whether there was one.
func (s *boundedSet[K]) add(k K) (added bool, evicted K, didEvict bool) {
	if _, ok := s.keys[k]; ok {
		return false, evicted, false
	}
	s.keys[k] = struct{}{}
	switch {
	case s.limit <= 0:
	case len(s.ring) < s.limit:
		s.ring = append(s.ring, k)
	default:
		evicted, didEvict = s.ring[s.head], true
		delete(s.keys, evicted)
		s.ring[s.head] = k
		s.head = (s.head + 1) % s.limit
	}
	return true, evicted, didEvict
}

// writerWindow is how many of one writer's newest record ids the replay
// marks hold; see replayMarks.
const writerWindow = 4096

// replayMarks refuse a signed record folded before, per writer (a verified
// principal, which no sender can mint, so the writers are bounded by the
// enrolled keys): each writer's newest record ids are held in a bounded
// window, and its high-water mark is the newest id the window has let go.
// A record whose id is in the window, or at or below the mark, is a replay
// (or a stale copy) and is refused, even when its item has long left the
// projection. A writer mints rising ids (see writer.nextID), and the fold
// reads the topic in broker-time order, so the window only has to absorb
// the little reordering of concurrent publishes and of replicas sharing a
// key.
type replayMarks struct {
	window  int
	writers map[string]*writerMark
}

type writerMark struct {
	recent boundedSet[wire.ID]
	mark   wire.ID
}

func newReplayMarks(window int) replayMarks {
	return replayMarks{window: window, writers: make(map[string]*writerMark)}
}

// admit reports whether writer's record id is new, and remembers it.
func (m *replayMarks) admit(writer string, id wire.ID) bool {
	w, ok := m.writers[writer]
	if !ok {
		w = &writerMark{recent: newBoundedSet[wire.ID](m.window)}
		m.writers[writer] = w
	}
	if bytes.Compare(id[:], w.mark[:]) <= 0 {
		return false
	}
	added, evicted, didEvict := w.recent.add(id)
	if didEvict && bytes.Compare(evicted[:], w.mark[:]) > 0 {
		w.mark = evicted
	}
	return added
}
