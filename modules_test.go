package laser_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// integrationModules are the modules (by path prefix) only the
// integrations in modules of their own need: go-redis (redisdedup), the
// OpenTelemetry SDKs (otellaser), cobra (cmd/laser) and gRPC, which the A2A
// SDK brings (bridge/a2a). A program that imports the runtime and the
// embedded log must not find them in its module graph.
var integrationModules = []string{
	"github.com/redis/go-redis/",
	"go.opentelemetry.io/otel/sdk",
	"github.com/spf13/cobra",
	"google.golang.org/grpc",
}

// TestRuntimeModuleGraphLeavesOutIntegrations starts a new module outside
// this repository that imports only runtime and embedlog (laser-go replaced
// by this checkout), tidies it and fails when go list -m all names a module
// of an integration: with module graph pruning a dependent sees every
// requirement of the root go.mod, test-only ones included, so none of the
// root module's packages or tests may import them.
func TestRuntimeModuleGraphLeavesOutIntegrations(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a scratch module with the go command")
	}
	root, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	write := func(name, content string) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("go.mod", "module example.com/lean\n\ngo 1.26.0\n\n"+
		"require github.com/lasergo/laser v0.0.0-00010101000000-000000000000\n\n"+
		"replace github.com/lasergo/laser => "+root+"\n")
	write("main.go", `package main

import (
	"fmt"

	"github.com/lasergo/laser/embedlog"
	"github.com/lasergo/laser/runtime"
)

func main() {
	client := runtime.NewClient(embedlog.New("lean", embedlog.Config{}), runtime.ClientConfig{})
	fmt.Println(client != nil)
}
`)
	// No workspace (the scratch module is outside it); requirements come
	// from the module cache or the configured proxy.
	env := append(os.Environ(), "GOWORK=off", "GOFLAGS="+strings.TrimSpace(os.Getenv("GOFLAGS")+" -mod=mod"))
	goCmd := func(args ...string) string {
		t.Helper()
		cmd := exec.Command("go", args...)
		cmd.Dir, cmd.Env = dir, env
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("go %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return string(out)
	}
	goCmd("mod", "tidy")
	goCmd("build", "./...")
	listed := goCmd("list", "-m", "all")
	for line := range strings.Lines(listed) {
		mod, _, _ := strings.Cut(strings.TrimSpace(line), " ")
		for _, bad := range integrationModules {
			if strings.HasPrefix(mod, bad) {
				t.Errorf("a module importing only runtime and embedlog requires %s (go list -m all: %s)", bad, strings.TrimSpace(line))
			}
		}
	}
}
