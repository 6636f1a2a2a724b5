package blob

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// Dir is a Store on a filesystem directory, content-addressed: a body is
// the file named by the lowercase hex of its SHA-256, which is also its
// reference, so putting the same body twice stores it once and any reader
// of the directory (a reference agent with the same layout, see
// docs/interop.md) finds it. Bodies are written to a temporary file and
// renamed, so a reader never sees a partial one. It does not delete what it
// stored.
type Dir struct {
	// Root is the directory; it must exist.
	Root string
}

// Put stores payload under its SHA-256.
func (d Dir) Put(_ context.Context, payload []byte) (string, error) {
	sum := sha256.Sum256(payload)
	ref := hex.EncodeToString(sum[:])
	tmp, err := os.CreateTemp(d.Root, ".put-*")
	if err != nil {
		return "", fmt.Errorf("blob: %w", err)
	}
	defer os.Remove(tmp.Name()) // a no-op once renamed
	if _, err := tmp.Write(payload); err != nil {
		_ = tmp.Close()
		return "", fmt.Errorf("blob: write %s: %w", ref, err)
	}
	if err := tmp.Close(); err != nil {
		return "", fmt.Errorf("blob: write %s: %w", ref, err)
	}
	if err := os.Rename(tmp.Name(), filepath.Join(d.Root, ref)); err != nil {
		return "", fmt.Errorf("blob: store %s: %w", ref, err)
	}
	return ref, nil
}

// Get reads the body stored under reference, which must be 64 lowercase
// hex digits: a reference read off the log is untrusted, and no other name
// may reach the filesystem.
func (d Dir) Get(_ context.Context, reference string) ([]byte, error) {
	if !isDigestHex(reference) {
		return nil, fmt.Errorf("%w: %q is not a SHA-256 in lowercase hex, the only reference a Dir store gives", ErrMissing, reference)
	}
	b, err := os.ReadFile(filepath.Join(d.Root, reference))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("%w: %s in %s", ErrMissing, reference, d.Root)
	}
	if err != nil {
		return nil, fmt.Errorf("blob: read %s: %w", reference, err)
	}
	return b, nil
}

func isDigestHex(s string) bool {
	if len(s) != 2*sha256.Size {
		return false
	}
	for i := range len(s) {
		if c := s[i]; (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}
