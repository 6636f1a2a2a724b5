package memory

import "github.com/lasergo/laser/wire"

// FNV-1a 64-bit parameters; the content id is the reference's cross-SDK hash.
const (
	fnvOffset = 0xcbf29ce484222325
	fnvPrime  = 0x00000100000001b3
)

// ContentID is the reference's content-addressed item id: the same stream,
// agent, kind and body always give the same id, so a deduplicated remember
// of one fact stores one item whichever SDK wrote it. The owner is the
// durable scope (stream and agent), never the conversation: the same fact
// remembered in two conversations is one item.
func ContentID(stream, agent string, kind Kind, body []byte) wire.ID {
	segments := [][]byte{[]byte(stream), {0}, []byte(agent), {0}, {kind.code()}, body}
	return wire.IDFromUint128(fnv1a(0x4d, segments), fnv1a(0xc7, segments))
}

// fnv1a hashes the salt byte, then every segment's bytes in order.
func fnv1a(salt byte, segments [][]byte) uint64 {
	h := uint64(fnvOffset)
	h = (h ^ uint64(salt)) * fnvPrime
	for _, s := range segments {
		for _, c := range s {
			h = (h ^ uint64(c)) * fnvPrime
		}
	}
	return h
}
