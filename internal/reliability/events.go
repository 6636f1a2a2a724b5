package reliability

import (
	"bufio"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"
)

// Event kinds the crash worker records, one line "<kind> <key>" each.
const (
	// EventApplied: the handler applied a fresh effect.
	EventApplied = "applied"
	// EventDuplicate: a redelivered message found its effect already
	// applied; the store suppressed the duplicate.
	EventDuplicate = "duplicate"
	// EventDedup: the consumer's dedup window dropped a repeat before the
	// handler ran.
	EventDedup = "dedup"
	// EventPoison: the handler refused a poison message (rejected or failing).
	EventPoison = "poison"
	// EventStart: a worker process started; the key is its pid.
	EventStart = "start"
	// EventOutOfOrder: a command's effect was applied before the effect of
	// the previous command of its conversation (HeaderAfter).
	EventOutOfOrder = "out-of-order"
)

// EventLog appends events to a file shared by every incarnation of the
// crash worker. Each event is one write(2) of one short line with O_APPEND,
// so a SIGKILL never leaves half a line and incarnations never interleave
// within a line.
type EventLog struct {
	f *os.File
}

// OpenEventLog opens (creating when missing) the event log at path.
func OpenEventLog(path string) (*EventLog, error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		return nil, fmt.Errorf("open event log: %w", err)
	}
	return &EventLog{f: f}, nil
}

// Record appends one event.
func (l *EventLog) Record(kind, key string) error {
	if strings.ContainsAny(kind+key, " \n") {
		return fmt.Errorf("record event: kind %q or key %q holds a space or newline", kind, key)
	}
	if _, err := l.f.WriteString(kind + " " + key + "\n"); err != nil {
		return fmt.Errorf("record event: %w", err)
	}
	return nil
}

// Close closes the log.
func (l *EventLog) Close() error { return l.f.Close() }

// EventCounts tallies an event log: kind to number of events, and kind to
// number of events per key. A missing log counts nothing.
type EventCounts struct {
	Total map[string]int
	ByKey map[string]map[string]int
}

// ReadEvents tallies the event log at path.
func ReadEvents(path string) (EventCounts, error) {
	c := EventCounts{Total: map[string]int{}, ByKey: map[string]map[string]int{}}
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return c, nil
	}
	if err != nil {
		return c, fmt.Errorf("read events: %w", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for line := 1; sc.Scan(); line++ {
		kind, key, ok := strings.Cut(sc.Text(), " ")
		if !ok || kind == "" || key == "" {
			return c, fmt.Errorf("read events: line %d is not \"<kind> <key>\": %q", line, sc.Text())
		}
		c.Total[kind]++
		if c.ByKey[kind] == nil {
			c.ByKey[kind] = map[string]int{}
		}
		c.ByKey[kind][key]++
	}
	if err := sc.Err(); err != nil {
		return c, fmt.Errorf("read events: %w", err)
	}
	return c, nil
}
