// Package vectors hands tests the reference's byte vectors: the copy this
// module keeps in testdata/fixtures/, so a fresh clone tests with nothing
// beside it, plus the files of a folder an environment variable names, for
// vectors newer than the copy.
package vectors

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// Set is one kind of vector: the folder under testdata/fixtures/ that holds
// the copy.
type Set string

const (
	// AGDX is the AGDX records (*.bin); AGDX_FIXTURES names a folder of more.
	AGDX Set = "agdx"
	// Signatures is the signature vectors (*.json); AGDX_SIGNATURE_VECTORS
	// names a folder of more.
	Signatures Set = "signatures"
)

// Env is the environment variable naming a folder of extra vectors.
func (s Set) Env() string {
	if s == Signatures {
		return "AGDX_SIGNATURE_VECTORS"
	}
	return "AGDX_FIXTURES"
}

func (s Set) pattern() string {
	if s == Signatures {
		return "*.json"
	}
	return "*.bin"
}

// Lookup returns the path of every vector of the set by file name: the
// module's copy, then the folder named by Env, whose file wins where both
// have one of the same name. It is an error when the copy is missing or the
// set is empty; a folder named by Env that does not exist is one too.
func (s Set) Lookup() (map[string]string, error) {
	root, err := moduleRoot()
	if err != nil {
		return nil, err
	}
	out := map[string]string{}
	if err := glob(out, filepath.Join(root, "testdata", "fixtures", string(s)), s.pattern()); err != nil {
		return nil, err
	}
	if extra := os.Getenv(s.Env()); extra != "" {
		if err := glob(out, extra, s.pattern()); err != nil {
			return nil, fmt.Errorf("%s: %w", s.Env(), err)
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no %s vectors in testdata/fixtures/%s", s.pattern(), s)
	}
	return out, nil
}

// Paths is Lookup, failing tb on an error.
func (s Set) Paths(tb testing.TB) map[string]string {
	tb.Helper()
	paths, err := s.Lookup()
	if err != nil {
		tb.Fatal(err)
	}
	return paths
}

// Files returns the content of every vector of the set by file name.
func (s Set) Files(tb testing.TB) map[string][]byte {
	tb.Helper()
	out := map[string][]byte{}
	for name, p := range s.Paths(tb) {
		b, err := os.ReadFile(p)
		if err != nil {
			tb.Fatal(err)
		}
		out[name] = b
	}
	return out
}

// Read returns the content of the vector of that file name.
func (s Set) Read(tb testing.TB, name string) []byte {
	tb.Helper()
	p, ok := s.Paths(tb)[name]
	if !ok {
		tb.Fatalf("no vector %s in testdata/fixtures/%s (nor in $%s)", name, s, s.Env())
	}
	b, err := os.ReadFile(p)
	if err != nil {
		tb.Fatal(err)
	}
	return b
}

// glob adds the files of dir matching pattern to out by base name.
func glob(out map[string]string, dir, pattern string) error {
	if st, err := os.Stat(dir); err != nil {
		return err
	} else if !st.IsDir() {
		return fmt.Errorf("%s is not a folder", dir)
	}
	paths, err := filepath.Glob(filepath.Join(dir, pattern))
	if err != nil {
		return err
	}
	for _, p := range paths {
		out[filepath.Base(p)] = p
	}
	return nil
}

// moduleRoot is the nearest folder above the working directory (a test's
// package folder) that holds go.mod.
func moduleRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("no go.mod above the working directory")
		}
		dir = parent
	}
}
