package blob_test

import (
	"bytes"
	"crypto/sha256"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/lasergo/laser/blob"
	"github.com/lasergo/laser/wire"
)

func TestOffloadLeavesASmallBodyAlone(t *testing.T) {
	store := blob.Dir{Root: t.TempDir()}
	body, checked, err := blob.Offload(t.Context(), store, 10, []byte("123456789"))
	if err != nil || checked || string(body) != "123456789" {
		t.Fatalf("Offload = %q, %v, %v; want the 9-byte body untouched under a 10-byte threshold", body, checked, err)
	}
	if entries, _ := os.ReadDir(store.Root); len(entries) != 0 {
		t.Fatalf("the store holds %d files, want none", len(entries))
	}
}

func TestOffloadAtTheThresholdRoundTrips(t *testing.T) {
	store := blob.Dir{Root: t.TempDir()}
	payload := bytes.Repeat([]byte("x"), 10)
	capsule, checked, err := blob.Offload(t.Context(), store, 10, payload)
	if err != nil || !checked {
		t.Fatalf("Offload = %v, %v; want a capsule at the threshold", checked, err)
	}
	ref, err := wire.DecodeBodyRef(capsule)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(payload)
	if ref.SizeBytes != 10 || !bytes.Equal(ref.SHA256, sum[:]) {
		t.Fatalf("capsule %+v, want 10 bytes with the body's SHA-256", ref)
	}
	got, err := blob.Resolve(t.Context(), store, capsule)
	if err != nil || !bytes.Equal(got, payload) {
		t.Fatalf("Resolve = %q, %v", got, err)
	}
}

func TestResolveRefusesAMissingBody(t *testing.T) {
	store := blob.Dir{Root: t.TempDir()}
	capsule, _, err := blob.Offload(t.Context(), store, 1, []byte("gone soon"))
	if err != nil {
		t.Fatal(err)
	}
	ref, _ := wire.DecodeBodyRef(capsule)
	if err := os.Remove(filepath.Join(store.Root, ref.Reference)); err != nil {
		t.Fatal(err)
	}
	if _, err := blob.Resolve(t.Context(), store, capsule); !errors.Is(err, blob.ErrMissing) {
		t.Fatalf("Resolve = %v, want ErrMissing", err)
	}
}

func TestResolveRefusesATamperedBody(t *testing.T) {
	store := blob.Dir{Root: t.TempDir()}
	capsule, _, err := blob.Offload(t.Context(), store, 1, []byte("the original"))
	if err != nil {
		t.Fatal(err)
	}
	ref, _ := wire.DecodeBodyRef(capsule)
	for _, swapped := range []string{"the forgery!", "short"} { // same size, then another size
		if err := os.WriteFile(filepath.Join(store.Root, ref.Reference), []byte(swapped), 0o600); err != nil {
			t.Fatal(err)
		}
		if _, err := blob.Resolve(t.Context(), store, capsule); !errors.Is(err, blob.ErrIntegrity) {
			t.Fatalf("Resolve of %q = %v, want ErrIntegrity", swapped, err)
		}
	}
}

func TestDirRefusesAReferenceOutsideItsLayout(t *testing.T) {
	store := blob.Dir{Root: t.TempDir()}
	for _, ref := range []string{"../../etc/passwd", "ABCDEF", ""} {
		if _, err := store.Get(t.Context(), ref); !errors.Is(err, blob.ErrMissing) {
			t.Errorf("Get(%q) = %v, want ErrMissing", ref, err)
		}
	}
}
