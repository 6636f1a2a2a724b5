package main

import (
	"encoding/json"
	"io"
	"log"
	"net"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/lasergo/laser/iggytest"
	"github.com/lasergo/laser/internal/realiggy"
)

// realServer is LASER_IGGY_ADDR as the test process started with it (tests
// change the variable to exercise the command's default).
var realServer = os.Getenv("LASER_IGGY_ADDR")

func TestMain(m *testing.M) {
	// The Iggy SDK logs heartbeat failures to the standard logger, as in main.
	log.SetOutput(io.Discard)
	os.Exit(m.Run())
}

// serverAddr returns the connection string of an empty stream: on the real
// server when LASER_IGGY_ADDR names one (a fresh stream of t's own, deleted
// when t ends), else on an in-process test server.
func serverAddr(t *testing.T) string {
	t.Helper()
	if realServer == "" {
		return "iggy://iggy:iggy@" + iggytest.Start(t, iggytest.Config{}).Addr() + "/laser"
	}
	return realiggy.Stream(t, realServer)
}

// Flags may come before or after positional arguments and the subcommand.
func TestFlagsInAnyOrder(t *testing.T) {
	addr, _ := poisoned(t)
	var views []capsuleView
	for _, args := range [][]string{
		{"dlq", "list", "--addr", addr, "--json"},
		{"--json", "dlq", "list", "--addr", addr},
		{"dlq", "--json", "list", "--addr", addr},
	} {
		code, out, errOut := laser(t, args...)
		if code != exitOK || json.Unmarshal([]byte(out), &views) != nil || len(views) != 2 {
			t.Fatalf("laser %s: exit %d, stdout %q, stderr %q", strings.Join(args, " "), code, out, errOut)
		}
	}
	first := views[0].Capsule
	for _, args := range [][]string{
		{"dlq", "show", first, "--json", "--addr", addr},
		{"dlq", "show", "--addr", addr, first, "--json"},
	} {
		code, out, errOut := laser(t, args...)
		var shown shownCapsule
		if code != exitOK || json.Unmarshal([]byte(out), &shown) != nil || shown.Capsule != first {
			t.Fatalf("laser %s: exit %d, stdout %q, stderr %q", strings.Join(args, " "), code, out, errOut)
		}
	}
	code, out, errOut := laser(t, "tail", "agent.commands", "-n", "3", "--addr", addr, "--from-beginning")
	if code != exitOK || strings.Count(out, "agent.commands ") != 3 {
		t.Fatalf("tail with flags after the topic: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
}

func TestHelpIsPrintedOnceWithExitZero(t *testing.T) {
	code, out, errOut := laser(t, "dlq", "list", "--help")
	if code != exitOK || strings.Count(out, "Usage:") != 1 || !strings.Contains(out, "--addr") || errOut != "" {
		t.Fatalf("help: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
}

func TestBadUsageExitsTwo(t *testing.T) {
	for _, args := range [][]string{
		{"tail", "-n", "-1", "--addr", "iggy://iggy:iggy@127.0.0.1:1/x", "t"},
		{"tail"},
		{"dlq", "show"},
		{"dlq", "show", "not-a-position", "--addr", "iggy://iggy:iggy@127.0.0.1:1/x"},
		{"dlq", "redrive", "--addr", "iggy://iggy:iggy@127.0.0.1:1/x"},
		{"dlq", "redrive", "--all", "--addr", "iggy://iggy:iggy@127.0.0.1:1/x"},
		{"dlq", "list", "--no-such-flag"},
		{"dlq", "frobnicate"},
		{"version", "extra"},
	} {
		if code, _, errOut := laser(t, args...); code != exitUsage || errOut == "" {
			t.Errorf("laser %s: exit %d (stderr %q), want %d with a message", strings.Join(args, " "), code, errOut, exitUsage)
		}
	}
}

// Passwords and tokens never appear: not in --help (whose default comes
// from LASER_IGGY_ADDR), not in an unparsable address echoed back, not in a
// refused login.
func TestPasswordsAreRedactedEverywhere(t *testing.T) {
	const secret = "s3cret-Pa55"
	srv := iggytest.Start(t, iggytest.Config{})
	t.Setenv("LASER_IGGY_ADDR", "iggy://iggy:"+secret+"@"+srv.Addr()+"/laser")
	for _, args := range [][]string{
		{"dlq", "list", "--help"},
		{"tail", "--help"},
		{"dlq", "list"}, // wrong password
		{"dlq", "list", "--json"},
		{"dlq", "list", "--addr", "iggy://iggy:" + secret + "@127.0.0.1:notaport/x"},
		{"dlq", "list", "--addr", "iggy://iggy:" + secret + "@host:1/a b\x7f"},
		{"tail", "--addr", "iggy+pat://" + secret + "@127.0.0.1:1/x/y", "t"},
		{"dev", "--password", secret, "--addr", "0.0.0.0:1"},
	} {
		code, out, errOut := laser(t, args...)
		if strings.Contains(out+errOut, secret) {
			t.Errorf("laser %s (exit %d) printed the secret:\n%s%s", strings.Join(args, " "), code, out, errOut)
		}
	}
	_, out, _ := laser(t, "dlq", "list", "--help")
	if !strings.Contains(out, "iggy://iggy:xxxxx@"+srv.Addr()+"/laser") {
		t.Errorf("help does not show the redacted default address:\n%s", out)
	}
	code, _, errOut := laser(t, "dlq", "list")
	if code != exitConnect || !strings.Contains(errOut, "refused the credentials") {
		t.Errorf("wrong password: exit %d, stderr %q", code, errOut)
	}
}

// dlq list names the source topic, shows when the capsule was written and
// marks the capsules already redriven; redrive needs no --source-topic.
func TestDLQListNamesSourcesShowsTimeAndMarksRedriven(t *testing.T) {
	addr, _ := poisoned(t)
	code, out, errOut := laser(t, "dlq", "list", "--addr", addr)
	if code != exitOK || !strings.Contains(out, "TIME (UTC)") || strings.Count(out, "agent.commands ") != 2 || strings.Contains(out, "yes, to") {
		t.Fatalf("list before redrive: exit %d\n%s%s", code, out, errOut)
	}
	var views []capsuleView
	_, out, _ = laser(t, "dlq", "list", "--addr", addr, "--json")
	if err := json.Unmarshal([]byte(out), &views); err != nil {
		t.Fatal(err)
	}
	if views[0].Time.IsZero() || !strings.HasPrefix(views[0].Source, "agent.commands ") || views[0].SourceIDs == "" {
		t.Fatalf("view %+v", views[0])
	}
	code, out, errOut = laser(t, "dlq", "redrive", views[0].Capsule, "--addr", addr, "--keys", ledgerKeys(t))
	if code != exitOK || !strings.Contains(out, "republished at agent.commands ") {
		t.Fatalf("redrive without --source-topic: exit %d\n%s%s", code, out, errOut)
	}
	_, out, _ = laser(t, "dlq", "list", "--addr", addr, "--json")
	if err := json.Unmarshal([]byte(out), &views); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(views[0].Redriven, "agent.commands ") || views[1].Redriven != "" {
		t.Fatalf("after redriving %s: %+v", views[0].Capsule, views)
	}
	_, out, _ = laser(t, "dlq", "list", "--addr", addr)
	if strings.Count(out, "yes, to agent.commands") != 1 {
		t.Fatalf("list after redrive:\n%s", out)
	}
}

func TestDLQListRefusesATopicWithoutCapsules(t *testing.T) {
	addr, _ := poisoned(t)
	code, out, errOut := laser(t, "dlq", "list", "--addr", addr, "--topic", "agent.commands")
	if code != exitFailed || out != "" || !strings.Contains(errOut, "none is a dead-letter capsule") {
		t.Fatalf("exit %d, stdout %q, stderr %q", code, out, errOut)
	}
}

// Positions the topic does not hold are explained in our words, naming the
// partition asked for (the SDK names another).
func TestDLQShowExplainsAPositionTheTopicDoesNotHold(t *testing.T) {
	addr, _ := poisoned(t)
	code, _, errOut := laser(t, "dlq", "show", "9:0", "--addr", addr)
	if code != exitFailed || !strings.Contains(errOut, "agent.dlq has partitions 0 to 1; 9:0 names partition 9") {
		t.Fatalf("partition 9: exit %d, stderr %q", code, errOut)
	}
	code, _, errOut = laser(t, "dlq", "show", "0:999", "--addr", addr)
	if code != exitFailed || !strings.Contains(errOut, "no record at 0:999 in agent.dlq") {
		t.Fatalf("offset 999: exit %d, stderr %q", code, errOut)
	}
	code, _, errOut = laser(t, "dlq", "list", "--topic", "nope", "--addr", addr)
	if code != exitFailed || !strings.Contains(errOut, "topic nope does not exist in stream ") {
		t.Fatalf("missing topic: exit %d, stderr %q", code, errOut)
	}
}

// A server that does not speak Iggy is a connection error in our words, not
// the SDK's bare "error".
func TestANonIggyEndpointIsExplained(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			_, _ = c.Write([]byte("HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n"))
			c.Close()
		}
	}()
	code, _, errOut := laser(t, "dlq", "list", "--timeout", "2s", "--addr", "iggy://iggy:iggy@"+l.Addr().String()+"/laser")
	if code != exitConnect || !strings.Contains(errOut, "iggy://iggy:xxxxx@"+l.Addr().String()) || !strings.Contains(errOut, "did not answer as an Iggy") {
		t.Fatalf("exit %d, stderr %q", code, errOut)
	}
}

func TestDevOnABusyPortSuggestsAnotherAddr(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	_, port, _ := net.SplitHostPort(l.Addr().String())
	n, _ := strconv.Atoi(port)
	code, _, errOut := laser(t, "dev", "--addr", l.Addr().String(), "--console", "127.0.0.1:0")
	if code != exitFailed || !strings.Contains(errOut, "in use") || !strings.Contains(errOut, "--addr 127.0.0.1:"+strconv.Itoa(n+1)) {
		t.Fatalf("exit %d, stderr %q", code, errOut)
	}
}

func TestVersion(t *testing.T) {
	code, out, _ := laser(t, "version")
	if code != exitOK || !strings.HasPrefix(out, "laser ") || !strings.Contains(out, "\ngo go1.") {
		t.Fatalf("version: exit %d\n%s", code, out)
	}
	var v versionInfo
	code, out, _ = laser(t, "version", "--json")
	if code != exitOK || json.Unmarshal([]byte(out), &v) != nil || v.Laser == "" || !strings.HasPrefix(v.Go, "go1.") {
		t.Fatalf("version --json: exit %d\n%s", code, out)
	}
}

func TestCompletionScripts(t *testing.T) {
	for _, shell := range []string{"bash", "zsh", "fish"} {
		code, out, errOut := laser(t, "completion", shell)
		if code != exitOK || !strings.Contains(out, "laser") {
			t.Errorf("completion %s: exit %d (%s)", shell, code, errOut)
		}
	}
}

// Errors are JSON too under --json, with the exit code.
func TestJSONErrors(t *testing.T) {
	t.Setenv("LASER_IGGY_ADDR", "")
	code, out, errOut := laser(t, "dlq", "list", "--json")
	var e struct {
		Error string `json:"error"`
		Exit  int    `json:"exit"`
	}
	if code != exitUsage || out != "" || json.Unmarshal([]byte(errOut), &e) != nil || e.Exit != exitUsage || !strings.Contains(e.Error, "LASER_IGGY_ADDR") {
		t.Fatalf("exit %d, stdout %q, stderr %q", code, out, errOut)
	}
}
