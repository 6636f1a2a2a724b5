package generator

import (
	"bytes"
	"errors"
	"fmt"
	"go/format"
	"go/token"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// A generated file that no longer matches its sources compiles as long as
// every signature it pins still holds: adding a //laser:handle method or
// renaming an op= builds and vets cleanly. So beside laser_gen.go lasergen
// writes laser_gen_test.go, whose test regenerates in memory and fails
// go test with "laser_gen.go is stale: run go generate".

// TestOutput returns the name of the generated test file that goes with the
// generated file out: laser_gen_test.go for laser_gen.go.
func TestOutput(out string) string { return strings.TrimSuffix(out, ".go") + "_test.go" }

// ErrStale is matched (errors.Is) by the error CheckUpToDate returns when the
// generated files are not what lasergen would write now.
var ErrStale = errors.New("stale: run go generate")

// StaleError names the generated files that differ from what lasergen would
// write now, or carries the diagnostics that stop it from generating at all
// (a directive edited into a mistake since the last run).
type StaleError struct {
	// Files are the generated file names (relative to the package) that differ.
	Files []string
	// Diagnostics are set when the package no longer generates.
	Diagnostics []Diagnostic
}

func (e *StaleError) Error() string {
	if len(e.Diagnostics) > 0 {
		return fmt.Sprintf("%s is stale: run go generate, which now reports:\n%s", e.name(), (&DiagnosticsError{Diagnostics: e.Diagnostics}).Error())
	}
	return fmt.Sprintf("%s is stale: run go generate (the //laser: directives or the annotated methods changed since it was written)", e.name())
}

func (e *StaleError) name() string {
	if len(e.Files) == 0 {
		return DefaultOutput
	}
	return strings.Join(e.Files, " and ")
}

// Is makes errors.Is(err, ErrStale) true.
func (e *StaleError) Is(target error) bool { return target == ErrStale }

// CheckUpToDate generates the package in dir in memory and compares the
// result with the files on disk. It returns nil when they are the same and a
// *StaleError otherwise; other errors mean lasergen could not run. The
// generated test file calls it, so go test fails on a stale laser_gen.go.
func CheckUpToDate(dir string, opts Options) error {
	res, err := Generate(dir, opts)
	if err != nil {
		return err
	}
	if len(res.Diagnostics) > 0 {
		return &StaleError{Files: []string{opts.output()}, Diagnostics: res.Diagnostics}
	}
	stale := res.Stale()
	if len(stale) == 0 {
		return nil
	}
	names := make([]string, len(stale))
	for i, p := range stale {
		names[i] = filepath.Base(p)
	}
	return &StaleError{Files: names}
}

// emitTest renders the generated test file: one test, in the package's
// external test package so it cannot clash with the package's own names.
func emitTest(m *Model, opts Options) ([]byte, error) {
	var args []string
	if opts.Output != "" && opts.Output != DefaultOutput {
		args = append(args, "Output: "+strconv.Quote(opts.Output))
	}
	if len(opts.BuildFlags) > 0 {
		quoted := make([]string, len(opts.BuildFlags))
		for i, f := range opts.BuildFlags {
			quoted[i] = strconv.Quote(f)
		}
		args = append(args, "BuildFlags: []string{"+strings.Join(quoted, ", ")+"}")
	}
	var b bytes.Buffer
	fmt.Fprintf(&b, "%s\n\npackage %s_test\n\n", GeneratedHeader, m.PkgName)
	fmt.Fprintf(&b, "import (\n\t\"testing\"\n\n\t%q\n)\n\n", modulePath+"/gen")
	fmt.Fprintf(&b, "// TestLaserGenIsUpToDate fails when %s is not what lasergen\n", opts.output())
	b.WriteString("// would write now: a //laser: directive or an annotated method changed\n// without running go generate.\n")
	b.WriteString("func TestLaserGenIsUpToDate(t *testing.T) {\n")
	fmt.Fprintf(&b, "\tif err := gen.CheckUpToDate(\".\", gen.Options{%s}); err != nil {\n", strings.Join(args, ", "))
	b.WriteString("\t\tt.Fatal(err)\n\t}\n}\n")
	return format.Source(b.Bytes())
}

// modulePath is laser-go's module path.
const modulePath = "github.com/lasergo/laser"

// checkTestOutput reports a file at the generated test's path that lasergen
// did not write, which it must not overwrite.
func (l *loaded) checkTestOutput() []Diagnostic {
	path := filepath.Join(l.dir, TestOutput(filepath.Base(l.out)))
	prev, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) || (err == nil && isGenerated(prev)) {
		return nil
	}
	pos := token.Position{Filename: filepath.Base(path), Line: 1, Column: 1}
	if err != nil {
		return []Diagnostic{{Pos: pos, Problem: ErrLoad, Detail: err.Error()}}
	}
	return []Diagnostic{{Pos: pos, Problem: ErrNotGenerated,
		Detail: fmt.Sprintf("%s exists and does not start with %q", filepath.Base(path), GeneratedHeader)}}
}
