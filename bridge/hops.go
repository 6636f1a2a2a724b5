// Package bridge holds what every protocol bridge (MCP, A2A, AG-UI) shares:
// the loop guard over the bridge_hops metadata path, a chunk-stream writer
// that works outside a handler, and the envelope publishing both need. The
// bridges themselves live in the packages below it, so their protocol
// libraries stay out of the runtime.
package bridge

import (
	"errors"
	"fmt"
	"slices"

	"github.com/lasergo/laser/runtime"
	"github.com/lasergo/laser/wire"
)

// ErrLoop is matched (errors.Is) by the error a bridge returns when a
// message already passed through it: forwarding it again would loop.
var ErrLoop = errors.New("bridge loop")

// ErrBadHops is matched by the error for a bridge_hops value that is not a
// list of non-empty strings.
var ErrBadHops = errors.New("bridge: invalid bridge_hops")

// LoopError says which bridge refused a message and the path it came by.
type LoopError struct {
	Bridge string
	Hops   []string
}

func (e *LoopError) Error() string {
	return fmt.Sprintf("bridge loop: %q is already on the path %v", e.Bridge, e.Hops)
}

// Is makes errors.Is(err, ErrLoop) hold.
func (e *LoopError) Is(target error) bool { return target == ErrLoop }

// Enter returns the path a message takes on after bridge id forwards it:
// previous with id appended. A path already holding id is refused with a
// *LoopError, an empty id with ErrBadHops; previous is never modified.
func Enter(id string, previous []string) ([]string, error) {
	if id == "" {
		return nil, fmt.Errorf("%w: empty bridge id", ErrBadHops)
	}
	if slices.Contains(previous, id) {
		return nil, &LoopError{Bridge: id, Hops: slices.Clone(previous)}
	}
	return append(slices.Clip(previous), id), nil
}

// Hops reads the bridge_hops path of md: nil when absent, ErrBadHops when
// the value is not a list of non-empty strings.
func Hops(md wire.Metadata) ([]string, error) {
	if !md.Has(wire.MetaBridgeHops) {
		return nil, nil
	}
	items, ok := md.Get(wire.MetaBridgeHops).AsList()
	if !ok {
		return nil, fmt.Errorf("%w: %s is not a list", ErrBadHops, md.Get(wire.MetaBridgeHops))
	}
	hops := make([]string, 0, len(items))
	for i, it := range items {
		s, ok := it.AsStr()
		if !ok || s == "" {
			return nil, fmt.Errorf("%w: entry %d is %s, not a bridge id", ErrBadHops, i, it)
		}
		hops = append(hops, s)
	}
	return hops, nil
}

// HopsValue is hops as the bridge_hops metadata value: a list of strings.
func HopsValue(hops []string) wire.Value {
	items := make([]wire.Value, len(hops))
	for i, h := range hops {
		items[i] = wire.StrValue(h)
	}
	return wire.ListValue(items...)
}

// WithHops is the send option carrying hops as the envelope's bridge_hops.
func WithHops(hops []string) runtime.Option {
	return runtime.WithMetadata(wire.MetaBridgeHops, HopsValue(hops))
}

// EnterMessage is Enter for a message read from the log: the path is the
// message's bridge_hops (a plain message has none).
func EnterMessage(id string, m *runtime.Message) ([]string, error) {
	var previous []string
	if m.Envelope != nil {
		hops, err := Hops(m.Envelope.Metadata)
		if err != nil {
			return nil, err
		}
		previous = hops
	}
	return Enter(id, previous)
}

// HopsFromJSON reads a bridge_hops path carried in a foreign protocol's
// metadata (MCP _meta, A2A message metadata) as decoded JSON: nil when v is
// nil, ErrBadHops unless v is a list of non-empty strings.
func HopsFromJSON(v any) ([]string, error) {
	if v == nil {
		return nil, nil
	}
	items, ok := v.([]any)
	if !ok {
		if ss, ok := v.([]string); ok {
			items = make([]any, len(ss))
			for i, s := range ss {
				items[i] = s
			}
		} else {
			return nil, fmt.Errorf("%w: %T is not a list", ErrBadHops, v)
		}
	}
	hops := make([]string, 0, len(items))
	for i, it := range items {
		s, ok := it.(string)
		if !ok || s == "" {
			return nil, fmt.Errorf("%w: entry %d (%v) is not a bridge id", ErrBadHops, i, it)
		}
		hops = append(hops, s)
	}
	return hops, nil
}
