package fieldsgen_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lasergo/laser/wire/internal/fieldsgen"
)

// generate runs Generate on a package holding only src.
func generate(t *testing.T, src string) ([]byte, error) {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "table.go"), []byte(src), 0o600); err != nil {
		t.Fatal(err)
	}
	return fieldsgen.Generate(dir)
}

func TestATableEntryWithAnEmptyKeyIsAnError(t *testing.T) {
	for name, entry := range map[string]string{
		"named read":   `{"", optional, readA}`,
		"unnamed read": `{"", optional, func(*reader, *rec) error { return nil }}`,
	} {
		_, err := generate(t, "package wire\n\nvar recTable = recordFields[rec]{"+entry+"}\n")
		if err == nil || !strings.Contains(err.Error(), "empty") {
			t.Errorf("%s: Generate = %v, want an error naming the empty key", name, err)
		}
	}
}

func TestAnUnnamedReadFunctionIsAnError(t *testing.T) {
	_, err := generate(t, "package wire\n\nvar recTable = recordFields[rec]{{\"id\", optional, func(*reader, *rec) error { return nil }}}\n")
	if err == nil || !strings.Contains(err.Error(), "readId") {
		t.Fatalf("Generate = %v, want an error suggesting readId", err)
	}
}

func TestATableGeneratesItsDecodeFunction(t *testing.T) {
	out, err := generate(t, "package wire\n\nvar recTable = recordFields[rec]{{\"id\", optional, readID}}\n")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(out), "func decodeRecTable(r *reader, v *rec) error") || !strings.Contains(string(out), "return readID(r, v)") {
		t.Fatalf("generated %s, want decodeRecTable calling readID", out)
	}
}
