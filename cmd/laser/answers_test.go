package main

import (
	"bytes"
	"context"
	"encoding/json"
	"net/url"
	"strings"
	"testing"

	"github.com/lasergo/laser/runtime"
	"github.com/lasergo/laser/wire"
)

// TestDLQRedriveTwiceSkipsWhatTheLedgerRecords: a second redrive of the same
// capsules republishes nothing and says why; --again redrives once more.
func TestDLQRedriveTwiceSkipsWhatTheLedgerRecords(t *testing.T) {
	addr, tr := poisoned(t)
	ctx := context.Background()
	if code, _, errOut := laser(t, "dlq", "redrive", "--addr", addr, "--all", "--unverified"); code != exitOK {
		t.Fatalf("first redrive: exit %d: %s", code, errOut)
	}
	before, err := tr.NextOffset(ctx, runtime.TopicCommands, 0)
	if err != nil {
		t.Fatal(err)
	}
	code, out, errOut := laser(t, "dlq", "redrive", "--addr", addr, "--all", "--unverified")
	if code != exitOK || strings.Count(out, "skipped: already redriven") != 2 {
		t.Fatalf("second redrive (exit %d) did not skip both capsules:\n%s%s", code, out, errOut)
	}
	if after, _ := tr.NextOffset(ctx, runtime.TopicCommands, 0); after != before {
		t.Fatalf("the second redrive republished %d records", after-before)
	}
	code, out, _ = laser(t, "dlq", "redrive", "--addr", addr, "--all", "--again", "--unverified", "--json")
	dec := json.NewDecoder(strings.NewReader(out))
	for dec.More() {
		var r redriveResult
		if err := dec.Decode(&r); err != nil || r.Republished == "" || r.Skipped != "" {
			t.Fatalf("--again (exit %d) result %+v %v", code, r, err)
		}
	}
}

// TestAddressesThatCannotWorkAreUsageErrors: a bad port or a missing stream
// in --addr is bad usage (exit 2) with the reason, not a connection failure.
func TestAddressesThatCannotWorkAreUsageErrors(t *testing.T) {
	for addr, reason := range map[string]string{
		"iggy://iggy:iggy@127.0.0.1:99999/laser": "port 99999 is not a TCP port",
		"iggy://iggy:iggy@127.0.0.1:0/laser":     "port 0 is not a TCP port",
		"iggy://iggy:iggy@127.0.0.1:8090":        "must name one stream",
	} {
		code, _, errOut := laser(t, "dlq", "list", "--addr", addr)
		if code != exitUsage || !strings.Contains(errOut, reason) {
			t.Errorf("--addr %s: exit %d (want %d) and %q, want the reason %q", addr, code, exitUsage, errOut, reason)
		}
	}
}

// TestAMissingStreamIsNamedAsTheStream: the server answers a topic lookup in
// a missing stream as a missing topic; the command names the stream.
func TestAMissingStreamIsNamedAsTheStream(t *testing.T) {
	u, err := url.Parse(serverAddr(t))
	if err != nil {
		t.Fatal(err)
	}
	u.Path = "/no_such_stream" // the query (?protocol=vsr) kept
	missing := u.String()
	for _, args := range [][]string{{"dlq", "list"}, {"tail", "-n", "1", runtime.TopicCommands}} {
		code, _, errOut := laser(t, append(args, "--addr", missing)...)
		if code != exitFailed || !strings.Contains(errOut, "stream no_such_stream does not exist") {
			t.Errorf("%v: exit %d: %s", args, code, errOut)
		}
	}
}

// TestTailShowsAnErrorReplyAsItsCodeAndMessage: an AGDX error body is read,
// not printed as CBOR hex.
func TestTailShowsAnErrorReplyAsItsCodeAndMessage(t *testing.T) {
	msg := "no order 42"
	body, err := (&wire.ErrorBody{Code: wire.ErrorInvalidRequest, Message: &msg}).Marshal()
	if err != nil {
		t.Fatal(err)
	}
	corr, rec := wire.IDFromUint128(0, 9), wire.IDFromUint128(0, 10)
	source, _ := wire.ParseAgentID("orders")
	env := &wire.Envelope{Kind: wire.KindError, Conversation: wire.IDFromUint128(0, 1), Source: source, Correlation: &corr, Record: &rec, Body: body}
	payload, err := env.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	in := &runtime.Incoming{Headers: wire.MustEncodeHeaders(wire.EnvelopeHeaders(env, wire.ContentRaw)), Payload: payload}
	var out bytes.Buffer
	printRecord(&out, runtime.TopicResponses, describe(runtime.TopicResponses, in))
	if !strings.Contains(out.String(), "error: "+wire.ErrorInvalidRequest.String()+": no order 42") {
		t.Fatalf("tail printed:\n%s", out.String())
	}
}
