package iggytest_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"testing"

	iggcon "github.com/apache/iggy/foreign/go/contracts"
	"github.com/google/go-cmp/cmp"

	"github.com/lasergo/laser/iggytest"
)

// pythonWithLaserSDK returns a Python interpreter that imports laser_sdk,
// the reference's Python SDK: $LASER_PYTHON, or python3 when it has the
// SDK. Without one the test skips on a developer machine and fails under CI
// (env CI set), where .ci/run installs it.
func pythonWithLaserSDK(t *testing.T) string {
	t.Helper()
	py := os.Getenv("LASER_PYTHON")
	if py == "" {
		py = "python3"
	}
	out, err := exec.CommandContext(t.Context(), py, "-c", "import laser_sdk").CombinedOutput()
	if err == nil {
		return py
	}
	msg := fmt.Sprintf("the reference's Python SDK is not importable with %q (set LASER_PYTHON to a python with `pip install laser-sdk==0.8.2`): %v %s", py, err, out)
	if os.Getenv("CI") != "" {
		t.Fatal(msg)
	}
	t.Skip(msg)
	return ""
}

// pyRecord is a record as the Python script saw it.
type pyRecord struct {
	Offset    uint64            `json:"offset"`
	Partition uint32            `json:"partition"`
	Payload   string            `json:"payload"`
	Headers   map[string]string `json:"headers"`
}

// pyReport is what testdata/vsr_python_sdk.py prints.
type pyReport struct {
	Polled       []pyRecord `json:"polled"`
	Group        []pyRecord `json:"group"`
	StoredOffset uint64     `json:"stored_offset"`
	TokenLogin   bool       `json:"token_login"`
}

// TestVSRServesTheReferencePythonSDK runs the reference's Python SDK over
// the VSR framing (register with a password and with a personal access
// token, ensure a stream and a topic, publish records with headers, poll
// them, read them as a consumer group member and store the group's offset),
// then reads the server's log back with the official Go SDK over the 0.8
// framing on the same port, and checks both saw the same records and
// offset.
func TestVSRServesTheReferencePythonSDK(t *testing.T) {
	py := pythonWithLaserSDK(t)
	const token = "iggypat-vsr-python-test"
	const n = 5
	srv := iggytest.Start(t, iggytest.Config{Tokens: []string{token}})

	cmd := exec.CommandContext(t.Context(), py, "testdata/vsr_python_sdk.py",
		srv.Addr(), token, "py_stream", "py_topic", "py_group", strconv.Itoa(n))
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("the Python SDK failed: %v\n%s", err, stderr.String())
	}
	var got pyReport
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("the Python script printed %q: %v", out, err)
	}

	// The log as the server holds it, read over the 0.8 framing.
	c := login(t, srv)
	polled, err := c.PollMessages(id(t, "py_stream"), id(t, "py_topic"), iggcon.DefaultConsumer(),
		iggcon.FirstPollingStrategy(), 100, false, ptr(0))
	if err != nil {
		t.Fatalf("poll over 0.8: %v", err)
	}
	var want []pyRecord
	for _, m := range polled.Messages {
		entries, err := iggcon.DeserializeHeaders(m.UserHeaders)
		if err != nil {
			t.Fatalf("headers of offset %d: %v", m.Header.Offset, err)
		}
		headers := make(map[string]string)
		for _, e := range entries {
			headers[string(e.Key.Value)] = string(e.Value.Value)
		}
		want = append(want, pyRecord{Offset: m.Header.Offset, Partition: 0, Payload: string(m.Payload), Headers: headers})
	}
	if len(want) != n {
		t.Fatalf("the server's log holds %d records, want the %d the Python SDK published", len(want), n)
	}
	for i, r := range want {
		wantRec := pyRecord{Offset: uint64(i), Payload: fmt.Sprintf("record-%d", i), Headers: map[string]string{"seq": strconv.Itoa(i), "origin": "python"}}
		if diff := cmp.Diff(wantRec, r); diff != "" {
			t.Errorf("record %d in the server's log (-want +got):\n%s", i, diff)
		}
	}
	if diff := cmp.Diff(want, got.Polled); diff != "" {
		t.Errorf("records the Python SDK polled as a single consumer (-log +python):\n%s", diff)
	}
	if diff := cmp.Diff(want, got.Group); diff != "" {
		t.Errorf("records the Python SDK polled as a group member (-log +python):\n%s", diff)
	}

	off, err := c.GetConsumerOffset(iggcon.NewGroupConsumer(id(t, "py_group")), id(t, "py_stream"), id(t, "py_topic"), ptr(0))
	if err != nil || off == nil {
		t.Fatalf("the group's stored offset over 0.8: %v, %v", off, err)
	}
	if off.StoredOffset != n-2 || got.StoredOffset != n-2 {
		t.Errorf("stored offset: server %d, Python read back %d, want %d", off.StoredOffset, got.StoredOffset, n-2)
	}
	if !got.TokenLogin {
		t.Error("the Python SDK did not log in with the personal access token")
	}
}
