package iggy

import (
	iggcon "github.com/apache/iggy/foreign/go/contracts"

	"github.com/lasergo/laser/wire"
)

// headerEntries converts headers into the SDK's entries, the reference
// appendHeaderBytes is checked against, as the AGDX Iggy
// binding lays them out: String-kind keys, values of their own kind with
// their little-endian bytes as they are.
func headerEntries(h wire.Headers) ([]iggcon.HeaderEntry, error) {
	if len(h) == 0 {
		return nil, nil
	}
	out := make([]iggcon.HeaderEntry, len(h))
	for i, e := range h {
		if _, err := (wire.Headers{e}).Encode(); err != nil {
			return nil, err
		}
		out[i] = iggcon.HeaderEntry{
			Key:   iggcon.HeaderKey{Kind: iggcon.String, Value: []byte(e.Key)},
			Value: iggcon.HeaderValue{Kind: iggcon.HeaderKind(e.Value.Kind), Value: e.Value.Data},
		}
	}
	return out, nil
}
