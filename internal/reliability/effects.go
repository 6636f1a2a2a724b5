// Package reliability is laser-go's reliability suite: crash recovery under
// SIGKILL, fault injection over the Iggy-protocol test server, hostile input
// on the log, and the memory bounds of the consumer's windows, each with the
// figures that show nothing was lost.
//
// The package itself holds what the suite's processes share: the on-disk
// effect store the crash worker applies effects to (so "applied exactly
// once" is checked from the store, not from logs), the event log in which
// the worker counts what it saw, the message plan of the crash test and the
// figures report. The tests and `make reliability` are described in
// README.md.
package reliability

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// ErrBadKey reports an effect key that cannot name a file of the store.
var ErrBadKey = errors.New("reliability: effect key must be 1..128 bytes of [A-Za-z0-9_.-], not starting with '.'")

// tmpDir is the store's staging folder; its name starts with a dot, which
// no key may, so it never counts as an effect.
const tmpDir = ".staging"

// EffectStore is a directory holding one file per applied effect, named by
// its idempotency key. Apply writes the content to a staging file, syncs it
// and links it into place, so an effect is either absent or complete even
// when the process is killed halfway, and a second Apply of a key fails
// atomically in the kernel instead of applying twice. Safe for concurrent use
// by one or more processes.
type EffectStore struct {
	dir string
}

// OpenEffectStore opens (creating when missing) the store in dir.
func OpenEffectStore(dir string) (*EffectStore, error) {
	if err := os.MkdirAll(filepath.Join(dir, tmpDir), 0o755); err != nil {
		return nil, fmt.Errorf("open effect store: %w", err)
	}
	return &EffectStore{dir: dir}, nil
}

// Dir returns the store's directory.
func (s *EffectStore) Dir() string { return s.dir }

// Apply makes the effect of key, holding content, and reports whether this
// call applied it; false with a nil error means the effect already existed,
// which is the idempotent outcome of a redelivery.
func (s *EffectStore) Apply(key string, content []byte) (applied bool, err error) {
	if !validKey(key) {
		return false, fmt.Errorf("%w: %q", ErrBadKey, key)
	}
	final := filepath.Join(s.dir, key)
	if _, err := os.Lstat(final); err == nil {
		return false, nil
	}
	tmp, err := writeSynced(filepath.Join(s.dir, tmpDir), content)
	if err != nil {
		return false, fmt.Errorf("apply %s: %w", key, err)
	}
	defer os.Remove(tmp)
	// link fails when the name exists: the exclusive create, with the content
	// already durable, so no reader ever sees a half-written effect.
	if err := os.Link(tmp, final); err != nil {
		if errors.Is(err, fs.ErrExist) {
			return false, nil
		}
		return false, fmt.Errorf("apply %s: %w", key, err)
	}
	if err := syncDir(s.dir); err != nil {
		return true, fmt.Errorf("apply %s: %w", key, err)
	}
	return true, nil
}

// Has reports whether key's effect is applied.
func (s *EffectStore) Has(key string) bool {
	if !validKey(key) {
		return false
	}
	_, err := os.Lstat(filepath.Join(s.dir, key))
	return err == nil
}

// Count returns how many effects the store holds.
func (s *EffectStore) Count() (int, error) {
	names, err := s.Keys()
	return len(names), err
}

// Keys returns the keys of every effect the store holds, unordered.
func (s *EffectStore) Keys() ([]string, error) {
	d, err := os.Open(s.dir)
	if err != nil {
		return nil, fmt.Errorf("list effects: %w", err)
	}
	defer d.Close()
	names, err := d.Readdirnames(-1)
	if err != nil {
		return nil, fmt.Errorf("list effects: %w", err)
	}
	out := names[:0]
	for _, n := range names {
		if n != tmpDir {
			out = append(out, n)
		}
	}
	return out, nil
}

// Read returns the content of key's effect.
func (s *EffectStore) Read(key string) ([]byte, error) {
	if !validKey(key) {
		return nil, fmt.Errorf("%w: %q", ErrBadKey, key)
	}
	return os.ReadFile(filepath.Join(s.dir, key))
}

func validKey(k string) bool {
	if len(k) == 0 || len(k) > 128 || k[0] == '.' {
		return false
	}
	for i := 0; i < len(k); i++ {
		switch c := k[i]; {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9', c == '_', c == '.', c == '-':
		default:
			return false
		}
	}
	return true
}

// writeSynced writes content to a new uniquely named file in dir, syncs it
// and returns its path.
func writeSynced(dir string, content []byte) (string, error) {
	f, err := os.CreateTemp(dir, "effect-*")
	if err != nil {
		return "", err
	}
	_, err = f.Write(content)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		_ = os.Remove(f.Name())
		return "", err
	}
	return f.Name(), nil
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}
