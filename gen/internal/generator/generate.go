// Package generator is lasergen's engine: loading the annotated package,
// the model of its agents and operations, the checks and their problem
// catalogue, and the emitter. Package gen is its public entry.
package generator

import (
	"bytes"
	"errors"
	"fmt"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
)

// DefaultOutput is the name of the generated file.
const DefaultOutput = "laser_gen.go"

// Options tunes a run.
type Options struct {
	// Output is the generated file's name inside the package directory.
	// Default DefaultOutput.
	Output string
	// Env is the environment of the go command that lists the package.
	// Default: this process's environment.
	Env []string
	// BuildFlags are passed to the go command, such as "-tags=integration".
	BuildFlags []string
	// NoTest leaves out the generated test (see TestOutput), for builds whose
	// tests cannot run the go command; Write then removes one lasergen wrote
	// before.
	NoTest bool
}

func (o Options) output() string {
	if o.Output == "" {
		return DefaultOutput
	}
	return o.Output
}

// File is one generated file.
type File struct {
	// Path is absolute.
	Path    string
	Content []byte
}

// Result is the outcome of a run: the files to write, or the diagnostics
// that prevented them (never both).
type Result struct {
	Files []File
	// Obsolete are generated files this run no longer produces (a generated
	// test under Options.NoTest); Write removes them.
	Obsolete    []string
	Diagnostics []Diagnostic
}

// Err returns a *DiagnosticsError when the run found problems, else nil.
func (r *Result) Err() error {
	if len(r.Diagnostics) == 0 {
		return nil
	}
	return &DiagnosticsError{Diagnostics: r.Diagnostics}
}

// Generate reads the package in dir and returns its generated file or the
// problems found. The returned error is reserved for failures to run at all
// (the go command missing, an unreadable directory); problems in the input
// are diagnostics.
func Generate(dir string, opts Options) (*Result, error) {
	l, diags, err := load(dir, opts)
	if err != nil {
		return nil, err
	}
	if len(diags) > 0 {
		return &Result{Diagnostics: sortDiagnostics(diags)}, nil
	}
	c := newCollector(l)
	c.collect()
	c.check()
	model := c.model
	model.docs = collectDocs(l.pkg)
	c.typeErrors()
	if len(model.Agents) == 0 && len(c.diags) == 0 {
		c.diags = append(c.diags, Diagnostic{Pos: token.Position{Filename: "."}, Problem: ErrNoAgents,
			Detail: fmt.Sprintf("package %s has no //laser:agent type", model.PkgPath)})
	}
	res := &Result{}
	if len(c.diags) > 0 {
		res.Diagnostics = sortDiagnostics(c.diags)
		return res, nil
	}
	src, err := emit(model, l.pkg.Types.Scope())
	if err != nil {
		return nil, err
	}
	res.Files = []File{{Path: l.out, Content: src}}
	testPath := filepath.Join(l.dir, TestOutput(filepath.Base(l.out)))
	switch {
	case !opts.NoTest:
		test, err := emitTest(model, opts)
		if err != nil {
			return nil, fmt.Errorf("lasergen: format the generated test: %w", err)
		}
		res.Files = append(res.Files, File{Path: testPath, Content: test})
	case fileIsGenerated(testPath):
		res.Obsolete = []string{testPath}
	}
	return res, nil
}

// undefinedRE matches go/types' message for an undefined identifier.
var undefinedRE = regexp.MustCompile(`^undefined: ([\p{L}_][\p{L}\p{N}_]*)$`)

// typeErrors reports the package's type errors, except references to the
// identifiers the generated file declares (hidden while loading).
func (c *collector) typeErrors() {
	generated := make(map[string]bool)
	for _, a := range c.model.Agents {
		for _, n := range generatedNames(a) {
			generated[n] = true
		}
	}
	for _, e := range c.l.typeErrors {
		if m := undefinedRE.FindStringSubmatch(e.Msg); m != nil && generated[m[1]] {
			continue
		}
		c.diags = append(c.diags, Diagnostic{Pos: parsePosition(e.Pos, c.l.dir), Problem: ErrTypeCheck, Detail: e.Msg})
	}
}

// Write writes every file whose content differs from what is on disk and
// returns the paths it wrote. It writes through a temporary file in the same
// directory, so a reader never sees half a file.
func (r *Result) Write() ([]string, error) {
	var wrote []string
	for _, f := range r.Files {
		if old, err := os.ReadFile(f.Path); err == nil && bytes.Equal(old, f.Content) {
			continue
		}
		if err := writeFile(f.Path, f.Content); err != nil {
			return wrote, err
		}
		wrote = append(wrote, f.Path)
	}
	for _, p := range r.Obsolete {
		if err := os.Remove(p); err != nil && !errors.Is(err, os.ErrNotExist) {
			return wrote, fmt.Errorf("lasergen: %w", err)
		}
	}
	return wrote, nil
}

// Stale returns the paths whose content on disk differs from the result.
func (r *Result) Stale() []string {
	var stale []string
	for _, f := range r.Files {
		if old, err := os.ReadFile(f.Path); err != nil || !bytes.Equal(old, f.Content) {
			stale = append(stale, f.Path)
		}
	}
	for _, p := range r.Obsolete {
		if _, err := os.Stat(p); err == nil {
			stale = append(stale, p)
		}
	}
	return stale
}

func writeFile(path string, content []byte) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), ".lasergen-*.tmp")
	if err != nil {
		return fmt.Errorf("lasergen: %w", err)
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(content); err != nil {
		tmp.Close()
		return fmt.Errorf("lasergen: write %s: %w", path, err)
	}
	if err := tmp.Chmod(0o644); err != nil {
		tmp.Close()
		return fmt.Errorf("lasergen: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("lasergen: write %s: %w", path, err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("lasergen: %w", err)
	}
	return nil
}
