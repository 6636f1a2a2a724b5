package main

import (
	"net/http"
	goruntime "runtime"
	"strings"
	"testing"

	"github.com/lasergo/laser/internal/rawsend"
	"github.com/lasergo/laser/runtime"
	"github.com/lasergo/laser/wire"
)

// largeRecords adds n commands of one conversation with 60 KiB text bodies.
func largeRecords(t *testing.T, s *seeded, n int) wire.ID {
	t.Helper()
	conv := s.client.IDs().NewID()
	source, _ := wire.ParseAgentID("shop")
	target, _ := wire.ParseAgentID("ledger")
	op := "bulk"
	body := []byte(strings.Repeat("all work and no play ", 60<<10/21))
	for range n {
		rec, corr := s.client.IDs().NewID(), s.client.IDs().NewID()
		env := &wire.Envelope{Kind: wire.KindCommand, Record: &rec, Conversation: conv, Source: source, Target: &target, Correlation: &corr, Operation: &op, Body: body}
		if _, err := rawsend.Envelope(t.Context(), s.client, runtime.TopicCommands, env, wire.ContentRaw); err != nil {
			t.Fatal(err)
		}
	}
	return conv
}

func heapInUse() uint64 {
	goruntime.GC()
	var ms goruntime.MemStats
	goruntime.ReadMemStats(&ms)
	return ms.HeapAlloc
}

func TestConsoleScansHoldBoundedBodies(t *testing.T) {
	s := seed(t)
	conv := largeRecords(t, s, 300) // 18 MiB of bodies
	c, err := newConsole(s.tr, consoleConfig{})
	if err != nil {
		t.Fatal(err)
	}
	before := heapInUse()
	rows, err := c.scan(t.Context(), runtime.TopicCommands, scanDepth, func(r *recordRow) bool { return r.Conversation == conv.String() }, newBodyBudget())
	if err != nil {
		t.Fatal(err)
	}
	grew := int64(heapInUse()) - int64(before)
	t.Logf("%d rows hold %d KiB", len(rows), grew>>10)
	if len(rows) != 300 {
		t.Fatalf("%d rows, want 300", len(rows))
	}
	if grew > 6<<20 {
		t.Fatalf("300 rows of 60 KiB records hold %d MiB", grew>>20)
	}
	if !rows[0].Truncated || len(rows[0].Body) > shownBody+len("…") {
		t.Fatalf("a 60 KiB body is shown whole (%d bytes, truncated %v)", len(rows[0].Body), rows[0].Truncated)
	}
	if last := rows[len(rows)-1]; last.BodyFormat != "omitted" {
		t.Fatalf("the page's body budget was not applied: the last row shows %d bytes", len(last.Body))
	}
	goruntime.KeepAlive(rows)
}

func TestConsoleSearchKeepsNoBodies(t *testing.T) {
	s := seed(t)
	c, err := newConsole(s.tr, consoleConfig{})
	if err != nil {
		t.Fatal(err)
	}
	rows, err := c.scan(t.Context(), runtime.TopicCommands, scanDepth, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rows {
		if r.Body != "" {
			t.Fatalf("a search row keeps a body: %q", r.Body)
		}
	}
}

func TestConsoleAnswers503WhenEveryScanSlotIsTaken(t *testing.T) {
	s := seed(t)
	c, err := newConsole(s.tr, consoleConfig{})
	if err != nil {
		t.Fatal(err)
	}
	for range maxScans {
		c.scans <- struct{}{} // slots held by pages still scanning
	}
	srv := serveHandler(t, c)
	for _, path := range []string{"/conversations", "/conversations/" + s.conv.String(), "/topics/agent.commands"} {
		wantPage(t, srv, path, http.StatusServiceUnavailable, "busy")
	}
	<-c.scans
	wantPage(t, srv, "/conversations/"+s.conv.String(), http.StatusOK)
}
