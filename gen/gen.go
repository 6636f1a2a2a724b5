// Package gen is lasergen's engine: it reads a Go package whose struct
// types and methods carry //laser: directives and writes the typed decode,
// routing, dispatch, clients and agent cards for them.
//
// The pipeline is load (golang.org/x/tools/go/packages, with full type
// information) → model (agents and operations from the directives) → check
// (values, method shapes, encodable and nameable types, collisions) → emit
// (github.com/dave/jennifer). Any problem stops the run before emit, and
// every problem is reported at once, sorted, each at the exact directive
// field or declaration it concerns.
//
// # Directives
//
// On a struct type:
//
//	//laser:agent id=<agent id> listen=<topic> [respond=<topic>] [group=<group>] [ct=cbor|json]
//
// On a method of such a type:
//
//	//laser:handle op=<operation> [ct=cbor|json]
//	//laser:event op=<operation> [ct=cbor|json]
//
// Fields are space-separated key=value pairs; a value holding spaces is
// written as a Go double-quoted string (key="a b"). ct defaults to the
// agent's ct, which defaults to cbor. group defaults to the agent id.
//
// Accepted method shapes, where In and Out are encodable types and In may
// be a pointer:
//
//	//laser:handle: func (ctx *runtime.Ctx, in In) (Out, error)   request/response
//	//laser:handle: func (ctx *runtime.Ctx, in In) error          command
//	//laser:event:  func (ctx *runtime.Ctx, in In) error          AGDX event handler
//
// # Generated code
//
// Per agent type T (with E = T with its first letter upper-cased):
// NewEAgent (a *runtime.Agent from a *T), EHandler (the runtime.Handler
// that routes by kind and operation), the EClient interface (typed
// request/reply, command and event methods named after T's methods) and
// NewEClient returning its implementation, ECard (the wire.AgentCard
// listing the //laser:handle operations), the constants EAgentID,
// EListenTopic, ERespondTopic and EOp<Method> that the dispatcher, client
// and card spell the agent's names with, and compile-time assertions of
// every handler signature. The file's header names the annotated files
// (// Source:).
//
// Beside the generated file (laser_gen.go) goes a generated test
// (laser_gen_test.go) that fails go test when the generated file is stale:
// see CheckUpToDate.
//
// A request method that returns a non-retryable error makes the dispatcher
// answer the caller with an AGDX error (see runtime.FailRequest) before the
// message is dead-lettered, so the typed client returns a
// *runtime.RemoteError instead of waiting for its timeout. A retryable error
// is retried by the consumer and does not answer.
package gen

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
	// Model is what the generator understood; nil when loading failed.
	Model *Model
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
	c.typeErrors()
	if len(model.Agents) == 0 && len(c.diags) == 0 {
		c.diags = append(c.diags, Diagnostic{Pos: token.Position{Filename: "."}, Problem: ErrNoAgents,
			Detail: fmt.Sprintf("package %s has no //laser:agent type", model.PkgPath)})
	}
	res := &Result{Model: model}
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
