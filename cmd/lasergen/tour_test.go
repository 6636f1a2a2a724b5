package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/lasergo/laser/iggy"
	"github.com/lasergo/laser/iggytest"
	"github.com/lasergo/laser/runtime"
	"github.com/lasergo/laser/wire"
)

// tourFileRE finds the README tour's files: a "<!-- tour file: path -->"
// marker, then the fenced Go block that is the file's whole content.
var tourFileRE = regexp.MustCompile("(?s)<!-- tour file: (\\S+) -->\n```go\n(.*?)```\n")

// TestReadmeTourInOwnModule follows the README's tour as a newcomer does, in
// a module of their own outside this repository: go mod init, depend on
// laser-go (here through a replace to this checkout, in place of
// go get ...@latest), go get -tool lasergen, paste the tour's files, then
// go mod tidy, go generate, go build, go vet and go run. It proves that the
// documented //go:generate go tool lasergen line survives go mod tidy and
// that the tour's snippets are complete programs.
//
// The scratch module works offline (GOPROXY=off, GOFLAGS=-mod=mod): its
// requirements come from the module cache, which go mod download in this
// checkout fills (a no-op when .ci/run already did), and go.sum is seeded
// from this checkout's. Two concessions to being offline: GOSUMDB=off, so
// sums missing from the seed are taken from the cache (which verified them
// when it downloaded them), and go mod tidy -e, because tidy also resolves
// the test imports of dependencies whose modules predate graph pruning
// (the Iggy SDK's tests import testify), which no build here needs and a
// fresh cache does not hold. A missing dependency of the tour's own code or
// of lasergen still fails go generate or go build below.
func TestReadmeTourInOwnModule(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a scratch module with the go command")
	}
	root := repoRoot(t)
	readme, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	files := tourFileRE.FindAllStringSubmatch(string(readme), -1)
	if len(files) < 2 {
		t.Fatalf("README.md has %d tour files, want the agent and the program", len(files))
	}
	download := exec.Command("go", "mod", "download")
	download.Dir = root
	if out, err := download.CombinedOutput(); err != nil {
		t.Logf("go mod download in the checkout: %v\n%s", err, out)
	}
	dir := t.TempDir()
	env := scratchEnv()
	goIn(t, dir, env, "mod", "init", "example.com/shop")
	goIn(t, dir, env, "mod", "edit", "-replace=github.com/lasergo/laser="+root)
	sum, err := os.ReadFile(filepath.Join(root, "go.sum"))
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(dir, "go.sum"), sum)
	goIn(t, dir, env, "get", "-tool", "github.com/lasergo/laser/cmd/lasergen")
	for _, f := range files {
		writeFile(t, filepath.Join(dir, filepath.FromSlash(f[1])), []byte(f[2]))
	}
	goIn(t, dir, env, "mod", "tidy", "-e")
	goIn(t, dir, env, "generate", "./...")
	if _, err := os.Stat(filepath.Join(dir, "billing", "laser_gen.go")); err != nil {
		t.Fatalf("go generate wrote no billing/laser_gen.go: %v", err)
	}
	// Tidy again with the generated code present, as a user would after
	// generating: the tool must keep working.
	goIn(t, dir, env, "mod", "tidy", "-e")
	goIn(t, dir, env, "generate", "./...")
	goIn(t, dir, env, "build", "./...")
	goIn(t, dir, env, "vet", "./...")
	goIn(t, dir, env, "build", "-o", "shop", ".")
	shop := filepath.Join(dir, "shop")

	// Step 4: on the embedded log.
	runShop(t, shop, append(env[:len(env):len(env)], "LASER_IGGY_ADDR="))

	// Step 5: on an Iggy server (laser dev serves this same test server);
	// the refused charge is parked in agent.dlq.
	srv := iggytest.Start(t)
	addr := "iggy://iggy:iggy@" + srv.Addr() + "/shop"
	runShop(t, shop, append(env[:len(env):len(env)], "LASER_IGGY_ADDR="+addr))
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	tr, err := iggy.Dial(ctx, addr)
	if err != nil {
		t.Fatal(err)
	}
	defer tr.Close()
	var capsules []string
	for p := uint32(0); p < 4; p++ {
		recs, err := tr.ReadRange(ctx, runtime.TopicDLQ, p, 0, 10)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range recs {
			if d, err := wire.DecodeDeadLetter(r.Payload); err == nil && d.Detail != nil {
				capsules = append(capsules, *d.Detail)
			}
		}
	}
	if len(capsules) != 1 || capsules[0] != "rejected: cannot charge 0 cents" {
		t.Fatalf("agent.dlq holds %q, want the refused charge", capsules)
	}
}

// runShop runs the tour's program and checks what it printed.
func runShop(t *testing.T, shop string, env []string) {
	t.Helper()
	cmd := exec.Command(shop)
	cmd.Env = env
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("the tour's program: %v\n%s", err, out)
	}
	for _, want := range []string{"charged 999 cents: ch-1\n", "billing refused: cannot charge 0 cents\n"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("the tour's program printed:\n%s\nwant a line %q", out, strings.TrimSpace(want))
		}
	}
}

// scratchEnv is the go command's environment for a module outside this
// repository: no workspace, no network, requirements completed from the
// module cache.
func scratchEnv() []string {
	flags := strings.TrimSpace(os.Getenv("GOFLAGS") + " -mod=mod")
	return append(os.Environ(), "GOFLAGS="+flags, "GOWORK=off", "GOPROXY=off", "GOSUMDB=off")
}

// goIn runs the go command in dir and returns its combined output; a failure
// fails the test with that output.
func goIn(t *testing.T, dir string, env []string, args ...string) string {
	t.Helper()
	cmd := exec.Command("go", args...)
	cmd.Dir, cmd.Env = dir, env
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("go %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

func writeFile(t *testing.T, path string, data []byte) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
}
