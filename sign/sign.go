// Package sign implements AGDX envelope signatures: Ed25519 (RFC 8032, pure)
// over the reference's preimage, key ids derived from public keys, and an
// in-memory registry that binds keys to principals and verifies envelopes.
//
// The preimage is "agdx.signature.v1", then the canonical CBOR of the
// signature context when there is one, then the canonical CBOR of the
// envelope without its signature. A verifier re-encodes the decoded envelope,
// so a signature only verifies over canonical bytes (package wire writes
// them).
package sign

import (
	"crypto/ed25519"
	"crypto/sha256"
	"errors"
	"fmt"

	"github.com/lasergo/laser/wire"
)

// KeyIDLen is the length of a key id.
const KeyIDLen = wire.Ed25519KeyIDLen

// errBadSeed reports a seed that is not 32 bytes.
var errBadSeed = errors.New("sign: ed25519 seed must be 32 bytes")

// Key is an Ed25519 signing key with its derived key id.
type Key struct {
	priv ed25519.PrivateKey
	id   [KeyIDLen]byte
}

// NewKey derives a signing key from a 32-byte seed.
func NewKey(seed [ed25519.SeedSize]byte) *Key {
	priv := ed25519.NewKeyFromSeed(seed[:])
	return &Key{priv: priv, id: KeyIDOf(priv.Public().(ed25519.PublicKey))}
}

// KeyFromSeed derives a signing key from a seed slice, which must be 32 bytes.
func KeyFromSeed(seed []byte) (*Key, error) {
	if len(seed) != ed25519.SeedSize {
		return nil, fmt.Errorf("%w, got %d", errBadSeed, len(seed))
	}
	return NewKey([ed25519.SeedSize]byte(seed)), nil
}

// errNoKey reports a Key that was not built by NewKey or KeyFromSeed.
var errNoKey = errors.New("sign: key is not initialised (use NewKey or KeyFromSeed)")

// Public returns the 32-byte verifying key (nil for an uninitialised Key).
func (k *Key) Public() ed25519.PublicKey {
	if len(k.priv) != ed25519.PrivateKeySize {
		return nil
	}
	return k.priv.Public().(ed25519.PublicKey)
}

// KeyID returns the first 8 bytes of SHA-256 of the public key.
func (k *Key) KeyID() [KeyIDLen]byte { return k.id }

// KeyIDOf returns the key id of a public key: the first 8 bytes of its SHA-256.
func KeyIDOf(pub ed25519.PublicKey) [KeyIDLen]byte {
	sum := sha256.Sum256(pub)
	return [KeyIDLen]byte(sum[:KeyIDLen])
}

// SigningInput returns the exact bytes that are signed: the domain, the
// context's CBOR when ctx is non-nil, and the envelope's CBOR without its
// signature (env.Signature is ignored, not modified).
func SigningInput(env *wire.Envelope, ctx *wire.SignatureContext) ([]byte, error) {
	unsigned := *env
	unsigned.Signature = nil
	b := make([]byte, 0, 64+len(env.Body)+256)
	b = append(b, wire.SignatureDomain...)
	if ctx != nil {
		b = ctx.AppendMarshal(b)
	}
	b, err := unsigned.AppendMarshal(b)
	if err != nil {
		return nil, fmt.Errorf("sign: signing input: %w", err)
	}
	return b, nil
}

// Sign signs env with ctx bound into the signature (nil ctx binds no headers,
// which every on-log verification refuses) and sets env.Signature, replacing
// any earlier one. Publishers should bind wire.NewSignatureContext(ct, 1).
func (k *Key) Sign(env *wire.Envelope, ctx *wire.SignatureContext) error {
	if len(k.priv) != ed25519.PrivateKeySize {
		return errNoKey
	}
	input, err := SigningInput(env, ctx)
	if err != nil {
		return err
	}
	var bound *wire.SignatureContext
	if ctx != nil {
		c := *ctx
		if ctx.ContentType != nil {
			ct := *ctx.ContentType
			c.ContentType = &ct
		}
		if ctx.AgentVersion != nil {
			av := *ctx.AgentVersion
			c.AgentVersion = &av
		}
		bound = &c
	}
	env.Signature = &wire.Signature{
		Scheme:  wire.SignatureSchemeEd25519,
		KeyID:   append([]byte(nil), k.id[:]...),
		Bytes:   ed25519.Sign(k.priv, input),
		Context: bound,
	}
	return nil
}
