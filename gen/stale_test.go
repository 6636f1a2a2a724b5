package gen_test

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lasergo/laser/gen"
)

// editedCase generates the request case and writes its files, then edits its
// billing.go: new is appended when old is empty, else replaces old.
func editedCase(t *testing.T, old, new string) string {
	t.Helper()
	dir, res := loadCase(t, "request")
	if _, err := res.Write(); err != nil {
		t.Fatal(err)
	}
	if err := gen.CheckUpToDate(dir, gen.Options{Env: goEnv()}); err != nil {
		t.Fatalf("freshly generated: %v", err)
	}
	path := filepath.Join(dir, "billing.go")
	src, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var edited string
	if old == "" {
		edited = string(src) + new
	} else {
		edited = strings.Replace(string(src), old, new, 1)
	}
	if edited == string(src) {
		t.Fatalf("the request case no longer holds %q", old)
	}
	if err := os.WriteFile(path, []byte(edited), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

const addedHandler = `
//laser:handle op=refund
func (b *Billing) Refund(ctx *runtime.Ctx, in ChargeCard) error { return nil }
`

// Adding a handler without regenerating still builds; CheckUpToDate (which
// the generated test calls) says the file is stale.
func TestCheckUpToDateFindsAnAddedHandler(t *testing.T) {
	dir := editedCase(t, "", addedHandler)
	err := gen.CheckUpToDate(dir, gen.Options{Env: goEnv()})
	if !errors.Is(err, gen.ErrStale) || !strings.Contains(err.Error(), "laser_gen.go is stale: run go generate") {
		t.Fatalf("CheckUpToDate = %v, want laser_gen.go is stale: run go generate", err)
	}
}

func TestCheckUpToDateFindsARenamedOperation(t *testing.T) {
	dir := editedCase(t, "op=charge", "op=charge.card")
	if err := gen.CheckUpToDate(dir, gen.Options{Env: goEnv()}); !errors.Is(err, gen.ErrStale) {
		t.Fatalf("CheckUpToDate = %v, want ErrStale", err)
	}
}

// A directive edited into a mistake makes the check report the diagnostics.
func TestCheckUpToDateReportsADirectiveThatNoLongerGenerates(t *testing.T) {
	dir := editedCase(t, "op=charge", "op=charge colour=red")
	err := gen.CheckUpToDate(dir, gen.Options{Env: goEnv()})
	if !errors.Is(err, gen.ErrStale) || !strings.Contains(err.Error(), `has no key "colour"`) {
		t.Fatalf("CheckUpToDate = %v, want ErrStale with the diagnostic", err)
	}
}

// The generated test makes go test fail, naming the fix, when a handler was
// added without regenerating.
func TestGeneratedTestFailsGoTestWhenStale(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go test in a scratch module")
	}
	dir := editedCase(t, "", addedHandler)
	cmd := exec.Command("go", "test", "-count=1", "./...")
	cmd.Dir, cmd.Env = dir, goEnv()
	out, err := cmd.CombinedOutput()
	if err == nil || !strings.Contains(string(out), "TestLaserGenIsUpToDate") || !strings.Contains(string(out), "laser_gen.go is stale: run go generate") {
		t.Fatalf("go test: err %v, output:\n%s\nwant TestLaserGenIsUpToDate failing with laser_gen.go is stale: run go generate", err, out)
	}
}

// lasergen does not overwrite a laser_gen_test.go it did not write.
func TestHandWrittenTestOutputIsNotOverwritten(t *testing.T) {
	dir, _ := loadCase(t, "request")
	own := []byte("package app_test\n")
	if err := os.WriteFile(filepath.Join(dir, gen.TestOutput(gen.DefaultOutput)), own, 0o644); err != nil {
		t.Fatal(err)
	}
	res, err := gen.Generate(dir, gen.Options{Env: goEnv()})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Diagnostics) != 1 || res.Diagnostics[0].Problem.Title != "output file is not generated" || res.Diagnostics[0].Pos.Filename != "laser_gen_test.go" {
		t.Fatalf("diagnostics %v, want one \"output file is not generated\" for laser_gen_test.go", res.Diagnostics)
	}
}
