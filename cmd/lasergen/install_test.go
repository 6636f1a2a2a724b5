package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestInstallDocAddsTheIntegrationModules follows docs/install.md after the
// README's install block: in a new module beside the clone it runs the
// integration block's commands exactly as written, then builds a program
// importing otellaser, redisdedup and bridge/a2a.
func TestInstallDocAddsTheIntegrationModules(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a scratch module with the go command")
	}
	root := repoRoot(t)
	readme, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	doc, err := os.ReadFile(filepath.Join(root, "docs", "install.md"))
	if err != nil {
		t.Fatal(err)
	}
	var block string
	for _, m := range commandsRE.FindAllStringSubmatch(string(doc), -1) {
		if m[1] == "integration" {
			block = m[2]
		}
	}
	if block == "" {
		t.Fatal("docs/install.md has no <!-- integration commands --> block")
	}
	dir := besideClone(t, root)
	env := scratchEnv()
	for _, args := range installCommands(t, string(readme), "tour") {
		goIn(t, dir, env, args[1:]...)
	}
	for _, line := range strings.Split(strings.TrimSpace(strings.ReplaceAll(block, "\\\n", " ")), "\n") {
		args := strings.Fields(line)
		if args[0] != "go" || strings.ContainsAny(line, "'\"$;|&") {
			t.Fatalf("docs/install.md runs %q: the test runs plain go commands only", line)
		}
		goIn(t, dir, env, args[1:]...)
	}
	writeFile(t, filepath.Join(dir, "main.go"), []byte(`// Command shop imports every integration module.
package main

import (
	_ "github.com/lasergo/laser/bridge/a2a"
	_ "github.com/lasergo/laser/otellaser"
	_ "github.com/lasergo/laser/redisdedup"
)

func main() {}
`))
	goIn(t, dir, env, "mod", "tidy")
	goIn(t, dir, env, "build", "-o", os.DevNull, ".")
}
