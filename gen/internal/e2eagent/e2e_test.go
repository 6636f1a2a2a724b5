package e2eagent

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/lasergo/laser/embedlog"
	"github.com/lasergo/laser/gen/internal/e2eagent/billingapi"
	"github.com/lasergo/laser/runtime"
	"github.com/lasergo/laser/wire"
)

// harness runs the generated billing agent on an embedded log and hands out
// its typed client and the dead letters it parks.
type harness struct {
	impl    *Billing
	client  *runtime.Client
	billing BillingClient
	dead    chan runtime.DeadLetter
}

const caller = "checkout"

func start(t *testing.T) (context.Context, *harness) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	logger := slog.New(slog.NewTextHandler(io.Discard, nil))
	client := runtime.NewClient(embedlog.New("laser", embedlog.Config{}), runtime.ClientConfig{Logger: logger})
	t.Cleanup(func() { client.Close() })
	if err := client.Bootstrap(ctx, 2, "billing.commands", "billing.responses"); err != nil {
		t.Fatal(err)
	}
	h := &harness{impl: NewBilling(), client: client, dead: make(chan runtime.DeadLetter, 8)}
	cfg := BillingAgentConfig(h.impl)
	cfg.Tuning = runtime.Tuning{
		Retry: runtime.RetryPolicy{MaxAttempts: 2, BaseDelay: time.Nanosecond},
		DeadLetterSink: func(_ context.Context, dl runtime.DeadLetter) {
			h.dead <- dl
		},
	}
	agent, err := client.NewAgent(cfg)
	if err != nil {
		t.Fatal(err)
	}
	handle := agent.Start(ctx)
	t.Cleanup(func() {
		if err := handle.Shutdown(context.Background()); err != nil {
			t.Errorf("shutdown: %v", err)
		}
	})
	if err := handle.Ready(ctx); err != nil {
		t.Fatal(err)
	}
	h.billing = NewBillingClient(client, caller)
	return ctx, h
}

func receive[T any](ctx context.Context, t *testing.T, ch <-chan T, what string) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-ctx.Done():
		t.Fatalf("no %s before the test deadline", what)
		var zero T
		return zero
	}
}

func (h *harness) deadLetter(ctx context.Context, t *testing.T) runtime.DeadLetter {
	t.Helper()
	dl := receive(ctx, t, h.dead, "dead letter")
	if dl.PublishErr != nil {
		t.Fatalf("dead letter not published: %v", dl.PublishErr)
	}
	return dl
}

func detail(dl runtime.DeadLetter) string {
	if dl.Capsule.Detail == nil {
		return ""
	}
	return *dl.Capsule.Detail
}

func TestRequestReplyReturnsTheTypedOutput(t *testing.T) {
	ctx, h := start(t)
	got, err := h.billing.Charge(ctx, ChargeCard{Card: "4242", Cents: 1250})
	if err != nil {
		t.Fatal(err)
	}
	if want := (Charged{Charge: "ch-4242", Cents: 1250}); got != want {
		t.Fatalf("Charge = %+v, want %+v", got, want)
	}
}

func TestRequestReplyOverJSONWithPointers(t *testing.T) {
	ctx, h := start(t)
	got, err := h.billing.Quote(ctx, &QuoteRequest{Cents: 5000})
	if err != nil {
		t.Fatal(err)
	}
	if got == nil || *got != (Quote{Cents: 5000, Fee: 100}) {
		t.Fatalf("Quote = %+v, want {5000 100}", got)
	}
}

func TestCommandIsHandled(t *testing.T) {
	ctx, h := start(t)
	if err := h.billing.Refund(ctx, &billingapi.Refund{Charge: "ch-1", Cents: 300}); err != nil {
		t.Fatal(err)
	}
	got := receive(ctx, t, h.impl.Refunds, "refund")
	if *got != (billingapi.Refund{Charge: "ch-1", Cents: 300}) {
		t.Fatalf("refund = %+v", got)
	}
}

func TestEventIsHandled(t *testing.T) {
	ctx, h := start(t)
	issuer := NewBillingClient(h.client, "issuer")
	if err := issuer.CardExpired(ctx, billingapi.CardExpired{Card: "4242", Month: 7}); err != nil {
		t.Fatal(err)
	}
	if got := receive(ctx, t, h.impl.Expired, "expiry"); got != (billingapi.CardExpired{Card: "4242", Month: 7}) {
		t.Fatalf("event = %+v", got)
	}
}

func TestUnknownOperationIsDeadLetteredAsRejected(t *testing.T) {
	ctx, h := start(t)
	cmd := runtime.Out{Topic: "billing.commands", From: caller, Target: "billing"}
	if err := runtime.Tell(ctx, h.client, cmd, "teleport", wire.ContentCBOR, Void{Charge: "x"}); err != nil {
		t.Fatal(err)
	}
	dl := h.deadLetter(ctx, t)
	if dl.Capsule.Reason != wire.ReasonRejected || dl.Capsule.Attempts != 1 {
		t.Fatalf("dead letter reason %s after %d attempts, want rejected after 1", dl.Capsule.Reason, dl.Capsule.Attempts)
	}
	if !strings.Contains(detail(dl), `"teleport"`) || runtime.CodeOf(dl.Cause) != runtime.CodeRejected {
		t.Fatalf("detail %q, cause %v; want a rejection naming the operation", detail(dl), dl.Cause)
	}
}

func TestUndecodableBodyIsDeadLetteredAsRejected(t *testing.T) {
	ctx, h := start(t)
	cmd := runtime.Out{Topic: "billing.commands", From: caller, Target: "billing", Body: []byte{0xff, 0x00}}
	if _, err := h.client.Send(ctx, cmd, runtime.WithOperation("charge"), runtime.WithContentType(wire.ContentCBOR)); err != nil {
		t.Fatal(err)
	}
	dl := h.deadLetter(ctx, t)
	if dl.Capsule.Reason != wire.ReasonRejected || dl.Capsule.Attempts != 1 {
		t.Fatalf("dead letter reason %s after %d attempts, want rejected after 1", dl.Capsule.Reason, dl.Capsule.Attempts)
	}
	if d := detail(dl); !strings.Contains(d, `operation "charge"`) || !strings.Contains(d, "decode cbor body") {
		t.Fatalf("detail %q; want the operation and the decode error", d)
	}
}

func TestRetryableHandlerErrorIsRetried(t *testing.T) {
	ctx, h := start(t)
	if err := h.billing.Settle(ctx, Settle{Day: "2026-01-02"}); err != nil {
		t.Fatal(err)
	}
	if n := receive(ctx, t, h.impl.Settles, "first attempt"); n != 1 {
		t.Fatalf("first attempt numbered %d", n)
	}
	if n := receive(ctx, t, h.impl.Settles, "retry"); n != 2 {
		t.Fatalf("retry numbered %d", n)
	}
}

func TestRetryableHandlerErrorIsDeadLetteredWhenAttemptsRunOut(t *testing.T) {
	ctx, h := start(t)
	if err := h.billing.Flake(ctx, Void{}); err != nil {
		t.Fatal(err)
	}
	dl := h.deadLetter(ctx, t)
	if dl.Capsule.Reason != wire.ReasonRetryExhausted || dl.Capsule.Attempts != 2 {
		t.Fatalf("dead letter reason %s after %d attempts, want retry exhausted after 2", dl.Capsule.Reason, dl.Capsule.Attempts)
	}
	if len(h.impl.Flakes) != 2 {
		t.Fatalf("handler ran %d times, want 2", len(h.impl.Flakes))
	}
}

func TestRejectedHandlerErrorIsNotRetried(t *testing.T) {
	ctx, h := start(t)
	if err := h.billing.Void(ctx, Void{Charge: "ch-9"}); err != nil {
		t.Fatal(err)
	}
	dl := h.deadLetter(ctx, t)
	if dl.Capsule.Reason != wire.ReasonRejected || dl.Capsule.Attempts != 1 {
		t.Fatalf("dead letter reason %s after %d attempts, want rejected after 1", dl.Capsule.Reason, dl.Capsule.Attempts)
	}
	if len(h.impl.Voids) != 1 || !strings.Contains(detail(dl), "voids are closed") {
		t.Fatalf("handler ran %d times, detail %q", len(h.impl.Voids), detail(dl))
	}
}

func TestHandlerFailureReachesTheTypedClientAsARemoteError(t *testing.T) {
	ctx, h := start(t)
	card := runtime.WithConversation(wire.IDFromUint128(0, 4242))
	_, err := h.billing.Charge(ctx, ChargeCard{Card: "4242", Cents: 0}, card)
	var remote *runtime.Error
	if !(errors.As(err, &remote) && remote.Remote()) {
		t.Fatalf("Charge error %v (%T), want a remote *runtime.Error", err, err)
	}
	if remote.Wire != wire.ErrorInvalidRequest || remote.Msg != "cannot charge 0 cents" || remote.Retryable || remote.From != "billing" {
		t.Fatalf("remote error %+v", remote)
	}
	// The answered request was handled: a request after it in the same
	// conversation (so on the same partition, after it) is answered, and
	// nothing was parked.
	if _, err := h.billing.Charge(ctx, ChargeCard{Card: "4242", Cents: 1}, card); err != nil {
		t.Fatal(err)
	}
	select {
	case dl := <-h.dead:
		t.Fatalf("the answered failure was parked too: %s", detail(dl))
	default:
	}
}

func TestCardListsTheOperationsWithTheirContentTypes(t *testing.T) {
	card := BillingCard()
	if err := card.Validate(); err != nil {
		t.Fatal(err)
	}
	got := map[string][2]string{}
	for _, c := range card.Capabilities {
		var in, out string
		if c.Input != nil {
			in = c.Input.ContentType.String()
		}
		if c.Output != nil {
			out = c.Output.ContentType.String()
		}
		got[c.SkillID] = [2]string{in, out}
	}
	want := map[string][2]string{
		"charge": {"cbor", "cbor"},
		"quote":  {"json", "json"},
		"refund": {"json", ""},
		"settle": {"cbor", ""},
		"void":   {"cbor", ""},
		"flake":  {"cbor", ""},
		"note":   {"json", ""},
	}
	if card.Name != "billing" || len(got) != len(want) {
		t.Fatalf("card %s with %v", card.Name, got)
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("capability %s = %v, want %v", k, got[k], v)
		}
	}
	body, err := card.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := wire.DecodeAgentCard(body); err != nil {
		t.Fatalf("card does not round-trip: %v", err)
	}
}

func TestNewBillingAgentRejectsANilImplementation(t *testing.T) {
	client := runtime.NewClient(embedlog.New("laser", embedlog.Config{}), runtime.ClientConfig{})
	defer client.Close()
	if _, err := NewBillingAgent(client, nil); runtime.CodeOf(err) != runtime.CodeConfig {
		t.Fatalf("error %v, want a config error", err)
	}
}

// An event nobody on the agent subscribes to is someone else's broadcast:
// it is ignored (and committed), not dead-lettered.
func TestUnknownEventIsIgnored(t *testing.T) {
	ctx, h := start(t)
	if err := runtime.Tell(ctx, h.client, runtime.Out{Kind: wire.KindEvent, Topic: "billing.commands", From: caller}, "weather.changed", wire.ContentCBOR, Void{Charge: "sunny"}); err != nil {
		t.Fatal(err)
	}
	// A known event published after it is handled, so the unknown one was
	// processed by then; it must not have produced a dead letter.
	if err := NewBillingClient(h.client, caller).CardExpired(ctx, billingapi.CardExpired{Card: "1", Month: 1}); err != nil {
		t.Fatal(err)
	}
	receive(ctx, t, h.impl.Expired, "the known event")
	select {
	case dl := <-h.dead:
		t.Fatalf("an unknown event was dead-lettered: %s", detail(dl))
	default:
	}
}

// A request whose body does not decode is answered, so the typed client
// fails at once with an invalid-request remote error.
func TestUndecodableRequestIsAnsweredWithARemoteError(t *testing.T) {
	ctx, h := start(t)
	cmd := runtime.Out{Topic: "billing.commands", From: caller, Target: "billing", Body: []byte{0xff, 0x00}}
	_, err := h.client.Request(ctx, cmd, runtime.WithOperation("charge"), runtime.WithContentType(wire.ContentCBOR),
		runtime.WithReplyTopic("billing.responses"), runtime.WithTimeout(20*time.Second))
	var re *runtime.Error
	if !(errors.As(err, &re) && re.Remote()) || re.Wire != wire.ErrorInvalidRequest || !strings.Contains(re.Msg, "decode cbor body") {
		t.Fatalf("err = %v, want an invalid-request remote error naming the decode failure", err)
	}
	if dl := h.deadLetter(ctx, t); dl.Capsule.Reason != wire.ReasonRejected {
		t.Fatalf("dead letter %s", dl.Capsule.Reason)
	}
}

// A request for an operation the agent does not handle is answered, so the
// typed client fails at once with an unsupported remote error naming the
// operation, instead of waiting for its timeout.
func TestUnknownOperationRequestIsAnsweredWithARemoteError(t *testing.T) {
	ctx, h := start(t)
	cmd := runtime.Out{Topic: "billing.commands", From: caller, Target: "billing"}
	_, err := runtime.Call[Charged](ctx, h.client, cmd, "teleport", wire.ContentCBOR, Void{Charge: "x"},
		runtime.WithReplyTopic("billing.responses"), runtime.WithTimeout(20*time.Second))
	var re *runtime.Error
	if !(errors.As(err, &re) && re.Remote()) || re.Wire != wire.ErrorUnsupported || !strings.Contains(re.Msg, `operation "teleport"`) {
		t.Fatalf("err = %v, want an unsupported remote error naming operation \"teleport\"", err)
	}
	if dl := h.deadLetter(ctx, t); dl.Capsule.Reason != wire.ReasonRejected || dl.Capsule.Attempts != 1 {
		t.Fatalf("dead letter %s after %d attempts, want rejected after 1", dl.Capsule.Reason, dl.Capsule.Attempts)
	}
}
