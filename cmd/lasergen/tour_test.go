package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
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

// commandsRE finds the README's install blocks: a shell block after a
// "<!-- tour commands -->" or "<!-- workspace commands -->" marker.
var commandsRE = regexp.MustCompile("(?s)<!-- (\\S+) commands -->\n```sh\n(.*?)```\n")

// tourRunRE finds the tour's run line and the output it documents: the shell
// block whose first line is the tidy, generate and run line.
var tourRunRE = regexp.MustCompile("(?s)```sh\n(go mod tidy && go generate ./... && go run .)\n(.*?)```\n")

// dlqShowRE finds the capsule the tour's step 4 shows.
var dlqShowRE = regexp.MustCompile(`laser dlq show (\d+:\d+) `)

// cloneLine is the install block's first command; the test stands a link to
// this checkout where it would put the clone.
const cloneLine = "git clone https://github.com/lasergo/laser ../laser"

// TestReadmeTourInOwnModule follows the README as a newcomer does, in a
// module of their own outside this repository: it runs the install block's
// commands exactly as written (the clone is a link to this checkout at
// ../laser, where the block clones it), pastes the tour's files, runs the
// documented tidy, generate and run line and compares what the program
// printed with the lines the README says it prints; then it runs the same
// program against an Iggy server, as step 4 does, and reads agent.dlq.
//
// The scratch module uses the go command's configured GOPROXY (GOFLAGS
// gains -mod=mod, GOWORK is off), so it needs the module cache that go mod
// download in this checkout fills, or the module proxy.
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
	install := installCommands(t, string(readme), "tour")
	run := tourRunRE.FindStringSubmatch(string(readme))
	if run == nil {
		t.Fatal("README.md has no tour block starting with: go mod tidy && go generate ./... && go run .")
	}
	download := exec.Command("go", "mod", "download")
	download.Dir = root
	if out, err := download.CombinedOutput(); err != nil {
		t.Logf("go mod download in the checkout: %v\n%s", err, out)
	}
	dir := besideClone(t, root)
	env := scratchEnv()
	for _, args := range install {
		goIn(t, dir, env, args[1:]...)
	}
	for _, f := range files {
		writeFile(t, filepath.Join(dir, filepath.FromSlash(f[1])), []byte(f[2]))
	}
	for _, step := range strings.Split(run[1], " && ") {
		if step == "go run ." {
			break
		}
		goIn(t, dir, env, strings.Fields(step)[1:]...)
	}
	if _, err := os.Stat(filepath.Join(dir, "billing", "laser_gen.go")); err != nil {
		t.Fatalf("go generate wrote no billing/laser_gen.go: %v", err)
	}
	want := documentedOutput(run[2])
	noIggy := append(env[:len(env):len(env)], "LASER_IGGY_ADDR=")
	if got := goRun(t, dir, noIggy); got != want {
		t.Errorf("go run . printed:\n%s\nthe README says:\n%s", got, want)
	}
	// Tidy again with the generated code present, as a user would after
	// generating: the tool must keep working.
	goIn(t, dir, env, "mod", "tidy")
	goIn(t, dir, env, "generate", "./...")
	goIn(t, dir, env, "vet", "./...")
	goIn(t, dir, env, "build", "-o", "shop", ".")
	shop := filepath.Join(dir, "shop")

	// Step 4: on an Iggy server (laser dev serves this same test server);
	// the refund of a charge that does not exist is parked in agent.dlq.
	srv := iggytest.Start(t, iggytest.Config{})
	addr := "iggy://iggy:iggy@" + srv.Addr() + "/shop"
	runShop(t, shop, append(env[:len(env):len(env)], "LASER_IGGY_ADDR="+addr), want)
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	tr, err := iggy.Dial(ctx, addr, iggy.Config{})
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
				capsules = append(capsules, fmt.Sprintf("%d:%d %s", p, r.Offset, *d.Detail))
			}
		}
	}
	shown := dlqShowRE.FindStringSubmatch(string(readme))
	if shown == nil {
		t.Fatal("README.md shows no capsule with laser dlq show P:O")
	}
	// Only the refund: the refused charge was answered, so it is committed.
	if want := []string{shown[1] + ` rejected: no charge "ch-7"`}; !slices.Equal(capsules, want) {
		t.Fatalf("agent.dlq holds %q, want %q, the capsule the README shows", capsules, want)
	}
}

// TestReadmeWorkspaceInstall runs the README's other install block, a
// go.work beside the clone instead of a replace, exactly as written, then
// generates, builds and vets a small agent in the new module.
func TestReadmeWorkspaceInstall(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a scratch module with the go command")
	}
	root := repoRoot(t)
	readme, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	dir := besideClone(t, root)
	env := append(os.Environ(), "GOWORK=") // the go.work the block writes
	for _, args := range installCommands(t, string(readme), "workspace") {
		goIn(t, dir, env, args[1:]...)
	}
	// The go:generate line is spliced in so that go generate in this
	// repository does not take it for one of this file's own.
	writeFile(t, filepath.Join(dir, "greeter", "greeter.go"), []byte(`// Package greeter greets.
package greeter

`+"//go:"+`generate go tool lasergen

import "github.com/lasergo/laser/runtime"

// Hello asks for a greeting.
type Hello struct{ Name string }

// Greeting is the answer.
type Greeting struct{ Text string }

// Greeter answers hellos.
//
//laser:agent id=greeter listen=greeter.commands respond=greeter.responses
type Greeter struct{}

//laser:handle op=hello
func (Greeter) Hello(ctx *runtime.Ctx, in Hello) (Greeting, error) {
	return Greeting{Text: "hello, " + in.Name}, nil
}
`))
	goIn(t, dir, env, "generate", "./...")
	if _, err := os.Stat(filepath.Join(dir, "greeter", "laser_gen.go")); err != nil {
		t.Fatalf("go generate wrote no greeter/laser_gen.go: %v", err)
	}
	goIn(t, dir, env, "build", "./...")
	goIn(t, dir, env, "vet", "./...")
}

// besideClone makes an empty directory for a new module with a link to this
// checkout beside it, at ../laser, where the README's install blocks clone
// laser-go.
func besideClone(t *testing.T, root string) string {
	t.Helper()
	parent := t.TempDir()
	if err := os.Symlink(root, filepath.Join(parent, "laser")); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(parent, "shop")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

// installCommands returns the commands of the README's install block after
// the "<!-- name commands -->" marker, each split into its words: the
// clone, then go commands only, so the test can run them as written.
func installCommands(t *testing.T, readme, name string) [][]string {
	t.Helper()
	var block string
	for _, m := range commandsRE.FindAllStringSubmatch(readme, -1) {
		if m[1] == name {
			block = m[2]
		}
	}
	if block == "" {
		t.Fatalf("README.md has no <!-- %s commands --> block", name)
	}
	joined := strings.ReplaceAll(block, "\\\n", " ")
	lines := strings.Split(strings.TrimSpace(joined), "\n")
	if lines[0] != cloneLine {
		t.Fatalf("the install block starts with %q, want %q", lines[0], cloneLine)
	}
	var cmds [][]string
	for _, line := range lines[1:] {
		args := strings.Fields(line)
		if args[0] != "go" || strings.ContainsAny(line, "'\"$;|&") {
			t.Fatalf("install command %q: the test runs plain go commands only", line)
		}
		cmds = append(cmds, args)
	}
	return cmds
}

// documentedOutput turns the "# line" comments under the run line into the
// output they document.
func documentedOutput(block string) string {
	var b strings.Builder
	for line := range strings.Lines(block) {
		b.WriteString(strings.TrimPrefix(line, "# "))
	}
	return b.String()
}

// runShop runs the tour's program and checks it printed what the README
// says.
func runShop(t *testing.T, shop string, env []string, want string) {
	t.Helper()
	cmd := exec.Command(shop)
	cmd.Env = env
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("the tour's program: %v\n%s%s", err, out, stderr.String())
	}
	if string(out) != want {
		t.Errorf("the tour's program printed:\n%s\nthe README says:\n%s", out, want)
	}
}

// scratchEnv is the go command's environment for a module outside this
// repository: no workspace, requirements completed from the module cache or
// the configured proxy.
func scratchEnv() []string {
	flags := strings.TrimSpace(os.Getenv("GOFLAGS") + " -mod=mod")
	return append(os.Environ(), "GOFLAGS="+flags, "GOWORK=off")
}

// goRun runs go run . in dir and returns what the program printed on
// stdout; its log goes to stderr, which a failure shows.
func goRun(t *testing.T, dir string, env []string) string {
	t.Helper()
	cmd := exec.Command("go", "run", ".")
	cmd.Dir, cmd.Env = dir, env
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go run .: %v\n%s%s", err, out, stderr.String())
	}
	return string(out)
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
