package sign

import (
	"errors"
	"fmt"
	"time"

	"github.com/lasergo/laser/wire"
)

// Metadata keys that bind a signed envelope to where and when it was
// published. The reference's signing input has room for no more than the
// envelope and a content-type/version context, but metadata is inside the
// envelope, so these keys are signed and the bytes stay the reference's:
// a reference verifier checks such a signature unchanged and ignores them.
const (
	// MetaTopic is the destination topic (Str): a signed record copied to
	// another topic is refused there.
	MetaTopic = "agdx.topic"
	// MetaIssuedAt is when the signer published the record, in epoch
	// microseconds (Uint): a copy appended later than the freshness bound
	// is refused, and the replay window can forget what is past it.
	MetaIssuedAt = "agdx.issued_at"
)

// DefaultMaxAge is the default freshness bound: how far a signed record's
// issued-at may lie from the broker's append time, either way (publish
// retries and clock skew fit in it; a replay appended later does not).
const DefaultMaxAge = 5 * time.Minute

// Binding refusals.
var (
	// ErrWrongTopic: the signed destination topic is not the record's topic.
	ErrWrongTopic = errors.New("sign: record signed for another topic")
	// ErrStale: the signed issued-at lies outside the freshness bound of the
	// broker's timestamp (a replay, or a clock far off).
	ErrStale = errors.New("sign: signed issued-at outside the freshness bound")
	// ErrUnbound: the policy requires a destination and an issued-at and the
	// signed envelope carries neither or only one.
	ErrUnbound = errors.New("sign: signature binds no destination topic and issued-at")
)

// Bind puts the destination topic and the issued-at time into env's
// metadata; call it before Sign, so the signature covers them.
func Bind(env *wire.Envelope, topic string, issuedAtMicros uint64) {
	env.Metadata.Set(MetaTopic, wire.StrValue(topic))
	env.Metadata.Set(MetaIssuedAt, wire.UintValue(issuedAtMicros))
}

// IssuedAt returns the envelope's issued-at metadata, if it has one.
func IssuedAt(env *wire.Envelope) (uint64, bool) {
	return env.Metadata.Get(MetaIssuedAt).AsUint()
}

// BindingPolicy says how a verified envelope's binding is checked.
type BindingPolicy struct {
	// MaxAge is the freshness bound (DefaultMaxAge when zero; negative
	// turns the age check off).
	MaxAge time.Duration
	// Require refuses a signed envelope without both keys (one signed by a
	// reference SDK or by Key.Sign alone). Without it, an unbound envelope
	// passes, and the keys are checked whenever present: a laser signer
	// always binds them, and no one can strip them without the key.
	Require bool
}

// Check verifies env's binding against the topic it was read from and the
// broker's append time atMicros.
func (p BindingPolicy) Check(env *wire.Envelope, topic string, atMicros uint64) error {
	dst, hasTopic := env.Metadata.Get(MetaTopic).AsStr()
	iat, hasIAT := IssuedAt(env)
	if p.Require && (!hasTopic || !hasIAT) {
		return ErrUnbound
	}
	if env.Metadata.Has(MetaTopic) && (!hasTopic || dst != topic) {
		return fmt.Errorf("%w: signed for %q, read from %q", ErrWrongTopic, dst, topic)
	}
	if env.Metadata.Has(MetaIssuedAt) && !hasIAT {
		return fmt.Errorf("%w: %s is not an unsigned integer", ErrStale, MetaIssuedAt)
	}
	maxAge := p.MaxAge
	if maxAge == 0 {
		maxAge = DefaultMaxAge
	}
	if hasIAT && maxAge > 0 {
		bound := uint64(maxAge / time.Microsecond)
		if diff := max(atMicros, iat) - min(atMicros, iat); diff > bound {
			return fmt.Errorf("%w: issued at %d, appended at %d, bound %s", ErrStale, iat, atMicros, maxAge)
		}
	}
	return nil
}
