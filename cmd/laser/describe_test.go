package main

import (
	"bytes"
	"encoding/hex"
	"strings"
	"testing"

	"github.com/lasergo/laser/runtime"
	"github.com/lasergo/laser/wire"
)

func TestAnAGDXErrorIsPrintedAsItsCodeAndMessageNotCBORHex(t *testing.T) {
	msg := "cannot charge 0 cents"
	body, err := (&wire.ErrorBody{Code: wire.ErrorInvalidRequest, Message: &msg}).Marshal()
	if err != nil {
		t.Fatal(err)
	}
	source, _ := wire.ParseAgentID("billing")
	corr, rec := wire.IDFromUint128(0, 9), wire.IDFromUint128(0, 10)
	env := &wire.Envelope{Kind: wire.KindError, Record: &rec, Conversation: wire.IDFromUint128(0, 1), Source: source, Correlation: &corr, Body: body}
	payload, err := env.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	v := describe("agent.responses", &runtime.Incoming{Headers: wire.EnvelopeHeaders(env, wire.ContentCBOR), Payload: payload})
	var out bytes.Buffer
	printRecord(&out, "agent.responses", v)
	if !strings.Contains(out.String(), "error invalid_request: cannot charge 0 cents (not retryable)") || strings.Contains(out.String(), hex.EncodeToString(body)) {
		t.Fatalf("printed:\n%s", out.String())
	}
	if v.ErrorBody == nil || v.ErrorBody.Code != "invalid_request" || v.Body != hex.EncodeToString(body) {
		t.Fatalf("--json view %+v, want the decoded error beside the body's bytes", v)
	}
}
