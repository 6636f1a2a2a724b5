package wire_test

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/fxamacker/cbor/v2"
	"github.com/google/go-cmp/cmp"

	"github.com/lasergo/laser/wire"
)

func TestVocabularyNames(t *testing.T) {
	for got, want := range map[string]string{
		wire.TaskSubmitted.String():                      "submitted",
		wire.TaskInputRequired.String():                  "input-required",
		wire.TaskAuthRequired.String():                   "auth-required",
		wire.TaskUnknown.String():                        "unknown",
		wire.TaskState(0).String():                       "unrecognized-0",
		wire.TaskState(42).String():                      "unrecognized-42",
		wire.ReasonRetryExhausted.String():               "retry_exhausted",
		wire.ReasonRejected.String():                     "rejected",
		wire.ReasonDecodeFailed.String():                 "decode_failed",
		wire.ReasonDeadlineExceeded.String():             "deadline_exceeded",
		wire.DeadLetterReason(9).String():                "unrecognized-9",
		wire.ErrorInvalidRequest.String():                "invalid_request",
		wire.ErrorToolFailure.String():                   "tool_failure",
		wire.ErrorInternal.String():                      "internal",
		wire.ErrorCode(8).String():                       "unrecognized-8",
		wire.ContentJSON.String():                        "json",
		wire.ContentRef.String():                         "ref",
		wire.ContentAny.String():                         "any",
		wire.ContentType(9).String():                     "unknown-9",
		wire.HealthDegraded.String():                     "degraded",
		wire.Health(0).String():                          "unrecognized-0",
		wire.LogPosition{1, 2, 3, 99}.String():           "1/2/3@99",
		wire.MessageID{Partition: 2, Offset: 7}.String(): "2:7",
	} {
		if got != want {
			t.Errorf("got %q, want %q", got, want)
		}
	}
}

func TestTaskStateTerminal(t *testing.T) {
	for s := 0; s < 256; s++ {
		want := s >= 4 && s <= 7
		if got := wire.TaskState(s).Terminal(); got != want {
			t.Errorf("TaskState(%d).Terminal() = %v", s, got)
		}
	}
}

func TestContentTypeCodesAndNames(t *testing.T) {
	codes := map[string]wire.ContentType{"raw": 0, "json": 1, "msgpack": 2, "cbor": 3, "bson": 4, "avro": 5, "protobuf": 6, "arrow": 7, "ref": 8, "any": 255}
	for name, code := range codes {
		got, err := wire.ParseContentType(name)
		if err != nil || got != code || !code.Known() || code.String() != name {
			t.Errorf("%s: ParseContentType = %d, %v; Known %v", name, got, err, code.Known())
		}
	}
	if _, err := wire.ParseContentType("yaml"); !errors.Is(err, wire.ErrUnknownContentType) {
		t.Errorf("ParseContentType(yaml) error = %v", err)
	}
	if wire.ContentType(9).Known() || wire.ContentType(254).Known() {
		t.Error("undefined codes report Known")
	}
}

func TestKindParse(t *testing.T) {
	for _, k := range allKinds {
		if got, err := wire.ParseKind(string(k)); err != nil || got != k || !k.Known() {
			t.Errorf("ParseKind(%s) = %s, %v", k, got, err)
		}
	}
	if _, err := wire.ParseKind("Command"); !errors.Is(err, wire.ErrUnknownKind) {
		t.Errorf("ParseKind(Command) error = %v", err)
	}
}

func TestParseAgentIDAndIdempotencyKey(t *testing.T) {
	if _, err := wire.ParseAgentID("planner"); err != nil {
		t.Error(err)
	}
	for _, bad := range []string{"", strings.Repeat("a", 257), "a\x00", "a\u009f", "\xff"} {
		if _, err := wire.ParseAgentID(bad); !errors.Is(err, wire.ErrBadAgentID) {
			t.Errorf("ParseAgentID(%q) error = %v", bad, err)
		}
	}
	if _, err := wire.ParseAgentID("a\u00a0b"); err != nil {
		t.Errorf("U+00A0 is not a control character: %v", err)
	}
	if _, err := wire.ParseIdempotencyKey(strings.Repeat("k", 64)); err != nil {
		t.Error(err)
	}
	for _, bad := range []string{"", strings.Repeat("k", 65)} {
		if _, err := wire.ParseIdempotencyKey(bad); !errors.Is(err, wire.ErrBadIdempotencyKey) {
			t.Errorf("ParseIdempotencyKey(%d bytes) error = %v", len(bad), err)
		}
	}
}

func TestLogPositionBytes(t *testing.T) {
	pos := wire.LogPosition{StreamID: 1, TopicID: 2, PartitionID: 3, Offset: 0x29}
	b := pos.Bytes()
	want := []byte{0, 0, 0, 1, 0, 0, 0, 2, 0, 0, 0, 3, 0, 0, 0, 0, 0, 0, 0, 0x29}
	if !bytes.Equal(b[:], want) {
		t.Fatalf("Bytes = %x", b)
	}
	back, err := wire.LogPositionFromBytes(want)
	if err != nil || back != pos {
		t.Fatalf("LogPositionFromBytes = %+v, %v", back, err)
	}
	if _, err := wire.LogPositionFromBytes(want[:19]); err == nil {
		t.Fatal("a 19-byte position parsed")
	}
}

func TestUnknownCodesPassThrough(t *testing.T) {
	env := validEnvelope(wire.KindResponse)
	env.TaskState = p(wire.TaskState(200))
	b, err := env.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	back, err := wire.DecodeEnvelope(b)
	if err != nil || *back.TaskState != 200 {
		t.Fatalf("task_state 200 = %v, %v", back.TaskState, err)
	}

	dl := &wire.DeadLetter{Reason: 9, Payload: []byte{1}}
	b, _ = dl.Marshal()
	if back, err := wire.DecodeDeadLetter(b); err != nil || back.Reason != 9 {
		t.Fatalf("reason 9 = %+v, %v", back, err)
	}

	eb := &wire.ErrorBody{Code: 42}
	b, _ = eb.Marshal()
	if back, err := wire.DecodeErrorBody(b); err != nil || back.Code != 42 {
		t.Fatalf("error code 42 = %+v, %v", back, err)
	}

	sig := &wire.Signature{Scheme: 7, KeyID: []byte{1}, Bytes: []byte{2}, Context: &wire.SignatureContext{ContentType: p(uint8(200))}}
	b, _ = sig.Marshal()
	if back, err := wire.DecodeSignature(b); err != nil || back.Scheme != 7 || *back.Context.ContentType != 200 {
		t.Fatalf("scheme 7 = %+v, %v", back, err)
	}
}

func TestDeadLetterRoundTrip(t *testing.T) {
	for name, dl := range map[string]*wire.DeadLetter{
		"full":          {Source: wire.LogPosition{StreamID: 1, TopicID: 2, PartitionID: 3, Offset: 99}, Reason: wire.ReasonRejected, Attempts: 3, Detail: p("signature verification failed"), Payload: []byte("raw")},
		"empty payload": {Reason: wire.ReasonDecodeFailed},
	} {
		b, err := dl.Marshal()
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Contains(b, []byte("payload")) {
			t.Errorf("%s: payload key not always written", name)
		}
		back, err := wire.DecodeDeadLetter(b)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if diff := cmp.Diff(dl, back); diff != "" {
			t.Errorf("%s (-want +got):\n%s", name, diff)
		}
	}
}

func TestDeadLetterRequiresFields(t *testing.T) {
	full := []any{"source", make([]byte, 20), "reason", 1, "attempts", 0, "payload", []byte{}}
	for i := 0; i < len(full); i += 2 {
		var pairs []any
		pairs = append(pairs, full[:i]...)
		pairs = append(pairs, full[i+2:]...)
		if _, err := wire.DecodeDeadLetter(cborMap(t, pairs...)); !errors.Is(err, wire.ErrMissingField) {
			t.Errorf("without %s: error = %v", full[i], err)
		}
	}
	if _, err := wire.DecodeDeadLetter(cborMap(t, "source", make([]byte, 20), "reason", 1, "attempts", 1<<32, "payload", []byte{})); err == nil {
		t.Error("attempts over u32 decoded")
	}
}

func TestErrorBodyRoundTrip(t *testing.T) {
	eb := &wire.ErrorBody{Code: wire.ErrorToolFailure, Message: p("flight search timed out"), Detail: wire.Metadata{{Key: "attempt", Value: wire.IntValue(3)}}}
	b, err := eb.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(b, []byte("retryable\xf4")) {
		t.Fatalf("retryable=false not written: %x", b)
	}
	back, err := wire.DecodeErrorBody(b)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(eb, back); diff != "" {
		t.Fatalf("(-want +got):\n%s", diff)
	}
	// retryable has a serde default, so it may be absent on input.
	if back, err := wire.DecodeErrorBody(cborMap(t, "code", 1)); err != nil || back.Retryable {
		t.Fatalf("minimal body = %+v, %v", back, err)
	}
}

func TestAgentCardRoundTripAndValidate(t *testing.T) {
	card := &wire.AgentCard{
		Name: "trip-planner", Version: "1.4.2", TTLMicros: p(uint64(30_000_000)),
		Capabilities: []wire.CapabilityDescriptor{
			{SkillID: "chat", Input: wire.ContentByType(wire.ContentJSON), Output: wire.ContentByType(wire.ContentJSON), Health: p(wire.HealthHealthy), Load: p(uint16(250))},
			{SkillID: "search", Input: wire.ContentBySchema("order.v1"), MaxConcurrency: p(uint32(8))},
		},
	}
	b, err := card.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(b, []byte("content_type\x64json")) {
		t.Fatalf("content type not written by name: %x", b)
	}
	back, err := wire.DecodeAgentCard(b)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(card, back); diff != "" {
		t.Fatalf("(-want +got):\n%s", diff)
	}
	if err := back.Validate(); err != nil {
		t.Fatal(err)
	}
	card.Capabilities[1].SkillID = ""
	if err := card.Validate(); !errors.Is(err, wire.ErrInvalidCard) {
		t.Fatalf("empty skill id: %v", err)
	}
	card.Capabilities = make([]wire.CapabilityDescriptor, 65)
	if err := card.Validate(); !errors.Is(err, wire.ErrInvalidCard) {
		t.Fatalf("65 capabilities: %v", err)
	}
	if _, err := wire.DecodeAgentCard(cborMap(t, "capabilities", []any{map[string]any{"skill_id": "x", "input": map[string]any{"content_type": "yaml"}}})); !errors.Is(err, wire.ErrUnknownContentType) {
		t.Fatalf("unknown content type name: %v", err)
	}
	if _, err := (&wire.AgentCard{Capabilities: []wire.CapabilityDescriptor{{SkillID: "x", Input: wire.ContentByType(9)}}}).Marshal(); !errors.Is(err, wire.ErrEncode) {
		t.Fatalf("unnamed content type encoded: %v", err)
	}
}

func TestBodyRefRoundTripAndValidate(t *testing.T) {
	ref := &wire.BodyRef{Reference: "s3://transcripts/conv-2/msg-9", SizeBytes: 4 << 20, SHA256: bytes.Repeat([]byte{7}, 32)}
	b, err := ref.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	back, err := wire.DecodeBodyRef(b)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(ref, back); diff != "" {
		t.Fatalf("(-want +got):\n%s", diff)
	}
	for name, bad := range map[string]*wire.BodyRef{
		"empty reference": {SHA256: make([]byte, 32)},
		"long reference":  {Reference: strings.Repeat("r", 1025), SHA256: make([]byte, 32)},
		"short digest":    {Reference: "r", SHA256: make([]byte, 31)},
	} {
		if err := bad.Validate(); !errors.Is(err, wire.ErrInvalidBodyRef) {
			t.Errorf("%s: %v", name, err)
		}
	}
}

func TestSignatureCapsuleDecoding(t *testing.T) {
	keyArray := make([]int, 8)
	for i := range keyArray {
		keyArray[i] = i + 1
	}
	sig, err := wire.DecodeSignature(cborMap(t, "scheme", 1, "key_id", keyArray, "bytes", make([]byte, 64), "context", map[string]any{"content_type": 1}))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(sig.KeyID, []byte{1, 2, 3, 4, 5, 6, 7, 8}) || sig.Context.AgentVersion != nil || *sig.Context.ContentType != 1 {
		t.Fatalf("signature = %+v", sig)
	}
	if _, err := wire.DecodeSignature(cborMap(t, "scheme", 256, "key_id", []byte{}, "bytes", []byte{})); err == nil {
		t.Fatal("scheme 256 decoded")
	}
	if _, err := wire.DecodeSignature(cborMap(t, "scheme", 1, "key_id", []byte{})); !errors.Is(err, wire.ErrMissingField) {
		t.Fatalf("missing bytes: %v", err)
	}
}

func TestSignatureContextEncoding(t *testing.T) {
	for _, tc := range []struct {
		ctx  *wire.SignatureContext
		want []byte
	}{
		{&wire.SignatureContext{}, []byte{0xa0}},
		{wire.NewSignatureContext(wire.ContentJSON, 1), append(append([]byte{0xa2, 0x6c}, "content_type"...), append([]byte{0x01, 0x6d}, "agent_version\x01"...)...)},
		{&wire.SignatureContext{AgentVersion: p(uint32(70000))}, append([]byte{0xa1, 0x6d}, "agent_version\x1a\x00\x01\x11\x70"...)},
	} {
		if got := tc.ctx.Marshal(); !bytes.Equal(got, tc.want) {
			t.Errorf("%s: %x, want %x", tc.ctx, got, tc.want)
		}
	}
	a, b := wire.NewSignatureContext(1, 1), wire.NewSignatureContext(1, 1)
	if !a.Equal(b) || a.Equal(&wire.SignatureContext{ContentType: p(uint8(1))}) || a.Equal(nil) || !(*wire.SignatureContext)(nil).Equal(nil) {
		t.Fatal("SignatureContext.Equal is wrong")
	}
}

// Every capsule implements fxamacker's Marshaler/Unmarshaler with its
// canonical bytes, so other packages can embed them in reflection-coded types.
func TestCapsulesImplementFxamackerInterfaces(t *testing.T) {
	for name, tc := range map[string]struct {
		v     any
		fresh func() any
	}{
		"dead letter": {&wire.DeadLetter{Reason: wire.ReasonRejected, Payload: []byte{1}}, func() any { return new(wire.DeadLetter) }},
		"error body":  {&wire.ErrorBody{Code: wire.ErrorInternal, Detail: wire.Metadata{{Key: "l", Value: wire.ListValue(wire.IntValue(-3))}}}, func() any { return new(wire.ErrorBody) }},
		"agent card":  {&wire.AgentCard{Name: "n", Capabilities: []wire.CapabilityDescriptor{{SkillID: "s", CostClass: p(uint8(1)), LatencyClass: p(uint8(2))}}}, func() any { return new(wire.AgentCard) }},
		"body ref":    {&wire.BodyRef{Reference: "r", SHA256: make([]byte, 32), Encryption: p(uint8(1))}, func() any { return new(wire.BodyRef) }},
		"signature":   {&wire.Signature{Scheme: 1, KeyID: make([]byte, 8), Bytes: make([]byte, 64), Context: wire.NewSignatureContext(1, 1)}, func() any { return new(wire.Signature) }},
	} {
		want, err := tc.v.(interface{ MarshalCBOR() ([]byte, error) }).MarshalCBOR()
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		got, err := cbor.Marshal(tc.v)
		if err != nil || !bytes.Equal(got, want) {
			t.Errorf("%s: cbor.Marshal = %x, %v; want %x", name, got, err, want)
		}
		back := tc.fresh()
		if err := cbor.Unmarshal(want, back); err != nil {
			t.Errorf("%s: cbor.Unmarshal: %v", name, err)
		}
		if diff := cmp.Diff(tc.v, back); diff != "" {
			t.Errorf("%s (-want +got):\n%s", name, diff)
		}
		if err := cbor.Unmarshal([]byte{0xa1, 0x01, 0x01}, tc.fresh()); err == nil {
			t.Errorf("%s: an integer-keyed map decoded", name)
		}
	}
}

func TestEnvelopeEveryFieldRoundTrip(t *testing.T) {
	env := &wire.Envelope{
		Kind: wire.KindError, Record: p(idRecord), Conversation: idConv, Source: "s", Target: p(wire.AgentID("t")),
		Cause: p(idRecord), CauseAt: &wire.LogPosition{StreamID: 1, TopicID: 2, PartitionID: 3, Offset: 41},
		Correlation: p(idCorr), Channel: p(idChan), IdempotencyKey: p(wire.IdempotencyKey("k")),
		DeadlineMicros: p(uint64(1)), Sequence: p(uint64(2)), Last: true, FinishReason: p("stop"),
		TaskState: p(wire.TaskFailed), Operation: p("execute_tool"), Tool: p("search"),
		Usage: &wire.TokenUsage{InputTokens: 1, OutputTokens: 2, ReasoningOutputTokens: p(uint64(3)), CacheReadInputTokens: p(uint64(4)), CacheCreationInputTokens: p(uint64(5))},
		Metadata: wire.Metadata{
			{Key: "f", Value: wire.FloatValue(-0.5)}, {Key: "u", Value: wire.UintValue(1 << 63)}, {Key: "b", Value: wire.BoolValue(false)}, {Key: "n", Value: wire.NullValue()},
			{Key: "l", Value: wire.ListValue(wire.StrValue("x"), wire.ListValue(wire.IntValue(-7)))}},
		MustUnderstand: 5, Body: []byte{0},
		Signature: &wire.Signature{Scheme: 1, KeyID: make([]byte, 8), Bytes: make([]byte, 64), Context: wire.NewSignatureContext(wire.ContentCBOR, 1)},
	}
	b, err := env.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	if b[0] != 0xb6 {
		t.Fatalf("map head %#x, want 22 entries", b[0])
	}
	back, err := wire.DecodeEnvelope(b)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(env, back); diff != "" {
		t.Fatalf("(-want +got):\n%s", diff)
	}
	again, _ := back.Marshal()
	if !bytes.Equal(again, b) {
		t.Fatal("re-encoding differs")
	}
	if !env.Metadata.Equal(back.Metadata.Clone()) || env.Metadata.Equal(wire.Metadata{}) || wire.Metadata(nil).Equal(wire.Metadata{}) {
		t.Fatal("Metadata.Equal/Clone are wrong")
	}
	if s := back.Metadata.Get("l").String(); s != `["x", [-7]]` {
		t.Fatalf("Value.String = %s", s)
	}
}
