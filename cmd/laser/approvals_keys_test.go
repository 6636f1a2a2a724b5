package main

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/lasergo/laser/humaninput"
	"github.com/lasergo/laser/iggy"
	"github.com/lasergo/laser/iggytest"
	"github.com/lasergo/laser/runtime"
	"github.com/lasergo/laser/sign"
)

// hidden is a request whose asker verifies answers (only an operator key's
// counts) and an unsigned answer to it, which the asker ignores.
type hidden struct {
	addr        string
	tr          *iggy.Transport
	keys        *sign.Registry
	keysFile    string
	correlation string
	asked       chan error
}

// hideAnApproval starts a server, an agent asking a human under a verifier
// and forges an unsigned answer to its request, as anyone able to write the
// topic can.
func hideAnApproval(t *testing.T) *hidden {
	t.Helper()
	srv := iggytest.Start(t, iggytest.Config{})
	h := &hidden{addr: "iggy://iggy:iggy@" + srv.Addr() + "/laser", asked: make(chan error, 1)}
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	t.Cleanup(cancel)
	tr, err := iggy.Dial(ctx, h.addr, iggy.Config{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = tr.Close() })
	h.tr = tr
	var seed [32]byte
	copy(seed[:], "alice the operator")
	alice := sign.NewKey(seed)
	h.keys = sign.NewRegistry()
	if err := h.keys.EnrollOperator("alice", alice.Public()); err != nil {
		t.Fatal(err)
	}
	h.keysFile = filepath.Join(t.TempDir(), "keys")
	if err := os.WriteFile(h.keysFile, []byte("alice operator "+hex.EncodeToString(alice.Public())+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	logger := slog.New(slog.NewTextHandler(io.Discard, nil))
	asker := runtime.NewClient(tr, runtime.ClientConfig{Logger: logger, Verifier: h.keys})
	t.Cleanup(func() { _ = asker.Close() })
	if err := asker.Bootstrap(ctx, 1); err != nil {
		t.Fatal(err)
	}
	go func() {
		_, err := humaninput.Ask(ctx, asker, humaninput.Request{From: "planner", Prompt: []byte("wire 1M EUR?"), Timeout: 15 * time.Second})
		h.asked <- err
	}()
	req := waitPending(t, ctx, tr)
	h.correlation = req.Envelope.Correlation.String()
	forger := runtime.NewClient(tr, runtime.ClientConfig{Logger: logger})
	t.Cleanup(func() { _ = forger.Close() })
	if err := humaninput.Answer(ctx, forger, "", "mallory", req, false, []byte("sure"), nil); err != nil {
		t.Fatal(err)
	}
	// Counting every answer, the forged one hides the request.
	if l, err := humaninput.List(ctx, tr, humaninput.ListOptions{}); err != nil || len(l.Pending) != 0 {
		t.Fatalf("unverified, %d request(s) pending (%v); want the forged answer to hide it", len(l.Pending), err)
	}
	return h
}

// waitPending waits until one request is pending on agent.human_input and
// returns it; the asker is another goroutine publishing to the server, so
// reading the topic again is the only way to see it.
func waitPending(t *testing.T, ctx context.Context, tr *iggy.Transport) *runtime.Message {
	t.Helper()
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	for {
		l, err := humaninput.List(ctx, tr, humaninput.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if len(l.Pending) == 1 {
			return l.Pending[0]
		}
		select {
		case <-tick.C:
		case <-ctx.Done():
			t.Fatal("the request never showed as pending")
		}
	}
}

// stillWaiting fails t if the asker was answered.
func (h *hidden) stillWaiting(t *testing.T) {
	t.Helper()
	select {
	case err := <-h.asked:
		t.Fatalf("the asker took the unsigned answer (%v)", err)
	default:
	}
}

func TestApprovalsListWithKeysShowsARequestAnUnsignedAnswerHides(t *testing.T) {
	h := hideAnApproval(t)
	for _, args := range [][]string{{"approvals"}, {"approvals", "list"}} {
		code, out, errOut := laser(t, append(args, "--addr", h.addr, "--keys", h.keysFile, "--json")...)
		if code != exitOK {
			t.Fatalf("laser %s: exit %d: %s", strings.Join(args, " "), code, errOut)
		}
		var views []approvalView
		if err := json.Unmarshal([]byte(out), &views); err != nil {
			t.Fatal(err)
		}
		if len(views) != 1 || views[0].Correlation != h.correlation || views[0].Prompt != "wire 1M EUR?" {
			t.Fatalf("laser %s --keys lists %+v, want the request %s the asker still waits on", strings.Join(args, " "), views, h.correlation)
		}
		if !strings.Contains(errOut, "1 answer(s) did not count") {
			t.Fatalf("laser %s --keys does not say an answer did not count: %q", strings.Join(args, " "), errOut)
		}
	}
	h.stillWaiting(t)
}

func TestApprovalsListWithoutKeysWarnsThatAnswersAreUnverified(t *testing.T) {
	h := hideAnApproval(t)
	code, out, errOut := laser(t, "approvals", "list", "--addr", h.addr)
	if code != exitOK || !strings.Contains(out, "no pending requests") || !strings.Contains(errOut, "answers are not verified") {
		t.Fatalf("exit %d, stdout %q, stderr %q", code, out, errOut)
	}
}

func TestApprovalsAnswerWithKeysFindsARequestAnUnsignedAnswerHides(t *testing.T) {
	h := hideAnApproval(t)
	code, out, errOut := laser(t, "approvals", "answer", "--addr", h.addr, "--keys", h.keysFile, h.correlation, "refuse", "no")
	if code != exitOK || !strings.Contains(out, "refused "+h.correlation) {
		t.Fatalf("exit %d, stdout %q, stderr %q", code, out, errOut)
	}
}

func TestConsoleApprovalsWithKeysShowARequestAnUnsignedAnswerHides(t *testing.T) {
	h := hideAnApproval(t)
	c, err := newConsole(h.tr, consoleConfig{keys: h.keys})
	if err != nil {
		t.Fatal(err)
	}
	srv := serveHandler(t, c)
	wantPage(t, srv, "/approvals", http.StatusOK, `data-correlation="`+h.correlation+`"`, "wire 1M EUR?", "1 answer(s) did not count", "left)")
	h.stillWaiting(t)

	// Without keys the page says what it cannot see.
	c, err = newConsole(h.tr, consoleConfig{})
	if err != nil {
		t.Fatal(err)
	}
	page := wantPage(t, serveHandler(t, c), "/approvals", http.StatusOK, `id="unverified"`, "--keys FILE")
	if strings.Contains(page, h.correlation) {
		t.Fatal("without keys the console claims to see the hidden request")
	}
}
