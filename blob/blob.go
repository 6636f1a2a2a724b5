// Package blob claim-checks large bodies as the reference SDK does (its
// blob.rs): a body at or over a threshold is put in a Store and replaced on
// the log by a wire.BodyRef capsule (content type ref) naming it, its size
// and its SHA-256; a reader resolves the capsule through the same Store and
// refuses bytes whose size or digest disagree. Dir is a filesystem Store;
// the reference ships none, so what a reference agent and a laser-go agent
// share is the capsule and a store both can read (see docs/interop.md).
package blob

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"

	"github.com/lasergo/laser/runtime"
	"github.com/lasergo/laser/wire"
)

// Store holds claim-checked bodies.
type Store interface {
	// Put stores payload and returns the reference a capsule carries (at
	// most wire.MaxBodyRefBytes of UTF-8).
	Put(ctx context.Context, payload []byte) (string, error)
	// Get returns the bytes stored under reference; a reference it does
	// not hold is an error matching ErrMissing.
	Get(ctx context.Context, reference string) ([]byte, error)
}

// Errors of Resolve.
var (
	// ErrMissing reports a reference the store does not hold.
	ErrMissing = errors.New("blob: no body stored under the reference")
	// ErrIntegrity reports stored bytes whose size or SHA-256 is not the
	// capsule's: the store did not return what the sender put.
	ErrIntegrity = errors.New("blob: stored body does not match its capsule")
)

// DefaultThreshold is the body size, in bytes, at or over which Offload
// claim-checks when given no threshold: 512 KiB, well under Iggy's
// default 1 MiB message cap.
const DefaultThreshold = 512 << 10

// Offload claim-checks payload when it is at or over threshold bytes (zero
// means DefaultThreshold): it is put in store and the encoded capsule
// returned with checked true, to be sent with content type wire.ContentRef
// (runtime.WithContentType). Under the threshold payload comes back as it
// was, with checked false.
func Offload(ctx context.Context, store Store, threshold int, payload []byte) (body []byte, checked bool, err error) {
	if threshold <= 0 {
		threshold = DefaultThreshold
	}
	if len(payload) < threshold {
		return payload, false, nil
	}
	sum := sha256.Sum256(payload)
	ref, err := store.Put(ctx, payload)
	if err != nil {
		return nil, false, fmt.Errorf("blob: put %d bytes: %w", len(payload), err)
	}
	capsule := &wire.BodyRef{Reference: ref, SizeBytes: uint64(len(payload)), SHA256: sum[:]}
	if err := capsule.Validate(); err != nil {
		return nil, false, fmt.Errorf("blob: the store's reference %q: %w", ref, err)
	}
	b, err := capsule.Marshal()
	if err != nil {
		return nil, false, fmt.Errorf("blob: encode capsule: %w", err)
	}
	return b, true, nil
}

// Resolve returns the body a capsule names, fetched from store and checked
// against the capsule's size and SHA-256 (ErrIntegrity), or ErrMissing when
// the store does not hold it.
func Resolve(ctx context.Context, store Store, capsule []byte) ([]byte, error) {
	ref, err := wire.DecodeBodyRef(capsule)
	if err != nil {
		return nil, fmt.Errorf("blob: %w", err)
	}
	if err := ref.Validate(); err != nil {
		return nil, fmt.Errorf("blob: %w", err)
	}
	body, err := store.Get(ctx, ref.Reference)
	if err != nil {
		return nil, fmt.Errorf("blob: get %q: %w", ref.Reference, err)
	}
	if uint64(len(body)) != ref.SizeBytes {
		return nil, fmt.Errorf("%w: %q holds %d bytes, the capsule says %d", ErrIntegrity, ref.Reference, len(body), ref.SizeBytes)
	}
	if sum := sha256.Sum256(body); string(sum[:]) != string(ref.SHA256) {
		return nil, fmt.Errorf("%w: %q: SHA-256 %x, the capsule says %x", ErrIntegrity, ref.Reference, sum, ref.SHA256)
	}
	return body, nil
}

// Body returns a message's real body: resolved through store when the
// message is claim-checked (content type ref), its Body otherwise.
func Body(ctx context.Context, store Store, m *runtime.Message) ([]byte, error) {
	if !m.HasContentType || m.ContentType != wire.ContentRef {
		return m.Body(), nil
	}
	return Resolve(ctx, store, m.Body())
}
