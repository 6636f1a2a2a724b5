package vectors_test

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/lasergo/laser/internal/vectors"
)

func TestTheModulesCopyHoldsEveryKind(t *testing.T) {
	t.Setenv("AGDX_FIXTURES", "")
	t.Setenv("AGDX_SIGNATURE_VECTORS", "")
	agdx := vectors.AGDX.Files(t)
	if len(agdx) < 20 || agdx["agent_command.bin"] == nil {
		t.Fatalf("the AGDX copy holds %d files, agent_command.bin among them: %v", len(agdx), agdx["agent_command.bin"] != nil)
	}
	if sigs := vectors.Signatures.Paths(t); sigs["command_with_context.json"] == "" {
		t.Fatalf("the signature copy holds %v", sigs)
	}
}

func TestAnEnvironmentFolderAddsVectorsAndWinsOnAName(t *testing.T) {
	dir := t.TempDir()
	for name, body := range map[string]string{"agent_command.bin": "newer", "agent_extra.bin": "extra", "notes.txt": "skipped"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	t.Setenv("AGDX_FIXTURES", dir)
	files := vectors.AGDX.Files(t)
	if !bytes.Equal(files["agent_command.bin"], []byte("newer")) || !bytes.Equal(files["agent_extra.bin"], []byte("extra")) {
		t.Fatalf("agent_command.bin = %q, agent_extra.bin = %q", files["agent_command.bin"], files["agent_extra.bin"])
	}
	if _, ok := files["notes.txt"]; ok {
		t.Fatal("a file that is no .bin was taken for a vector")
	}
	if files["agent_event.bin"] == nil {
		t.Fatal("the copy's other vectors are gone")
	}
}

func TestAnEnvironmentFolderThatDoesNotExistIsAnError(t *testing.T) {
	t.Setenv("AGDX_SIGNATURE_VECTORS", filepath.Join(t.TempDir(), "absent"))
	if _, err := vectors.Signatures.Lookup(); err == nil {
		t.Fatal("Lookup took a missing AGDX_SIGNATURE_VECTORS folder for none")
	}
}
