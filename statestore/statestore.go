// Package statestore is a small key/value seam for what an agent keeps
// beside the log: dedup windows, checkpoints, stream cursors (the next
// sequence of a chunkstream.Follow), per-agent state. Memory is the
// in-process store, File a directory on local disk; both can be bounded, and
// a write past the bound fails with ErrFull instead of growing without end.
package statestore

import (
	"context"
	"errors"
	"fmt"
)

// Store gets, sets and deletes values by key. Implementations are safe for
// concurrent use; an empty key is refused with ErrEmptyKey.
type Store interface {
	// Get returns the value of key; ok is false when key has none.
	Get(ctx context.Context, key string) (value []byte, ok bool, err error)
	// Set stores value under key, replacing what was there.
	Set(ctx context.Context, key string, value []byte) error
	// Delete removes key; deleting a missing key is not an error.
	Delete(ctx context.Context, key string) error
}

var (
	// ErrFull is the error of a Set the store's bound refuses; nothing was
	// written.
	ErrFull = errors.New("statestore: store full")
	// ErrEmptyKey is the error of an empty key.
	ErrEmptyKey = errors.New("statestore: empty key")
)

// Limits bound a store; a zero field is no bound.
type Limits struct {
	// MaxKeys is the most keys the store holds.
	MaxKeys int
	// MaxBytes is the most value bytes the store holds, all keys together.
	MaxBytes int64
}

func (l Limits) validate() error {
	if l.MaxKeys < 0 || l.MaxBytes < 0 {
		return fmt.Errorf("statestore: negative limit (MaxKeys %d, MaxBytes %d); 0 means no bound", l.MaxKeys, l.MaxBytes)
	}
	return nil
}

// admit checks a Set that takes the store from keys keys and size bytes to
// keys' and size'.
func (l Limits) admit(key string, keys int, size int64) error {
	switch {
	case l.MaxKeys > 0 && keys > l.MaxKeys:
		return fmt.Errorf("%w: setting %q would hold %d keys, over MaxKeys %d", ErrFull, key, keys, l.MaxKeys)
	case l.MaxBytes > 0 && size > l.MaxBytes:
		return fmt.Errorf("%w: setting %q would hold %d bytes, over MaxBytes %d", ErrFull, key, size, l.MaxBytes)
	}
	return nil
}

func checkKey(key string) error {
	if key == "" {
		return ErrEmptyKey
	}
	return nil
}
