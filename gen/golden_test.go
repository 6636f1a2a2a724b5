package gen_test

import (
	"bytes"
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"golang.org/x/tools/txtar"

	"github.com/lasergo/laser/gen"
)

var update = flag.Bool("update", false, "rewrite the want sections of testdata/golden/*.txtar")

// Sections of a golden archive that hold expectations, not input.
const (
	wantOutput      = "want/" + gen.DefaultOutput
	wantDiagnostics = "want/diagnostics"
)

// TestGolden runs every case of testdata/golden at the repository root. A
// case is one txtar archive: its comment says what it covers, its files are
// a package (the module root of a scratch module that replaces
// github.com/lasergo/laser with this checkout), and either want/laser_gen.go
// holds the expected generated file or want/diagnostics the expected
// diagnostics, one per line. Generated files must also pass go vet, which
// compiles them. go test ./gen -update rewrites the want sections.
func TestGolden(t *testing.T) {
	root := repoRoot(t)
	cases, err := filepath.Glob(filepath.Join(root, "testdata", "golden", "*.txtar"))
	if err != nil {
		t.Fatal(err)
	}
	if len(cases) == 0 {
		t.Fatalf("no golden cases in %s", filepath.Join(root, "testdata", "golden"))
	}
	for _, path := range cases {
		name := strings.TrimSuffix(filepath.Base(path), ".txtar")
		t.Run(name, func(t *testing.T) { runGolden(t, root, path) })
	}
}

func runGolden(t *testing.T, root, path string) {
	ar, err := txtar.ParseFile(path)
	if err != nil {
		t.Fatal(err)
	}
	dir := scratchModule(t, root, ar)
	env := goEnv()
	res, err := gen.Generate(dir, gen.Options{Env: env})
	if err != nil {
		t.Fatalf("Generate: %v", err)
	}
	var section string
	var got []byte
	if len(res.Diagnostics) > 0 {
		if len(res.Files) != 0 {
			t.Errorf("Generate returned %d files beside diagnostics", len(res.Files))
		}
		section = wantDiagnostics
		var b strings.Builder
		for _, d := range res.Diagnostics {
			b.WriteString(d.String())
			b.WriteByte('\n')
		}
		got = []byte(b.String())
	} else {
		wantFiles := []string{filepath.Join(dir, gen.DefaultOutput), filepath.Join(dir, gen.TestOutput(gen.DefaultOutput))}
		if diff := cmp.Diff(wantFiles, filePaths(res.Files)); diff != "" {
			t.Fatalf("Generate returned other files (-want +got):\n%s", diff)
		}
		section, got = wantOutput, res.Files[0].Content
	}
	if *update {
		rewriteGolden(t, path, ar, section, got)
		return
	}
	want, ok := archiveFile(ar, section)
	if !ok {
		t.Fatalf("the case produced %s, but the archive has no -- %s -- section (run go test ./gen -update)", section, section)
	}
	if diff := cmp.Diff(string(want), string(got)); diff != "" {
		t.Errorf("%s mismatch (-want +got):\n%s", section, diff)
	}
	if section == wantOutput {
		// go vet compiles the package and the generated test beside it.
		if _, err := res.Write(); err != nil {
			t.Fatal(err)
		}
		goVet(t, dir, env)
	}
}

// scratchModule writes the archive's input files into a new module that
// builds against this checkout.
func scratchModule(t *testing.T, root string, ar *txtar.Archive) string {
	t.Helper()
	dir := t.TempDir()
	hasMod := false
	for _, f := range ar.Files {
		if strings.HasPrefix(f.Name, "want/") {
			continue
		}
		hasMod = hasMod || f.Name == "go.mod"
		p := filepath.Join(dir, filepath.FromSlash(f.Name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, f.Data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if !hasMod {
		mod := "module example.com/app\n\ngo 1.26.0\n\n" +
			"require github.com/lasergo/laser v0.0.0-00010101000000-000000000000\n\n" +
			"replace github.com/lasergo/laser => " + root + "\n"
		if err := os.WriteFile(filepath.Join(dir, "go.mod"), []byte(mod), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	sum, err := os.ReadFile(filepath.Join(root, "go.sum"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "go.sum"), sum, 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// goEnv lets the go command complete the scratch module's requirements from
// the module cache, outside any workspace.
func goEnv() []string {
	return append(os.Environ(), "GOFLAGS=-mod=mod", "GOWORK=off")
}

func goVet(t *testing.T, dir string, env []string) {
	t.Helper()
	cmd := exec.Command("go", "vet", "./...")
	cmd.Dir, cmd.Env = dir, env
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Errorf("go vet on the generated package: %v\n%s", err, out)
	}
}

func archiveFile(ar *txtar.Archive, name string) ([]byte, bool) {
	for _, f := range ar.Files {
		if f.Name == name {
			return f.Data, true
		}
	}
	return nil, false
}

// rewriteGolden replaces the archive's want sections with got under section.
func rewriteGolden(t *testing.T, path string, ar *txtar.Archive, section string, got []byte) {
	t.Helper()
	files := ar.Files[:0:0]
	for _, f := range ar.Files {
		if !strings.HasPrefix(f.Name, "want/") {
			files = append(files, f)
		}
	}
	ar.Files = append(files, txtar.File{Name: section, Data: got})
	out := txtar.Format(ar)
	if old, err := os.ReadFile(path); err == nil && bytes.Equal(old, out) {
		return
	}
	if err := os.WriteFile(path, out, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("rewrote %s", path)
}

func filePaths(fs []gen.File) []string {
	ps := make([]string, len(fs))
	for i, f := range fs {
		ps[i] = f.Path
	}
	return ps
}

// repoRoot walks up from the working directory to the directory holding go.mod.
func repoRoot(t *testing.T) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("no go.mod above the working directory")
		}
		dir = parent
	}
}

// loadCase sets up the scratch module of one golden case and generates it.
func loadCase(t *testing.T, name string) (string, *gen.Result) {
	t.Helper()
	root := repoRoot(t)
	ar, err := txtar.ParseFile(filepath.Join(root, "testdata", "golden", name+".txtar"))
	if err != nil {
		t.Fatal(err)
	}
	dir := scratchModule(t, root, ar)
	res, err := gen.Generate(dir, gen.Options{Env: goEnv()})
	if err != nil {
		t.Fatal(err)
	}
	if err := res.Err(); err != nil {
		t.Fatal(err)
	}
	return dir, res
}

func TestGenerateIsDeterministic(t *testing.T) {
	dir, first := loadCase(t, "multiple_agents")
	for i := 0; i < 3; i++ {
		again, err := gen.Generate(dir, gen.Options{Env: goEnv()})
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(first.Files[0].Content, again.Files[0].Content) {
			t.Fatalf("run %d differs:\n%s", i+2, cmp.Diff(string(first.Files[0].Content), string(again.Files[0].Content)))
		}
	}
}

// TestChangedSignatureWithoutRegeneratingFailsTheBuild edits a handler's
// input after generating: the build must fail in the generated file, and
// its first error names the fix, the method and both signatures.
func TestChangedSignatureWithoutRegeneratingFailsTheBuild(t *testing.T) {
	dir := editedCase(t, "in ChargeCard) (Charged, error)", "in *ChargeCard) (Charged, error)")
	out, err := goBuild(dir)
	if err == nil || !bytes.Contains(out, []byte(gen.DefaultOutput)) {
		t.Fatalf("go build after the edit: err %v, output:\n%s\nwant a failure in %s", err, out, gen.DefaultOutput)
	}
	first := firstBuildError(out)
	for _, want := range []string{"laserGenIsStale_RunGoGenerate_Billing", "wrong type for method Charge", "have Charge(", ".Ctx, *ChargeCard)", "want Charge(", ".Ctx, ChargeCard)"} {
		if !strings.Contains(first, want) {
			t.Errorf("first build error does not say %q:\n%s", want, first)
		}
	}
	// Regenerating picks the new signature up.
	res, err := gen.Generate(dir, gen.Options{Env: goEnv()})
	if err != nil || res.Err() != nil {
		t.Fatalf("regenerate: %v %v", err, res.Err())
	}
	if _, err := res.Write(); err != nil {
		t.Fatal(err)
	}
	if out, err := goBuild(dir); err != nil {
		t.Fatalf("go build after regenerating: %v\n%s", err, out)
	}
}

// TestRemovedHandlerWithoutRegeneratingFailsTheBuild renames a handler after
// generating: the first build error says the file is stale.
func TestRemovedHandlerWithoutRegeneratingFailsTheBuild(t *testing.T) {
	dir := editedCase(t, ") Charge(ctx", ") ChargeCard(ctx")
	out, err := goBuild(dir)
	first := firstBuildError(out)
	if err == nil || !strings.Contains(first, "laserGenIsStale_RunGoGenerate_Billing") || !strings.Contains(first, "missing method Charge") {
		t.Fatalf("go build after the rename: err %v, output:\n%s\nwant a first error naming laserGenIsStale_RunGoGenerate_Billing and the missing method", err, out)
	}
}

func goBuild(dir string) ([]byte, error) {
	cmd := exec.Command("go", "build", "./...")
	cmd.Dir, cmd.Env = dir, goEnv()
	return cmd.CombinedOutput()
}

// firstBuildError returns the first error of go build's output with its
// indented continuation lines.
func firstBuildError(out []byte) string {
	var b strings.Builder
	for _, line := range strings.Split(string(out), "\n") {
		switch {
		case strings.HasPrefix(line, "#"):
			continue
		case b.Len() == 0 || strings.HasPrefix(line, "\t"):
			b.WriteString(line + "\n")
			continue
		}
		break
	}
	return b.String()
}
