package iggy_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/lasergo/laser/iggy"
	"github.com/lasergo/laser/iggytest"
)

func TestDialEnvReadsTheReferenceVariables(t *testing.T) {
	s := iggytest.Start(t)
	t.Setenv(iggy.EnvConnectionString, "iggy://iggy:iggy@"+s.Addr())
	t.Setenv(iggy.EnvStream, "from_env")
	tr, err := iggy.DialEnv(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = tr.Close() })
	if err := tr.EnsureTopics(t.Context(), 1, "t"); err != nil {
		t.Fatal(err)
	}
	// LASER_STREAM overrides the connection string's path.
	t.Setenv(iggy.EnvConnectionString, "iggy://iggy:iggy@"+s.Addr()+"/other")
	tr2, err := iggy.DialEnv(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = tr2.Close() })
	if _, err := tr2.Partitions(t.Context(), "t"); err != nil {
		t.Fatalf("the topic created on stream from_env is not visible: %v", err)
	}
}

func TestDialEnvNamesWhatIsMissing(t *testing.T) {
	t.Setenv(iggy.EnvConnectionString, "")
	t.Setenv(iggy.EnvStream, "")
	if _, err := iggy.DialEnv(t.Context()); !errors.Is(err, iggy.ErrConnString) || !strings.Contains(err.Error(), iggy.EnvConnectionString) {
		t.Fatalf("err = %v, want one naming %s", err, iggy.EnvConnectionString)
	}
	t.Setenv(iggy.EnvConnectionString, "iggy://iggy:iggy@127.0.0.1:1")
	if _, err := iggy.DialEnv(t.Context()); !errors.Is(err, iggy.ErrConnString) || !strings.Contains(err.Error(), iggy.EnvStream) {
		t.Fatalf("err = %v, want one naming %s", err, iggy.EnvStream)
	}
}
