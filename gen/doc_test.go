package gen_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lasergo/laser/gen/internal/generator"
)

// docStart and docEnd bracket the Directives section of gen.go's package
// documentation.
const (
	docStart = "// # Directives\n"
	docEnd   = "// # Generated code\n"
)

// TestPackageDocListsTheFormsAndShapesTheDiagnosticsUse keeps the
// Directives section of go doc ./gen what generator.DirectivesDoc writes
// from the list the diagnostics use; go test ./gen -update (make golden)
// rewrites it.
func TestPackageDocListsTheFormsAndShapesTheDiagnosticsUse(t *testing.T) {
	path := filepath.Join(repoRoot(t), "gen", "gen.go")
	src, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	text := string(src)
	start, end := strings.Index(text, docStart), strings.Index(text, docEnd)
	if *update {
		if start < 0 {
			start = strings.Index(text, "// (DIRECTIVES)\n")
		}
		if start < 0 || end < start {
			t.Fatal("gen.go has no Directives section to rewrite")
		}
		text = text[:start] + comment(generator.DirectivesDoc()) + "//\n" + text[end:]
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	if start < 0 || end < start {
		t.Fatalf("gen.go's documentation has no section between %q and %q", docStart, docEnd)
	}
	if got, want := text[start:end], comment(generator.DirectivesDoc())+"//\n"; got != want {
		t.Fatalf("gen.go's Directives section is stale (go test ./gen -update rewrites it):\n%s\nwant:\n%s", got, want)
	}
}

// comment turns doc text into // comment lines.
func comment(doc string) string {
	var b strings.Builder
	for line := range strings.Lines(doc) {
		if line == "\n" || strings.HasPrefix(line, "\t") {
			b.WriteString("//" + line) // as gofmt writes them
			continue
		}
		b.WriteString("// " + line)
	}
	return b.String()
}
