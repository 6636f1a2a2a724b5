package sign

import (
	"crypto/ed25519"
	"errors"
	"fmt"
	"sync"

	"github.com/lasergo/laser/wire"
)

// KeyKind says what a key may authorize: only operator keys may sign
// quarantine facts.
type KeyKind string

// Key kinds.
const (
	KindAgent    KeyKind = "agent"
	KindOperator KeyKind = "operator"
)

// KeyRecord is one enrolled key: the principal it authenticates, its kind,
// and its validity window [ValidFromMicros, ValidToMicros) in epoch
// microseconds (nil ValidToMicros never expires).
type KeyRecord struct {
	Principal       string
	Public          ed25519.PublicKey
	Kind            KeyKind
	ValidFromMicros uint64
	ValidToMicros   *uint64
	Revoked         bool
}

// KeyID returns the record's key id.
func (r KeyRecord) KeyID() [KeyIDLen]byte { return KeyIDOf(r.Public) }

// Verified is the outcome of a successful verification. Principal is the
// enrolled identity, not the envelope's self-asserted source.
type Verified struct {
	Principal string
	Kind      KeyKind
	KeyID     [KeyIDLen]byte
}

// Verification refusals; each is distinct so callers can log and count them.
var (
	// ErrUnsigned: the envelope has no signature capsule.
	ErrUnsigned = errors.New("sign: envelope is not signed")
	// ErrUnknownScheme: the capsule's scheme is not Ed25519 (1).
	ErrUnknownScheme = errors.New("sign: unknown signature scheme")
	// ErrUnknownKey: the key id is not enrolled (or is not 8 bytes).
	ErrUnknownKey = errors.New("sign: unknown key id")
	// ErrRevoked: the key was revoked; this holds even without a clock.
	ErrRevoked = errors.New("sign: key is revoked")
	// ErrOutsideWindow matches both ErrNotYetValid and ErrExpired.
	ErrOutsideWindow = errors.New("sign: key outside its validity window")
	// ErrNotYetValid: the check time is before the key's valid-from.
	ErrNotYetValid = error(&windowError{"sign: key is not yet valid"})
	// ErrExpired: the check time is at or after the key's valid-to.
	ErrExpired = error(&windowError{"sign: key has expired"})
	// ErrNoContext: an on-log gate met a signature that binds no headers.
	ErrNoContext = errors.New("sign: signature does not bind record headers")
	// ErrContextMismatch: the bound context differs from the record headers.
	ErrContextMismatch = errors.New("sign: signature context does not match the record headers")
	// ErrBadSignature: the Ed25519 check failed (or the signature is not 64 bytes).
	ErrBadSignature = errors.New("sign: bad signature")
)

// errInvalidKeyRecord reports a key record that cannot be enrolled.
var errInvalidKeyRecord = errors.New("sign: invalid key record")

type windowError struct{ msg string }

func (e *windowError) Error() string { return e.msg }

func (e *windowError) Is(target error) bool { return target == ErrOutsideWindow }

// Registry maps key ids to enrolled keys; it is in memory only and safe for
// concurrent use.
type Registry struct {
	mu   sync.RWMutex
	keys map[[KeyIDLen]byte]KeyRecord
	// sendsAs maps a principal to the agent ids it may name as an
	// envelope's source besides its own (see AllowSource).
	sendsAs map[string]map[string]struct{}
}

// NewRegistry returns an empty registry.
func NewRegistry() *Registry {
	return &Registry{keys: make(map[[KeyIDLen]byte]KeyRecord), sendsAs: make(map[string]map[string]struct{})}
}

// ErrSourceMismatch reports a verified envelope whose self-asserted source
// is neither the signing principal nor an agent it was allowed to send as:
// a signature proves a key, and the key's principal must be the sender.
var ErrSourceMismatch = errors.New("sign: envelope source is not the signing principal")

// AllowSource lets principal sign envelopes whose source is one of agents,
// besides the principal's own name (one identity running several agents,
// a gateway relaying for them). Agents must be non-empty, at most 256 bytes
// and free of control characters, as an envelope source is.
func (r *Registry) AllowSource(principal string, agents ...string) error {
	if principal == "" {
		return fmt.Errorf("%w: empty principal", errInvalidKeyRecord)
	}
	for _, a := range agents {
		if _, err := wire.ParseAgentID(a); err != nil {
			return fmt.Errorf("sign: allow %q to send as %q: %w", principal, a, err)
		}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	set := r.sendsAs[principal]
	if set == nil {
		set = make(map[string]struct{}, len(agents))
		r.sendsAs[principal] = set
	}
	for _, a := range agents {
		set[a] = struct{}{}
	}
	return nil
}

// SourceAllowed reports whether principal may sign an envelope whose source
// is source: it is the principal itself or was allowed with AllowSource.
func (r *Registry) SourceAllowed(principal, source string) bool {
	if principal == source {
		return true
	}
	r.mu.RLock()
	defer r.mu.RUnlock()
	_, ok := r.sendsAs[principal][source]
	return ok
}

// CheckSource returns ErrSourceMismatch unless v's principal may send as
// env's source (SourceAllowed).
func (r *Registry) CheckSource(v Verified, env *wire.Envelope) error {
	if !r.SourceAllowed(v.Principal, string(env.Source)) {
		return fmt.Errorf("%w: source %q, signed by %q", ErrSourceMismatch, env.Source, v.Principal)
	}
	return nil
}

// Enroll binds an agent key to principal, valid from the epoch with no expiry.
func (r *Registry) Enroll(principal string, pub ed25519.PublicKey) error {
	return r.EnrollRecord(KeyRecord{Principal: principal, Public: pub, Kind: KindAgent})
}

// EnrollOperator binds an operator key to principal, valid from the epoch
// with no expiry.
func (r *Registry) EnrollOperator(principal string, pub ed25519.PublicKey) error {
	return r.EnrollRecord(KeyRecord{Principal: principal, Public: pub, Kind: KindOperator})
}

// EnrollRecord enrolls rec under its key id, replacing any record already
// there (re-enrolment is how a key's principal, kind or window changes).
func (r *Registry) EnrollRecord(rec KeyRecord) error {
	switch {
	case len(rec.Public) != ed25519.PublicKeySize:
		return fmt.Errorf("%w: public key is %d bytes, want %d", errInvalidKeyRecord, len(rec.Public), ed25519.PublicKeySize)
	case rec.Principal == "":
		return fmt.Errorf("%w: empty principal", errInvalidKeyRecord)
	case rec.Kind != KindAgent && rec.Kind != KindOperator:
		return fmt.Errorf("%w: kind %q", errInvalidKeyRecord, rec.Kind)
	case rec.ValidToMicros != nil && *rec.ValidToMicros <= rec.ValidFromMicros:
		return fmt.Errorf("%w: valid_to %d is not after valid_from %d", errInvalidKeyRecord, *rec.ValidToMicros, rec.ValidFromMicros)
	}
	rec.Public = append(ed25519.PublicKey(nil), rec.Public...)
	if rec.ValidToMicros != nil {
		to := *rec.ValidToMicros
		rec.ValidToMicros = &to
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.keys[KeyIDOf(rec.Public)] = rec
	return nil
}

// Revoke marks an enrolled key revoked; every later verification with it fails.
func (r *Registry) Revoke(keyID [KeyIDLen]byte) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	rec, ok := r.keys[keyID]
	if !ok {
		return fmt.Errorf("%w %x", ErrUnknownKey, keyID)
	}
	rec.Revoked = true
	r.keys[keyID] = rec
	return nil
}

// Lookup returns a copy of the record enrolled under keyID.
func (r *Registry) Lookup(keyID [KeyIDLen]byte) (KeyRecord, bool) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	rec, ok := r.keys[keyID]
	if ok {
		rec.Public = append(ed25519.PublicKey(nil), rec.Public...)
		rec.ValidToMicros = clone(rec.ValidToMicros)
	}
	return rec, ok
}

func clone[T any](p *T) *T {
	if p == nil {
		return nil
	}
	v := *p
	return &v
}

// Verify checks env's signature without a clock: the validity window is not
// consulted, but a revoked key still fails.
func (r *Registry) Verify(env *wire.Envelope) (Verified, error) {
	return r.verify(env, 0, false)
}

// VerifyAt checks env's signature and that the key was valid at atMicros
// (epoch microseconds; the window is [from, to)).
func (r *Registry) VerifyAt(env *wire.Envelope, atMicros uint64) (Verified, error) {
	return r.verify(env, atMicros, true)
}

// VerifyObserved is the on-log gate: the signature must carry a context equal
// to the one observed in the record headers (see ObservedContext), field by
// field, and then verify at atMicros, the broker's record timestamp.
// Context-less signatures are always refused here.
func (r *Registry) VerifyObserved(env *wire.Envelope, observed wire.SignatureContext, atMicros uint64) (Verified, error) {
	sig := env.Signature
	switch {
	case sig == nil:
		return Verified{}, ErrUnsigned
	case sig.Context == nil:
		return Verified{}, ErrNoContext
	case !sig.Context.Equal(&observed):
		return Verified{}, fmt.Errorf("%w: signed %s, observed %s", ErrContextMismatch, sig.Context, &observed)
	}
	return r.VerifyAt(env, atMicros)
}

// VerifyDelegation verifies env and returns the delegated user named by its
// "on_behalf_of" metadata (as a Str), or "" when there is none. The user is
// inside the signed span, so it is as trustworthy as the signer.
func (r *Registry) VerifyDelegation(env *wire.Envelope) (Verified, string, error) {
	v, err := r.Verify(env)
	if err != nil {
		return Verified{}, "", err
	}
	user, _ := env.Metadata.Get(wire.MetaOnBehalfOf).AsStr()
	return v, user, nil
}

// verify runs the common checks in the reference's order: signed, scheme,
// enrolled, not revoked, inside the window (when timed), 64 signature bytes,
// then Ed25519 over the rebuilt preimage.
func (r *Registry) verify(env *wire.Envelope, at uint64, timed bool) (Verified, error) {
	sig := env.Signature
	if sig == nil {
		return Verified{}, ErrUnsigned
	}
	if sig.Scheme != wire.SignatureSchemeEd25519 {
		return Verified{}, fmt.Errorf("%w %d", ErrUnknownScheme, sig.Scheme)
	}
	if len(sig.KeyID) != KeyIDLen {
		return Verified{}, fmt.Errorf("%w: key id is %d bytes, want %d", ErrUnknownKey, len(sig.KeyID), KeyIDLen)
	}
	id := [KeyIDLen]byte(sig.KeyID)
	r.mu.RLock()
	rec, ok := r.keys[id]
	r.mu.RUnlock()
	if !ok {
		return Verified{}, fmt.Errorf("%w %x", ErrUnknownKey, id)
	}
	if rec.Revoked {
		return Verified{}, fmt.Errorf("%w: %x (%s)", ErrRevoked, id, rec.Principal)
	}
	if timed {
		if at < rec.ValidFromMicros {
			return Verified{}, fmt.Errorf("%w: %x valid from %d, checked at %d", ErrNotYetValid, id, rec.ValidFromMicros, at)
		}
		if rec.ValidToMicros != nil && at >= *rec.ValidToMicros {
			return Verified{}, fmt.Errorf("%w: %x valid until %d, checked at %d", ErrExpired, id, *rec.ValidToMicros, at)
		}
	}
	if len(sig.Bytes) != ed25519.SignatureSize {
		return Verified{}, fmt.Errorf("%w: %d bytes, want %d", ErrBadSignature, len(sig.Bytes), ed25519.SignatureSize)
	}
	input, err := SigningInput(env, sig.Context)
	if err != nil {
		return Verified{}, fmt.Errorf("%w: %w", ErrBadSignature, err)
	}
	if !ed25519.Verify(rec.Public, input, sig.Bytes) {
		return Verified{}, fmt.Errorf("%w: key %x (%s)", ErrBadSignature, id, rec.Principal)
	}
	return Verified{Principal: rec.Principal, Kind: rec.Kind, KeyID: id}, nil
}

// ObservedContext reads the signature context a record's headers imply:
// agdx.ct (Uint8) and agdx.av (Uint32), each only when present. A present
// header of the wrong type is an error, as the reference decoder treats it.
func ObservedContext(h wire.EncodedHeaders) (wire.SignatureContext, error) {
	var ctx wire.SignatureContext
	if v, ok := h.Get(wire.HeaderContentType); ok {
		ct, err := v.AsUint8()
		if err != nil {
			return wire.SignatureContext{}, fmt.Errorf("sign: %s header: %w", wire.HeaderContentType, err)
		}
		ctx.ContentType = &ct
	}
	if v, ok := h.Get(wire.HeaderAgentVersion); ok {
		av, err := v.AsUint32()
		if err != nil {
			return wire.SignatureContext{}, fmt.Errorf("sign: %s header: %w", wire.HeaderAgentVersion, err)
		}
		ctx.AgentVersion = &av
	}
	return ctx, nil
}
