package featuretest

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/apache/iggy/foreign/go/client"
	"github.com/apache/iggy/foreign/go/client/tcp"

	"github.com/lasergo/laser/iggytest"
	"github.com/lasergo/laser/runtime"
)

// skipRecorder is a testing.TB that records a skip instead of ending the
// test, so the skip's message can be checked.
type skipRecorder struct {
	testing.TB
	skipped string
}

func (r *skipRecorder) Helper() {}

func (r *skipRecorder) Skip(args ...any) { r.skipped = fmt.Sprint(args...) }

func TestRealServerAddrSkipsSayingTheVariableIsUnsetAndHowToSetIt(t *testing.T) {
	t.Setenv(RealServerEnv, "")
	r := &skipRecorder{TB: t}
	RealServerAddr(r)
	for _, want := range []string{"LASER_IGGY_ADDR is not set", "set it to iggy://"} {
		if !strings.Contains(r.skipped, want) {
			t.Errorf("skip message %q does not say %q", r.skipped, want)
		}
	}
}

func TestRealServerAddrGivesAFreshStreamOnTheNamedServer(t *testing.T) {
	s := iggytest.Start(t, iggytest.Config{})
	addr := "iggy://iggy:iggy@" + s.Addr() + "/laser_test"
	t.Setenv(RealServerEnv, addr)
	r := &skipRecorder{TB: t}
	a, b := RealServerAddr(r), RealServerAddr(r)
	if r.skipped != "" || a == b || !strings.HasPrefix(a, addr+"_") || !strings.HasPrefix(b, addr+"_") {
		t.Fatalf("RealServerAddr = %q and %q (skipped %q), want two fresh streams after %q", a, b, r.skipped, addr)
	}
}

func TestTransportsAddTheRealServerOnlyWhenNamed(t *testing.T) {
	names := func() []string {
		var out []string
		for _, tr := range Transports(t, "featuretest") {
			out = append(out, tr.Name)
		}
		return out
	}
	t.Setenv(RealServerEnv, "")
	if got := names(); !slices.Equal(got, []string{"embedlog", "iggytest"}) {
		t.Fatalf("without %s the transports are %v, want embedlog and iggytest", RealServerEnv, got)
	}
	t.Setenv(RealServerEnv, "iggy://iggy:iggy@"+iggytest.Start(t, iggytest.Config{}).Addr()+"/laser_test")
	if got := names(); !slices.Equal(got, []string{"embedlog", "iggytest", "iggy"}) {
		t.Fatalf("with %s the transports are %v, want embedlog, iggytest and iggy", RealServerEnv, got)
	}
}

// TestARealServerTestPassesTwiceOnOneServer is issue 45's failure, on the
// test server standing in for a real one: a test that publishes and counts
// its records runs twice with one LASER_IGGY_ADDR. Each run sees only its
// own record, and no stream of either run is left on the server.
func TestARealServerTestPassesTwiceOnOneServer(t *testing.T) {
	s := iggytest.Start(t, iggytest.Config{})
	t.Setenv(RealServerEnv, "iggy://iggy:iggy@"+s.Addr()+"/laser_test")
	for run := range 2 {
		t.Run(fmt.Sprint("run", run), func(t *testing.T) {
			for _, tr := range Transports(t, "featuretest") {
				if tr.Name != "iggy" {
					continue
				}
				log := tr.New(t)
				if err := log.EnsureTopics(t.Context(), 1, "items"); err != nil {
					t.Fatal(err)
				}
				if _, err := log.Publish(t.Context(), "items", runtime.Outgoing{Payload: []byte("item")}); err != nil {
					t.Fatal(err)
				}
				if n, err := log.NextOffset(t.Context(), "items", 0); err != nil || n != 1 {
					t.Fatalf("the log holds %d items (%v), want this run's 1", n, err)
				}
			}
		})
	}
	c, err := client.NewIggyClient(client.WithTcp(tcp.WithServerAddress(s.Addr())))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	if _, err := c.LoginUser("iggy", "iggy"); err != nil {
		t.Fatal(err)
	}
	streams, err := c.GetStreams()
	if err != nil {
		t.Fatal(err)
	}
	for _, st := range streams {
		t.Errorf("stream %s left on the server", st.Name)
	}
}
