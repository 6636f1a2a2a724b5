package statestore

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
)

// File is a Store in one directory of local disk, a file per key. Keys are
// hex-encoded into file names, so any key is safe and none escapes the
// directory; a value is written to a temporary file and renamed into place,
// so a crash leaves the old value or the new one, never half of one. One
// process per directory: the bound is counted in memory.
type File struct {
	dir    string
	limits Limits
	mu     sync.Mutex
	keys   int
	size   int64
}

// tmpPrefix marks the temporary files of unfinished writes.
const tmpPrefix = ".tmp-"

// OpenFile opens the store in dir (created, owner-only, when missing) within
// limits, counting what it already holds.
func OpenFile(dir string, limits Limits) (*File, error) {
	if err := limits.validate(); err != nil {
		return nil, err
	}
	if dir == "" {
		return nil, errors.New("statestore: empty directory name")
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("statestore: open %s: %w", dir, err)
	}
	f := &File{dir: dir, limits: limits}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("statestore: open %s: %w", dir, err)
	}
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), tmpPrefix) {
			_ = os.Remove(filepath.Join(dir, e.Name())) // a write a crash cut short
			continue
		}
		info, err := e.Info()
		if err != nil {
			return nil, fmt.Errorf("statestore: open %s: %w", dir, err)
		}
		f.keys++
		f.size += info.Size()
	}
	return f, nil
}

// MaxFileKeyBytes is the longest key File takes: hex-encoded it must fit a
// file name (255 bytes on common file systems).
const MaxFileKeyBytes = 120

// checkFileKey refuses what checkKey does and keys too long for a file name.
func checkFileKey(key string) error {
	if len(key) > MaxFileKeyBytes {
		return fmt.Errorf("statestore: key of %d bytes; a file store takes at most %d", len(key), MaxFileKeyBytes)
	}
	return checkKey(key)
}

func (f *File) path(key string) string { return filepath.Join(f.dir, hex.EncodeToString([]byte(key))) }

// Get reads key's value.
func (f *File) Get(_ context.Context, key string) ([]byte, bool, error) {
	if err := checkFileKey(key); err != nil {
		return nil, false, err
	}
	v, err := os.ReadFile(f.path(key))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, fmt.Errorf("statestore: get %q: %w", key, err)
	}
	return v, true, nil
}

// Set writes value under key.
func (f *File) Set(_ context.Context, key string, value []byte) error {
	if err := checkFileKey(key); err != nil {
		return err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	p := f.path(key)
	keys, size := f.keys+1, f.size+int64(len(value))
	if info, err := os.Stat(p); err == nil {
		keys, size = f.keys, size-info.Size()
	}
	if err := f.limits.admit(key, keys, size); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(f.dir, tmpPrefix)
	if err != nil {
		return fmt.Errorf("statestore: set %q: %w", key, err)
	}
	_, err = tmp.Write(value)
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), p)
	}
	if err != nil {
		_ = os.Remove(tmp.Name())
		return fmt.Errorf("statestore: set %q: %w", key, err)
	}
	f.keys, f.size = keys, size
	return nil
}

// Delete removes key's file.
func (f *File) Delete(_ context.Context, key string) error {
	if err := checkFileKey(key); err != nil {
		return err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	p := f.path(key)
	info, err := os.Stat(p)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err == nil {
		err = os.Remove(p)
	}
	if err != nil {
		return fmt.Errorf("statestore: delete %q: %w", key, err)
	}
	f.keys--
	f.size -= info.Size()
	return nil
}
