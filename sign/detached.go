package sign

import (
	"crypto/ed25519"
	"encoding/binary"
	"fmt"
)

// DetachedLen is the length of a detached signature: the key id, then the
// 64 Ed25519 bytes.
const DetachedLen = KeyIDLen + ed25519.SignatureSize

// detachedInput is domain, then each part prefixed by its length, so no two
// lists of parts share an input.
func detachedInput(domain string, parts [][]byte) []byte {
	n := len(domain)
	for _, p := range parts {
		n += binary.MaxVarintLen64 + len(p)
	}
	b := make([]byte, 0, n)
	b = append(b, domain...)
	for _, p := range parts {
		b = binary.AppendUvarint(b, uint64(len(p)))
		b = append(b, p...)
	}
	return b
}

// SignDetached signs parts under domain for records that carry no AGDX
// envelope (a dead-letter capsule): the key id and the signature, to travel
// in a header beside what they sign.
func (k *Key) SignDetached(domain string, parts ...[]byte) ([]byte, error) {
	if len(k.priv) != ed25519.PrivateKeySize {
		return nil, errNoKey
	}
	sig := append(make([]byte, 0, DetachedLen), k.id[:]...)
	return append(sig, ed25519.Sign(k.priv, detachedInput(domain, parts))...), nil
}

// VerifyDetached checks a SignDetached signature over parts under domain
// with the enrolled key it names, valid at atMicros, in the same order of
// checks as an envelope signature.
func (r *Registry) VerifyDetached(sig []byte, atMicros uint64, domain string, parts ...[]byte) (Verified, error) {
	if len(sig) == 0 {
		return Verified{}, ErrUnsigned
	}
	if len(sig) != DetachedLen {
		return Verified{}, fmt.Errorf("%w: detached signature is %d bytes, want %d", ErrBadSignature, len(sig), DetachedLen)
	}
	id := [KeyIDLen]byte(sig[:KeyIDLen])
	r.mu.RLock()
	rec, ok := r.keys[id]
	r.mu.RUnlock()
	switch {
	case !ok:
		return Verified{}, fmt.Errorf("%w %x", ErrUnknownKey, id)
	case rec.Revoked:
		return Verified{}, fmt.Errorf("%w: %x (%s)", ErrRevoked, id, rec.Principal)
	case atMicros < rec.ValidFromMicros:
		return Verified{}, fmt.Errorf("%w: %x valid from %d, checked at %d", ErrNotYetValid, id, rec.ValidFromMicros, atMicros)
	case rec.ValidToMicros != nil && atMicros >= *rec.ValidToMicros:
		return Verified{}, fmt.Errorf("%w: %x valid until %d, checked at %d", ErrExpired, id, *rec.ValidToMicros, atMicros)
	}
	if !ed25519.Verify(rec.Public, detachedInput(domain, parts), sig[KeyIDLen:]) {
		return Verified{}, fmt.Errorf("%w: key %x (%s)", ErrBadSignature, id, rec.Principal)
	}
	return Verified{Principal: rec.Principal, Kind: rec.Kind, KeyID: id}, nil
}
