package bridge_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/fxamacker/cbor/v2"

	"github.com/lasergo/laser/bridge"
	"github.com/lasergo/laser/internal/bridgetest/desk"
	"github.com/lasergo/laser/operation"
	"github.com/lasergo/laser/runtime"
	"github.com/lasergo/laser/wire"
)

func deskOp(t *testing.T, name string) *bridge.Operation {
	t.Helper()
	for _, info := range desk.DeskOperations() {
		if info.Name == name {
			op, err := bridge.NewOperation(info)
			if err != nil {
				t.Fatal(err)
			}
			return op
		}
	}
	t.Fatalf("no desk operation %s", name)
	return nil
}

func TestEncodeInputConvertsJSONToTheOperationsGoTypeAndContentType(t *testing.T) {
	body, err := deskOp(t, "quote").EncodeInput([]byte(`{"sku":"pen","qty":3}`))
	if err != nil {
		t.Fatal(err)
	}
	var got desk.QuoteRequest
	if err := cbor.Unmarshal(body, &got); err != nil {
		t.Fatalf("the body is no CBOR QuoteRequest: %v", err)
	}
	if got != (desk.QuoteRequest{SKU: "pen", Qty: 3}) {
		t.Fatalf("decoded %+v", got)
	}
}

func TestEncodeInputRefusesWhatTheSchemaRefuses(t *testing.T) {
	op := deskOp(t, "quote")
	for _, args := range []string{`{"sku":"pen"}`, `{"sku":"pen","qty":1.5}`, `[1]`, `not json`} {
		if _, err := op.EncodeInput([]byte(args)); !errors.Is(err, bridge.ErrInput) {
			t.Fatalf("EncodeInput(%s) = %v, want ErrInput", args, err)
		}
	}
}

func TestOutputJSONDecodesThroughTheGoType(t *testing.T) {
	body, _ := runtime.EncodeBody(desk.Quote{SKU: "pen", Cents: 500}, wire.ContentCBOR)
	out, err := deskOp(t, "quote").OutputJSON(&runtime.Message{Envelope: &wire.Envelope{Body: body}, ContentType: wire.ContentCBOR, HasContentType: true})
	if err != nil {
		t.Fatal(err)
	}
	if string(out) != `{"sku":"pen","cents":500}` {
		t.Fatalf("output %s", out)
	}
}

func TestCardOperationsMakeUntypedOperationsOfARegistryCard(t *testing.T) {
	ops := bridge.CardOperations(desk.DeskCard(), desk.DeskListenTopic, runtime.TopicResponses)
	if len(ops) != 3 {
		t.Fatalf("%d operations, want one per capability", len(ops))
	}
	quote := ops[0]
	if quote.Agent != "desk" || quote.Name != "quote" || quote.Kind != operation.Request || quote.ReplyTopic != runtime.TopicResponses || quote.ContentType != wire.ContentCBOR {
		t.Fatalf("quote %+v", quote)
	}
	if ops[1].Kind != operation.Command {
		t.Fatalf("order %+v, want a command (no output)", ops[1])
	}
	op, err := bridge.NewOperation(quote)
	if err != nil {
		t.Fatal(err)
	}
	// Untyped, JSON numbers still reach a CBOR agent as integers.
	body, err := op.EncodeInput([]byte(`{"sku":"pen","qty":2}`))
	if err != nil {
		t.Fatal(err)
	}
	var got desk.QuoteRequest
	if err := cbor.Unmarshal(body, &got); err != nil || got.Qty != 2 {
		t.Fatalf("decoded %+v, %v", got, err)
	}
	if _, err := op.EncodeInput([]byte(`[1]`)); !errors.Is(err, bridge.ErrInput) {
		t.Fatalf("a non-object input: %v, want ErrInput", err)
	}
}

func TestEncodeInputRefusesAnExtraArgumentNamingIt(t *testing.T) {
	_, err := deskOp(t, "quote").EncodeInput([]byte(`{"sku":"pen","qty":1,"discount":100}`))
	if !errors.Is(err, bridge.ErrInput) || !strings.Contains(err.Error(), "discount") {
		t.Fatalf("err = %v, want ErrInput naming discount", err)
	}
}

func TestEncodeInputSaysWhichArgumentIsNullAndWhatItWants(t *testing.T) {
	_, err := deskOp(t, "quote").EncodeInput([]byte(`{"sku":null,"qty":1}`))
	if !errors.Is(err, bridge.ErrInput) || !strings.Contains(err.Error(), `argument "sku" is null, want string`) {
		t.Fatalf("err = %v, want ErrInput naming sku and its type", err)
	}
	if strings.Contains(err.Error(), "invalid reflect.Value") {
		t.Fatalf("err = %v reads as the validator's internals", err)
	}
}

func TestStrictSchemaLeavesAnOpenObjectAlone(t *testing.T) {
	for _, s := range []string{``, `{"type":"object"}`, `{"type":"object","properties":{"a":{}},"additionalProperties":true}`, `{"type":"string"}`} {
		got, err := bridge.StrictSchema(s)
		if err != nil || got != s {
			t.Fatalf("StrictSchema(%s) = %s, %v, want it unchanged", s, got, err)
		}
	}
}
