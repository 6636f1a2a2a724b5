package wire

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lasergo/laser/wire/internal/fieldsgen"
)

// TestFieldsGenIsUpToDate regenerates fields_gen.go from the tables and
// compares: a table changed without `go generate ./wire` fails here.
func TestFieldsGenIsUpToDate(t *testing.T) {
	want, err := fieldsgen.Generate(".")
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(fieldsgen.FileName)
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != string(want) {
		t.Fatalf("%s is stale: run go generate ./wire", fieldsgen.FileName)
	}
}

// TestFieldsGenRefusesAnUnnamedReadFunction checks the generator's
// diagnostic for a table entry it cannot call by name.
func TestFieldsGenRefusesAnUnnamedReadFunction(t *testing.T) {
	dir := t.TempDir()
	src := "package wire\n\nvar fooFields = recordFields[Foo]{\n\t{\"bar\", optional, func(r *reader, f *Foo) error { return nil }},\n}\n"
	if err := os.WriteFile(filepath.Join(dir, "foo.go"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := fieldsgen.Generate(dir)
	if err == nil || !strings.Contains(err.Error(), `foo.go:4:`) || !strings.Contains(err.Error(), `field "bar": read must be a named function`) {
		t.Fatalf("Generate = %v, want the position and the named-function rule", err)
	}
}

// TestFieldsGenIsDeterministic generates twice and compares.
func TestFieldsGenIsDeterministic(t *testing.T) {
	a, err := fieldsgen.Generate(".")
	if err != nil {
		t.Fatal(err)
	}
	b, err := fieldsgen.Generate(".")
	if err != nil {
		t.Fatal(err)
	}
	if string(a) != string(b) {
		t.Fatal("two runs differ")
	}
}
