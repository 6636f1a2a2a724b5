package statestore_test

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lasergo/laser/statestore"
)

// stores returns a fresh store of each kind within limits.
func stores(t *testing.T, limits statestore.Limits) map[string]statestore.Store {
	t.Helper()
	m, err := statestore.NewMemory(limits)
	if err != nil {
		t.Fatal(err)
	}
	f, err := statestore.OpenFile(filepath.Join(t.TempDir(), "state"), limits)
	if err != nil {
		t.Fatal(err)
	}
	return map[string]statestore.Store{"memory": m, "file": f}
}

func TestStoreGetSetDelete(t *testing.T) {
	for name, s := range stores(t, statestore.Limits{}) {
		t.Run(name, func(t *testing.T) {
			ctx := t.Context()
			if _, ok, err := s.Get(ctx, "cursor/../x"); ok || err != nil {
				t.Fatalf("Get of a missing key = %v, %v", ok, err)
			}
			value := []byte("offset 42")
			if err := s.Set(ctx, "cursor/../x", value); err != nil {
				t.Fatal(err)
			}
			value[0] = 'X' // the store holds its own copy
			got, ok, err := s.Get(ctx, "cursor/../x")
			if err != nil || !ok || string(got) != "offset 42" {
				t.Fatalf("Get = %q, %v, %v", got, ok, err)
			}
			if err := s.Delete(ctx, "cursor/../x"); err != nil {
				t.Fatal(err)
			}
			if _, ok, _ := s.Get(ctx, "cursor/../x"); ok {
				t.Error("the key is still there after Delete")
			}
			if err := s.Delete(ctx, "never"); err != nil {
				t.Errorf("Delete of a missing key: %v", err)
			}
		})
	}
}

func TestStoreRefusesAnEmptyKey(t *testing.T) {
	for name, s := range stores(t, statestore.Limits{}) {
		if err := s.Set(t.Context(), "", []byte("v")); !errors.Is(err, statestore.ErrEmptyKey) {
			t.Errorf("%s: Set with an empty key = %v, want ErrEmptyKey", name, err)
		}
	}
}

func TestStoreFullByKeys(t *testing.T) {
	for name, s := range stores(t, statestore.Limits{MaxKeys: 2}) {
		t.Run(name, func(t *testing.T) {
			ctx := t.Context()
			for _, k := range []string{"a", "b"} {
				if err := s.Set(ctx, k, []byte("v")); err != nil {
					t.Fatal(err)
				}
			}
			if err := s.Set(ctx, "a", []byte("replaced")); err != nil {
				t.Errorf("replacing a key at MaxKeys: %v", err)
			}
			err := s.Set(ctx, "c", []byte("v"))
			if !errors.Is(err, statestore.ErrFull) || !strings.Contains(err.Error(), "MaxKeys 2") {
				t.Fatalf("Set past MaxKeys = %v, want ErrFull naming the bound", err)
			}
			if _, ok, _ := s.Get(ctx, "c"); ok {
				t.Error("a refused Set was written")
			}
			if err := s.Delete(ctx, "b"); err != nil {
				t.Fatal(err)
			}
			if err := s.Set(ctx, "c", []byte("v")); err != nil {
				t.Errorf("Set after a Delete made room: %v", err)
			}
		})
	}
}

func TestStoreFullByBytes(t *testing.T) {
	for name, s := range stores(t, statestore.Limits{MaxBytes: 10}) {
		t.Run(name, func(t *testing.T) {
			ctx := t.Context()
			if err := s.Set(ctx, "a", []byte("123456")); err != nil {
				t.Fatal(err)
			}
			if err := s.Set(ctx, "b", []byte("12345")); !errors.Is(err, statestore.ErrFull) {
				t.Fatalf("Set past MaxBytes = %v, want ErrFull", err)
			}
			if err := s.Set(ctx, "a", []byte("1234567890")); err != nil {
				t.Errorf("replacing a value within MaxBytes: %v", err)
			}
		})
	}
}

func TestFileStoreCountsWhatItHoldsOnReopen(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "state")
	f, err := statestore.OpenFile(dir, statestore.Limits{MaxKeys: 1})
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Set(t.Context(), "a", []byte("v")); err != nil {
		t.Fatal(err)
	}
	again, err := statestore.OpenFile(dir, statestore.Limits{MaxKeys: 1})
	if err != nil {
		t.Fatal(err)
	}
	if v, ok, _ := again.Get(t.Context(), "a"); !ok || string(v) != "v" {
		t.Errorf("reopened store lost the value: %q %v", v, ok)
	}
	if err := again.Set(t.Context(), "b", []byte("v")); !errors.Is(err, statestore.ErrFull) {
		t.Errorf("reopened store forgot its keys: Set = %v, want ErrFull", err)
	}
}

func TestFileStoreRefusesKeysTooLongForAFileName(t *testing.T) {
	f, err := statestore.OpenFile(t.TempDir(), statestore.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Set(t.Context(), strings.Repeat("k", statestore.MaxFileKeyBytes+1), nil); err == nil || !strings.Contains(err.Error(), "at most") {
		t.Errorf("Set with a long key = %v, want an error naming the limit", err)
	}
}

func TestStoreRefusesNegativeLimits(t *testing.T) {
	if _, err := statestore.NewMemory(statestore.Limits{MaxKeys: -1}); err == nil {
		t.Error("memory store took a negative MaxKeys")
	}
	if _, err := statestore.OpenFile(t.TempDir(), statestore.Limits{MaxBytes: -1}); err == nil {
		t.Error("file store took a negative MaxBytes")
	}
}
