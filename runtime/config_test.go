package runtime_test

import (
	"bytes"
	"context"
	"log/slog"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/lasergo/laser/clock"
	"github.com/lasergo/laser/embedlog"
	"github.com/lasergo/laser/runtime"
	"github.com/lasergo/laser/wire"
)

// fixedIDs mints one id, so a test can tell whose id source minted it.
type fixedIDs struct{ id wire.ID }

func (f fixedIDs) NewID() wire.ID { return f.id }

// A consumer built on a client mints its ids with the client's id source:
// there is no id source of its own to set.
func TestConsumerTakesIDsFromItsClient(t *testing.T) {
	log := newLog(t, 1, clock.System{})
	want := wire.IDFromUint128(0xc11e, 7)
	spawned := make(chan wire.ID, 1)
	start(t, log, runtime.ConsumerConfig{
		Agent:  agent,
		Client: runtime.NewClient(log, runtime.ClientConfig{IDs: fixedIDs{want}, Logger: quietLogger()}),
		Handler: handlerFunc(func(c *runtime.Ctx) error {
			spawned <- c.SpawnSubconversation().Conversation
			return nil
		}),
	})
	sendPlainBody(t, log, "hello")
	select {
	case got := <-spawned:
		if got != want {
			t.Fatalf("subconversation id %s, want the client's %s", got, want)
		}
	case <-time.After(waitLimit):
		t.Fatal("handler never ran")
	}
}

// An agent logs through its client's logger, tagged with its id, and honours
// every knob of the Tuning it is given as an option.
func TestAgentLogsThroughItsClientAndHonoursTuning(t *testing.T) {
	log := newLog(t, 1, clock.System{})
	var logs bytes.Buffer
	client := runtime.NewClient(log, runtime.ClientConfig{Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	parked := make(chan runtime.DeadLetter, 1)
	a, err := client.NewAgent(runtime.AgentConfig{ID: "ledger", Listen: topic,
		Handler: handlerFunc(func(*runtime.Ctx) error { return context.DeadlineExceeded }),
		Tuning: runtime.Tuning{
			Retry:          runtime.RetryPolicy{MaxAttempts: 1},
			DeadLetterSink: func(_ context.Context, dl runtime.DeadLetter) { parked <- dl },
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	h := a.Start(context.Background())
	t.Cleanup(func() { _ = h.Stop() })
	ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
	defer cancel()
	if err := h.Ready(ctx); err != nil {
		t.Fatal(err)
	}
	sendPlainBody(t, log, "cannot book")
	select {
	case dl := <-parked:
		if dl.Capsule.Attempts != 1 {
			t.Fatalf("%d attempts, want the one Tuning.Retry allows", dl.Capsule.Attempts)
		}
	case <-time.After(waitLimit):
		t.Fatal("nothing dead-lettered")
	}
	// The consumer logs before it tells the sink, on the same goroutine.
	if line := logs.String(); !strings.Contains(line, "dead-lettered message") || !strings.Contains(line, "agent=ledger") {
		t.Fatalf("client logger got %q, want the dead letter tagged agent=ledger", line)
	}
}

// A bare consumer on a transport, with no client, runs on the defaults.
func TestConsumerWithoutClientRuns(t *testing.T) {
	log := newLog(t, 1, clock.System{})
	handled := make(chan string, 1)
	c, err := runtime.NewConsumer(log, runtime.ConsumerConfig{Topic: topic, Group: agent,
		Handler: handlerFunc(func(c *runtime.Ctx) error {
			handled <- string(c.Message().Body())
			return nil
		})})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- c.Run(ctx, nil, nil) }()
	t.Cleanup(func() { cancel(); <-done })
	sendPlainBody(t, log, "plain")
	select {
	case got := <-handled:
		if got != "plain" {
			t.Fatalf("handled %q", got)
		}
	case <-time.After(waitLimit):
		t.Fatal("handler never ran")
	}
}

// sendPlainBody publishes body as a plain message from sender on topic.
func sendPlainBody(t *testing.T, tr runtime.Transport, body string) {
	t.Helper()
	prov := wire.Provenance{Conversation: wire.IDFromUint128(1, 1), Agent: sender}
	if _, err := runtime.NewClient(tr, runtime.ClientConfig{}).SendPlain(context.Background(), topic, prov, []byte(body)); err != nil {
		t.Fatal(err)
	}
}

func TestADedupWindowBeyondWhatTheWindowHoldsIsAConfigError(t *testing.T) {
	_, err := runtime.NewConsumer(embedlog.New("laser", embedlog.Config{}), runtime.ConsumerConfig{Topic: topic, Group: agent,
		Handler: handlerFunc(func(*runtime.Ctx) error { return nil }), Tuning: runtime.Tuning{DedupWindow: math.MaxInt}})
	if runtime.CodeOf(err) != runtime.CodeConfig {
		t.Fatalf("err = %v, want CodeConfig", err)
	}
}
