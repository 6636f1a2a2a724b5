package wire

import (
	"cmp"
	"fmt"
	"slices"
	"unicode/utf8"
)

// MetadataEntry is one metadata annotation.
type MetadataEntry struct {
	Key   string
	Value Value
}

// Metadata is the envelope's open map of annotations, held as a list of
// entries with distinct keys: nil means absent, and an empty non-nil list is
// encoded as an empty map. Keys encode in bytewise order whatever order the
// list holds them in; decoded metadata, and metadata built with Set, is kept
// in that order. It is a list rather than a Go map because an envelope
// carries a handful of entries, and a map cost every decoded envelope about
// 500 bytes and two allocations.
//
// Like a map, a Metadata copied by value (with the Envelope holding it)
// shares its entries: Set on an existing key changes both; a new key or a
// Delete leaves the other copy as it was. Clone before changing a copy
// that must stay apart.
type Metadata []MetadataEntry

// Metadata keys pinned by the spec.
const (
	MetaRole               = "role"
	MetaBridgeHops         = "bridge_hops"
	MetaRun                = "run"
	MetaOnBehalfOf         = "on_behalf_of"
	MetaPurpose            = "purpose"
	MetaDataClassification = "data_classification"
	MetaTaskContext        = "task_context"
	MetaSessionIntent      = "session_intent"
	MetaFence              = "agdx.fence"
)

// Metadata caps checked by Validate.
const (
	MaxMetadataEntries    = 32
	MaxMetadataKeyBytes   = 256
	MaxMetadataValueSize  = 1024
	MaxMetadataTotalBytes = 8192
)

// Get returns the value under key, or Null when there is none (Has tells a
// Null entry from a missing one), so it chains like a map index:
// m.Get(MetaRun).AsStr().
func (m Metadata) Get(key string) Value {
	v, _ := m.lookup(key)
	return v
}

// Has reports whether m holds an entry under key.
func (m Metadata) Has(key string) bool {
	_, ok := m.lookup(key)
	return ok
}

func (m Metadata) lookup(key string) (Value, bool) {
	for i := range m {
		if m[i].Key == key {
			return m[i].Value, true
		}
	}
	return Value{}, false
}

// Set puts v under key, replacing the value already there; a new key goes
// where bytewise order puts it in a sorted list, so Set keeps a sorted list
// sorted.
func (m *Metadata) Set(key string, v Value) {
	for i := range *m {
		if (*m)[i].Key == key {
			(*m)[i].Value = v
			return
		}
	}
	i, _ := slices.BinarySearchFunc(*m, key, func(e MetadataEntry, k string) int { return cmp.Compare(e.Key, k) })
	// Into a new array (Clip leaves no room to insert in place), so a copy
	// of m made before keeps its entries where they were.
	*m = slices.Insert(slices.Clip(*m), i, MetadataEntry{Key: key, Value: v})
}

// Delete removes the entry under key, if any. The list left is a new one,
// so a copy of m taken before (an Envelope copied by value) keeps all its
// entries.
func (m *Metadata) Delete(key string) {
	i := slices.IndexFunc(*m, func(e MetadataEntry) bool { return e.Key == key })
	if i < 0 {
		return
	}
	// Never nil: an emptied list still encodes as an empty map.
	out := make(Metadata, 0, len(*m)-1)
	*m = append(append(out, (*m)[:i]...), (*m)[i+1:]...)
}

// Clone returns a deep copy (nil stays nil).
func (m Metadata) Clone() Metadata {
	if m == nil {
		return nil
	}
	out := make(Metadata, len(m))
	for i, e := range m {
		out[i] = MetadataEntry{Key: e.Key, Value: e.Value.clone()}
	}
	return out
}

// Equal reports whether both hold equal values under the same keys, in any
// order; nil and empty differ, as they do on the wire.
func (m Metadata) Equal(o Metadata) bool {
	if (m == nil) != (o == nil) || len(m) != len(o) {
		return false
	}
	// Compared in key order, one pass over both (copies sorted when a list
	// was built out of order); lists that hold a key twice, which nothing
	// encodes, compare equal only when they list the same entries in the
	// same order under each key.
	m, o = m.inKeyOrder(), o.inKeyOrder()
	for i := range m {
		if m[i].Key != o[i].Key || !m[i].Value.Equal(o[i].Value) {
			return false
		}
	}
	return true
}

// inKeyOrder returns m when it is sorted by key, else a sorted copy.
func (m Metadata) inKeyOrder() Metadata {
	if slices.IsSortedFunc(m, compareEntries) {
		return m
	}
	m = slices.Clone(m)
	slices.SortStableFunc(m, compareEntries)
	return m
}

func compareEntries(a, b MetadataEntry) int { return cmp.Compare(a.Key, b.Key) }

// sorted returns the entries in bytewise key order: m itself when it is
// already sorted, as decoded and Set-built lists are, else a sorted copy. A
// key that appears twice is an error.
func (m Metadata) sorted() (Metadata, error) {
	m = m.inKeyOrder()
	return m, m.distinct()
}

// distinct reports a key that a sorted list holds twice.
func (m Metadata) distinct() error {
	for i := 1; i < len(m); i++ {
		if m[i].Key == m[i-1].Key {
			return fmt.Errorf("%w %q in metadata", ErrDuplicateKey, m[i].Key)
		}
	}
	return nil
}

func (m Metadata) appendCBOR(b []byte) ([]byte, error) {
	sorted, err := m.sorted()
	if err != nil {
		return b, err
	}
	b = appendHead(b, majorMap, uint64(len(sorted)))
	for _, e := range sorted {
		if !utf8.ValidString(e.Key) {
			return b, fmt.Errorf("%w: key %q is not valid UTF-8", errBadValue, e.Key)
		}
		b = appendText(b, e.Key)
		if b, err = e.Value.appendCBOR(b); err != nil {
			return b, fmt.Errorf("key %q: %w", e.Key, err)
		}
	}
	return b, nil
}

// errDuplicateMetadataKey is the decoder's refusal of a metadata key listed
// twice, which the reference reads as its last value (docs/wire.md).
var errDuplicateMetadataKey = fmt.Errorf("%w in metadata", ErrDuplicateKey)

// MarshalCBOR encodes the entries as a map with keys in bytewise order (nil
// encodes as an empty map; omit the field to mean absent). A key that
// appears twice is an error.
func (m Metadata) MarshalCBOR() ([]byte, error) { return m.appendCBOR(nil) }

// UnmarshalCBOR decodes exactly one CBOR map of text keys to values.
func (m *Metadata) UnmarshalCBOR(b []byte) error {
	r := reader{b: b}
	return r.finish("metadata", m.decode(&r, nil))
}

// decode reads a metadata map into room's storage (appending past its
// capacity as needed) and leaves it sorted by key, with no spare capacity,
// so a Set on a copy of the result cannot write into the storage the
// original shares.
func (m *Metadata) decode(r *reader, room Metadata) error {
	n, indef, err := r.container(majorMap)
	if err != nil {
		return err
	}
	out := room[:0]
	if out == nil || !indef && n > uint64(cap(out)) {
		// A nil result would read as absent metadata.
		size := n
		if indef || size > MaxMetadataEntries {
			size = MaxMetadataEntries
		}
		out = make(Metadata, 0, size)
	}
	var seen map[string]struct{} // only for long maps written out of order
	inOrder := true
	for i := uint64(0); r.next(i, n, indef); i++ {
		k, err := r.string()
		if err != nil {
			return fmt.Errorf("metadata key: %w", err)
		}
		// The reference's map would keep the last duplicate; refusing is
		// safer and no canonical producer writes one. Checked as each key
		// arrives, so a flood of duplicates fails at the first: keys in
		// order need one comparison, others a scan, or a set past the cap.
		dup := false
		switch {
		case len(out) == 0:
		case inOrder && k > out[len(out)-1].Key:
		case inOrder && k == out[len(out)-1].Key:
			dup = true
		default:
			inOrder = false
			if len(out) <= MaxMetadataEntries {
				dup = out.Has(k)
				break
			}
			if seen == nil {
				seen = make(map[string]struct{}, len(out))
				for _, e := range out {
					seen[e.Key] = struct{}{}
				}
			}
			_, dup = seen[k]
		}
		if dup {
			return fmt.Errorf("%w %q", errDuplicateMetadataKey, k)
		}
		if seen != nil {
			seen[k] = struct{}{}
		}
		var v Value
		if err := v.decode(r); err != nil {
			return fmt.Errorf("metadata %q: %w", k, err)
		}
		out = append(out, MetadataEntry{Key: k, Value: v})
	}
	r.leave()
	if !inOrder {
		slices.SortFunc(out, compareEntries)
	}
	*m = out[:len(out):len(out)]
	return nil
}
