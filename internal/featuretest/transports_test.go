package featuretest

import (
	"fmt"
	"slices"
	"strings"
	"testing"
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

func TestRealServerAddrReturnsTheVariableWhenSet(t *testing.T) {
	const addr = "iggy://iggy:iggy@127.0.0.1:1/laser_test"
	t.Setenv(RealServerEnv, addr)
	r := &skipRecorder{TB: t}
	if got := RealServerAddr(r); got != addr || r.skipped != "" {
		t.Fatalf("RealServerAddr = %q (skipped %q), want %q and no skip", got, r.skipped, addr)
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
	t.Setenv(RealServerEnv, "iggy://iggy:iggy@127.0.0.1:1/laser_test")
	if got := names(); !slices.Equal(got, []string{"embedlog", "iggytest", "iggy"}) {
		t.Fatalf("with %s the transports are %v, want embedlog, iggytest and iggy", RealServerEnv, got)
	}
}

func TestStreamSuffixedKeepsTheQuery(t *testing.T) {
	for in, want := range map[string]string{
		"iggy://iggy:iggy@127.0.0.1:8091/s?protocol=vsr": "iggy://iggy:iggy@127.0.0.1:8091/s_x?protocol=vsr",
		"iggy://iggy:iggy@127.0.0.1:8090/s":              "iggy://iggy:iggy@127.0.0.1:8090/s_x",
	} {
		if got := StreamSuffixed(in, "_x"); got != want {
			t.Errorf("StreamSuffixed(%q) = %q, want %q", in, got, want)
		}
	}
}
