package wire_test

import (
	"bytes"
	"encoding/hex"
	"errors"
	"sort"
	"strings"
	"testing"

	"github.com/fxamacker/cbor/v2"
	"github.com/google/go-cmp/cmp"

	"github.com/lasergo/laser/internal/vectors"
	"github.com/lasergo/laser/wire"
)

// agdxFixtures returns every AGDX vector by name: the module's copy in
// testdata/fixtures/agdx, and those of $AGDX_FIXTURES.
func agdxFixtures(t testing.TB) map[string][]byte {
	t.Helper()
	return vectors.AGDX.Files(t)
}

func sortedNames(m map[string][]byte) []string {
	names := make([]string, 0, len(m))
	for n := range m {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// wantInvalid is the first rule each negative fixture breaks (spec §2.12).
var wantInvalid = map[string]wire.ValidateError{
	"agent_invalid_command_no_correlation.bin":  {Rule: wire.Missing, Kind: wire.KindCommand, Field: "correlation"},
	"agent_invalid_response_channel.bin":        {Rule: wire.Forbidden, Kind: wire.KindResponse, Field: "channel"},
	"agent_invalid_event_task_state.bin":        {Rule: wire.Forbidden, Kind: wire.KindEvent, Field: "task_state"},
	"agent_invalid_chunk_no_sequence.bin":       {Rule: wire.Missing, Kind: wire.KindChunk, Field: "sequence"},
	"agent_invalid_chunk_late_deadline.bin":     {Rule: wire.Invalid, Kind: wire.KindChunk, Field: "deadline_micros"},
	"agent_invalid_chunk_open_no_operation.bin": {Rule: wire.Missing, Kind: wire.KindChunk, Field: "operation"},
	"agent_invalid_status_no_operation.bin":     {Rule: wire.Missing, Kind: wire.KindStatus, Field: "operation"},
	"agent_invalid_status_bad_operation.bin":    {Rule: wire.Invalid, Kind: wire.KindStatus, Field: "operation"},
	"agent_invalid_error_last.bin":              {Rule: wire.Forbidden, Kind: wire.KindError, Field: "last"},
}

// notAgentRuntime names fixtures that share the agent_ prefix but belong to
// the managed run-registry band or the Iggy fork (spec §6); they are only
// checked to be well-formed CBOR.
func notAgentRuntime(name string) bool {
	for _, p := range []string{"agent_list_page", "agent_reply_", "agent_submit", "agent_presence"} {
		if strings.HasPrefix(name, p) {
			return true
		}
	}
	return false
}

func TestFixtures(t *testing.T) {
	files := agdxFixtures(t)
	for _, name := range sortedNames(files) {
		b := files[name]
		t.Run(strings.TrimSuffix(name, ".bin"), func(t *testing.T) {
			switch {
			case strings.HasPrefix(name, "agent_invalid_"):
				checkInvalidFixture(t, name, b)
			case strings.HasPrefix(name, "agent_dead_letter"):
				checkRoundTrip(t, b, wire.DecodeDeadLetter, (*wire.DeadLetter).Marshal, nil)
			case strings.HasPrefix(name, "agent_signature"):
				checkRoundTrip(t, b, wire.DecodeSignature, (*wire.Signature).Marshal, (*wire.Signature).Validate)
			case strings.HasPrefix(name, "agent_error_body"):
				checkRoundTrip(t, b, wire.DecodeErrorBody, (*wire.ErrorBody).Marshal, nil)
			case strings.HasPrefix(name, "agent_card"):
				checkRoundTrip(t, b, wire.DecodeAgentCard, (*wire.AgentCard).Marshal, (*wire.AgentCard).Validate)
			case strings.HasPrefix(name, "agent_body_ref"):
				checkRoundTrip(t, b, wire.DecodeBodyRef, (*wire.BodyRef).Marshal, (*wire.BodyRef).Validate)
			case strings.HasPrefix(name, "agent_record"):
				checkRecordFixture(t, b)
			case notAgentRuntime(name):
				if err := cbor.Wellformed(b); err != nil {
					t.Fatalf("not well-formed CBOR: %v", err)
				}
			default:
				checkRoundTrip(t, b, wire.DecodeEnvelope, (*wire.Envelope).Marshal, func(e *wire.Envelope) error { return wire.Validate(e) })
			}
		})
	}
}

// checkRoundTrip decodes b, validates it when validate is set, and requires
// the re-encoding to be byte-identical.
func checkRoundTrip[T any](t *testing.T, b []byte, decode func([]byte) (*T, error), marshal func(*T) ([]byte, error), validate func(*T) error) *T {
	t.Helper()
	v, err := decode(b)
	if err != nil {
		t.Fatalf("decode: %v", err)
	}
	if validate != nil {
		if err := validate(v); err != nil {
			t.Fatalf("validate: %v", err)
		}
	}
	got, err := marshal(v)
	if err != nil {
		t.Fatalf("re-encode: %v", err)
	}
	if !bytes.Equal(got, b) {
		t.Fatalf("re-encoding differs\n got %x\nwant %x", got, b)
	}
	return v
}

func checkInvalidFixture(t *testing.T, name string, b []byte) {
	env := checkRoundTrip(t, b, wire.DecodeEnvelope, (*wire.Envelope).Marshal, nil)
	err := wire.Validate(env)
	if err == nil {
		t.Fatal("Validate accepted a negative fixture")
	}
	if !errors.Is(err, wire.ErrInvalidEnvelope) {
		t.Fatalf("error %v does not match ErrInvalidEnvelope", err)
	}
	want, ok := wantInvalid[name]
	if !ok {
		t.Logf("no pinned rule for %s; it fails with %v", name, err)
		return
	}
	var got *wire.ValidateError
	if !errors.As(err, &got) {
		t.Fatalf("error %T is not a *ValidateError", err)
	}
	if got.Rule != want.Rule || got.Kind != want.Kind || got.Field != want.Field {
		t.Fatalf("first failing rule = %s{%s, %s}, want %s{%s, %s}", got.Rule, got.Kind, got.Field, want.Rule, want.Kind, want.Field)
	}
}

// testRecord is the SDK's record snapshot: it is not a wire type, so the test
// reads it with fxamacker's reflection decoder, independently of package wire.
type testRecord struct {
	PartitionKey string `cbor:"partition_key"`
	Headers      map[string]struct {
		Kind  string `cbor:"kind"`
		Bytes []byte `cbor:"bytes"`
	} `cbor:"headers"`
	Payload []byte `cbor:"payload"`
}

var recordHeaderKinds = map[string]wire.HeaderKind{
	"string": wire.HeaderKindString, "u8": wire.HeaderKindUint8, "u32": wire.HeaderKindUint32, "uint128": wire.HeaderKindUint128,
}

func checkRecordFixture(t *testing.T, b []byte) {
	var rec testRecord
	dm, err := cbor.DecOptions{DupMapKey: cbor.DupMapKeyEnforcedAPF}.DecMode()
	if err != nil {
		t.Fatal(err)
	}
	if err := dm.Unmarshal(b, &rec); err != nil {
		t.Fatalf("decode record: %v", err)
	}
	env := checkRoundTrip(t, rec.Payload, wire.DecodeEnvelope, (*wire.Envelope).Marshal, func(e *wire.Envelope) error { return wire.Validate(e) })

	ct, ok := rec.Headers[wire.HeaderContentType]
	if !ok || ct.Kind != "u8" || len(ct.Bytes) != 1 {
		t.Fatalf("record has no u8 agdx.ct header: %+v", rec.Headers)
	}
	got := map[string]wire.HeaderValue{}
	for _, h := range wire.EnvelopeHeaders(env, wire.ContentType(ct.Bytes[0])) {
		got[h.Key] = h.Value
	}
	want := map[string]wire.HeaderValue{}
	for k, v := range rec.Headers {
		kind, ok := recordHeaderKinds[v.Kind]
		if !ok {
			t.Fatalf("header %s has unexpected kind %q", k, v.Kind)
		}
		want[k] = wire.HeaderValue{Kind: kind, Data: v.Bytes}
	}
	// The corpus pins the Rust crate's older header set: the conversation as
	// a Uint128 and no agent id. laser-go writes what the reference's SDK
	// 0.8.2 writes on the log (its ULID text, and the source as
	// gen_ai.agent.id), so the corpus's conversation must name the same id.
	if conv := want[wire.HeaderConversationID]; conv.Kind == wire.HeaderKindUint128 {
		id, err := conv.AsUint128()
		if err != nil || id != env.Conversation {
			t.Fatalf("the record's Uint128 conversation header %x is not the envelope's %s (%v)", conv.Data, env.Conversation, err)
		}
		want[wire.HeaderConversationID] = wire.StringValue(env.Conversation.String())
		want[wire.HeaderAgentID] = wire.StringValue(string(env.Source))
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("EnvelopeHeaders differ from the record (-want +got):\n%s", diff)
	}
	if pk := wire.PartitionKey(env.Conversation); pk != rec.PartitionKey {
		t.Fatalf("partition key = %s, want %s", pk, rec.PartitionKey)
	}
}

func TestFixtureDeadLetterContent(t *testing.T) {
	b, ok := agdxFixtures(t)["agent_dead_letter.bin"]
	if !ok {
		t.Skip("agent_dead_letter.bin is not in the fixture folder")
	}
	d, err := wire.DecodeDeadLetter(b)
	if err != nil {
		t.Fatal(err)
	}
	detail := "handler kept failing"
	want := wire.LogPosition{StreamID: 1, TopicID: 2, PartitionID: 3, Offset: 99}
	if d.Source != want || d.Reason != wire.ReasonRetryExhausted || d.Attempts != 5 || d.Detail == nil || *d.Detail != detail {
		t.Fatalf("capsule = %+v", d)
	}
	poison, err := wire.DecodeEnvelope(d.Payload)
	if err != nil {
		t.Fatalf("payload is not an envelope: %v", err)
	}
	if poison.Kind != wire.KindCommand || string(poison.Body) != "poison" {
		t.Fatalf("payload = %+v", poison)
	}
}

func TestFixtureErrorEnvelopeBody(t *testing.T) {
	files := agdxFixtures(t)
	b, ok := files["agent_error.bin"]
	if !ok {
		t.Skip("agent_error.bin is not in the fixture folder")
	}
	env, err := wire.DecodeEnvelope(b)
	if err != nil {
		t.Fatal(err)
	}
	body := checkRoundTrip(t, env.Body, wire.DecodeErrorBody, (*wire.ErrorBody).Marshal, nil)
	if body.Code != wire.ErrorToolFailure || !body.Retryable || body.Message == nil {
		t.Fatalf("error body = %+v", body)
	}
	if v, ok := body.Detail.Get("attempt").AsUint(); !ok || v != 3 {
		t.Fatalf("detail attempt = %v", body.Detail.Get("attempt"))
	}
	if eb, ok := files["agent_error_body.bin"]; ok && !bytes.Equal(eb, env.Body) {
		t.Fatalf("agent_error_body.bin differs from the error envelope's body")
	}
}

func TestFixtureCommandContent(t *testing.T) {
	b, ok := agdxFixtures(t)["agent_command.bin"]
	if !ok {
		t.Skip("agent_command.bin is not in the fixture folder")
	}
	env, err := wire.DecodeEnvelope(b)
	if err != nil {
		t.Fatal(err)
	}
	rec, corr := wire.IDFromUint128(0x01903c1faa000000, 1), wire.IDFromUint128(0x01903c1faa000000, 5)
	target := wire.AgentID("target-agent")
	idem := wire.IdempotencyKey("order-123-attempt-2")
	deadline := uint64(1_717_171_777_000_000)
	op := wire.OperationChat
	want := &wire.Envelope{
		Kind:           wire.KindCommand,
		Record:         &rec,
		Conversation:   wire.IDFromUint128(0x01903c1faa000000, 2),
		Source:         "source-agent",
		Target:         &target,
		Correlation:    &corr,
		IdempotencyKey: &idem,
		DeadlineMicros: &deadline,
		Operation:      &op,
		Metadata:       wire.Metadata{{Key: "priority", Value: wire.StrValue("high")}},
		Body:           []byte(`{"ask":"plan the trip"}`),
	}
	if diff := cmp.Diff(want, env); diff != "" {
		t.Fatalf("decoded command (-want +got):\n%s", diff)
	}
	built, err := want.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(built, b) {
		t.Fatalf("a hand-built command encodes differently\n got %s\nwant %s", hex.EncodeToString(built), hex.EncodeToString(b))
	}
}
