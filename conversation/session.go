package conversation

import (
	"fmt"

	"github.com/lasergo/laser/clock"
	"github.com/lasergo/laser/wire"
)

// deriveVersion is mixed into every derived id; changing it remaps every
// per-user conversation, so it changes only together with the reference.
const deriveVersion = 1

// Salts of the two hashes whose concatenation is a derived id.
const (
	saltHigh = 0x1d
	saltLow  = 0x9e
)

const (
	fnvOffset64 = 0xcbf29ce484222325
	fnvPrime64  = 0x100000001b3
)

// Derive maps a key (a user id, say) to a conversation id, bit for bit as the
// reference runtime does: two FNV-1a 64-bit hashes over the version byte, a
// salt byte (0x1d for the high half, 0x9e for the low) and the key's bytes,
// concatenated into one 128-bit ULID. The same key always gives the same
// conversation, in every SDK.
func Derive(key string) wire.ID {
	return wire.IDFromUint128(fnv1a(saltHigh, key), fnv1a(saltLow, key))
}

func fnv1a(salt byte, key string) uint64 {
	h := uint64(fnvOffset64)
	h = (h ^ deriveVersion) * fnvPrime64
	h = (h ^ uint64(salt)) * fnvPrime64
	for i := 0; i < len(key); i++ {
		h = (h ^ uint64(key[i])) * fnvPrime64
	}
	return h
}

// Session says how a caller maps to a conversation.
type Session uint8

const (
	// PerCall starts a fresh conversation on every call.
	PerCall Session = iota
	// PerUser keeps one conversation per key, derived with Derive.
	PerUser
)

// String returns "per-call" or "per-user".
func (s Session) String() string {
	switch s {
	case PerCall:
		return "per-call"
	case PerUser:
		return "per-user"
	}
	return fmt.Sprintf("Session(%d)", uint8(s))
}

// ConversationFor returns the conversation for key: a fresh id from ids
// under PerCall (a ULIDSource when ids is nil), Derive(key) under PerUser.
func (s Session) ConversationFor(key string, ids clock.IDSource) wire.ID {
	if s == PerUser {
		return Derive(key)
	}
	if ids == nil {
		ids = clock.ULIDSource{Clock: clock.System{}}
	}
	return ids.NewID()
}
