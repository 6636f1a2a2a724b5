package wire

import (
	"errors"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// The tests here hold each record's field table to its encoder (the same
// keys, in the same order, each field read back as written) and to the
// strictness rules of the reference's structs, written out below
// independently of the tables.

// tableCase is one record type: its field table's keys, a value with every
// field set, its encoder, and a decoder that reads the record alone.
type tableCase struct {
	name   string
	keys   []string
	full   func() any
	encode func(v any) ([]byte, error)
	decode func(b []byte) (any, error)
}

func keysOf[T any](fs recordFields[T]) []string {
	keys := make([]string, len(fs))
	for i, f := range fs {
		keys[i] = f.key
	}
	return keys
}

// decodeWith reads b as one record with a generated decode function
// (rejecting trailing bytes) and returns what out picks from the decoded
// storage.
func decodeWith[S, T any](decode func(*reader, *S) error, out func(*S) *T) func([]byte) (any, error) {
	return func(b []byte) (any, error) {
		r := reader{b: b}
		st := new(S)
		if err := r.finish("test", decode(&r, st)); err != nil {
			return nil, err
		}
		return out(st), nil
	}
}

func same[T any](st *T) *T { return st }

func tableCases() []tableCase {
	u8, u16, u32, u64 := uint8(3), uint16(500), uint32(70000), uint64(1)<<40
	health := HealthDegraded
	usage := func() *TokenUsage {
		a, b, c := uint64(1), uint64(2), uint64(3)
		return &TokenUsage{InputTokens: 10, OutputTokens: 20, ReasoningOutputTokens: &a, CacheReadInputTokens: &b, CacheCreationInputTokens: &c}
	}
	context := func() *SignatureContext { return NewSignatureContext(ContentJSON, 7) }
	signature := func() *Signature {
		return &Signature{Scheme: 1, KeyID: []byte("12345678"), Bytes: []byte("sig"), Context: context()}
	}
	capability := func() *CapabilityDescriptor {
		return &CapabilityDescriptor{SkillID: "plan", Input: ContentByType(ContentJSON), Output: ContentBySchema("plan.v1"),
			CostClass: &u8, LatencyClass: &u8, MaxConcurrency: &u32, Health: &health, Load: &u16}
	}
	envelope := func() any {
		rec, cause, corr, ch := IDFromUint128(0, 1), IDFromUint128(0, 2), IDFromUint128(0, 3), IDFromUint128(0, 4)
		target, idem := AgentID("worker"), IdempotencyKey("order-1")
		seq, finish, state, op, tool := uint64(2), "stop", TaskCompleted, OperationTask, "search"
		return &Envelope{Kind: KindCommand, Record: &rec, Conversation: IDFromUint128(0, 5), Source: "planner",
			Target: &target, Cause: &cause, CauseAt: &LogPosition{StreamID: 1, TopicID: 2, PartitionID: 3, Offset: 4},
			Correlation: &corr, Channel: &ch, IdempotencyKey: &idem, DeadlineMicros: &u64, Sequence: &seq, Last: true,
			FinishReason: &finish, TaskState: &state, Operation: &op, Tool: &tool, Usage: usage(),
			Metadata: Metadata{{Key: MetaRun, Value: StrValue("r1")}}, MustUnderstand: 1, Body: []byte("body"),
			Signature: signature()}
	}
	message, detail := "boom", "handler failed"
	enc := func(f func(any) ([]byte, error)) func(any) ([]byte, error) { return f }
	cases := []tableCase{
		{"envelope", keysOf(envelopeFields), envelope,
			enc(func(v any) ([]byte, error) { return v.(*Envelope).Marshal() }),
			func(b []byte) (any, error) { return DecodeEnvelope(b) }},
		{"usage", keysOf(usageFields), func() any { return usage() },
			enc(func(v any) ([]byte, error) { return v.(*TokenUsage).appendCBOR(nil), nil }),
			decodeWith(decodeUsageFields, same[TokenUsage])},
		{"signature", keysOf(signatureFields), func() any { return signature() },
			enc(func(v any) ([]byte, error) { return v.(*Signature).Marshal() }),
			func(b []byte) (any, error) { return DecodeSignature(b) }},
		{"signature context", keysOf(signatureContextFields), func() any { return context() },
			enc(func(v any) ([]byte, error) { return v.(*SignatureContext).Marshal(), nil }),
			decodeWith(decodeSignatureContextFields, func(st *signatureContextStorage) *SignatureContext { return &st.ctx })},
		{"agent card", keysOf(cardFields), func() any {
			return &AgentCard{Name: "planner", Version: "1.0", Capabilities: []CapabilityDescriptor{*capability()}, TTLMicros: &u64}
		}, enc(func(v any) ([]byte, error) { return v.(*AgentCard).Marshal() }),
			func(b []byte) (any, error) { return DecodeAgentCard(b) }},
		{"capability", keysOf(capabilityFields), func() any { return capability() },
			enc(func(v any) ([]byte, error) { return v.(*CapabilityDescriptor).appendCBOR(nil) }),
			decodeWith(decodeCapabilityFields, same[CapabilityDescriptor])},
		{"body ref", keysOf(bodyRefFields), func() any {
			return &BodyRef{Reference: "s3://b/k", SizeBytes: 9, SHA256: []byte("0123456789abcdef0123456789abcdef"), Encryption: &u8}
		}, enc(func(v any) ([]byte, error) { return v.(*BodyRef).Marshal() }),
			func(b []byte) (any, error) { return DecodeBodyRef(b) }},
		{"dead letter", keysOf(deadLetterFields), func() any {
			return &DeadLetter{Source: LogPosition{StreamID: 1, Offset: 9}, Reason: ReasonRejected, Attempts: 3, Detail: &detail, Payload: []byte("p")}
		}, enc(func(v any) ([]byte, error) { return v.(*DeadLetter).Marshal() }),
			func(b []byte) (any, error) { return DecodeDeadLetter(b) }},
		{"error body", keysOf(errorBodyFields), func() any {
			return &ErrorBody{Code: ErrorToolFailure, Message: &message, Retryable: true, Detail: Metadata{{Key: "tool", Value: StrValue("x")}}}
		}, enc(func(v any) ([]byte, error) { return v.(*ErrorBody).Marshal() }),
			func(b []byte) (any, error) { return DecodeErrorBody(b) }},
		{"fold snapshot", keysOf(snapshotFields), func() any {
			return &FoldSnapshot{Conversation: IDFromUint128(0, 6), AsOf: map[uint32]uint64{0: 4, 2: 9}, State: []byte("{}")}
		}, enc(func(v any) ([]byte, error) { return v.(*FoldSnapshot).Marshal() }),
			func(b []byte) (any, error) { return DecodeFoldSnapshot(b) }},
	}
	for _, m := range []*MemoryRecord{
		{Op: MemoryItem, ID: "ns/k", Kind: "fact", Body: []byte("b")},
		{Op: MemoryForget, ID: "ns/k"},
		{Op: MemoryFeedback, ID: "ns/k", Weight: -0.5},
	} {
		fields := map[MemoryOp]recordFields[MemoryRecord]{MemoryItem: memoryItemFields, MemoryForget: memoryForgetFields, MemoryFeedback: memoryFeedbackFields}[m.Op]
		cases = append(cases, tableCase{"memory " + m.Op.String(), keysOf(fields),
			func() any { c := *m; return &c },
			enc(func(v any) ([]byte, error) { return v.(*MemoryRecord).Marshal() }),
			func(b []byte) (any, error) { return DecodeMemoryRecord(b) }})
	}
	return cases
}

// mapKeys returns the keys of the record map b encodes, in order; a memory
// record's variant wrapper is looked through.
func mapKeys(t *testing.T, b []byte) []string {
	t.Helper()
	r := reader{b: b}
	n, _, err := r.container(majorMap)
	if err != nil {
		t.Fatal(err)
	}
	if n == 1 && r.i < len(b) && b[r.i]&0xe0 == majorText {
		save := r.i
		if v, err := r.string(); err == nil && (v == "Item" || v == "Forget" || v == "Feedback") {
			if n, _, err = r.container(majorMap); err != nil {
				t.Fatal(err)
			}
		} else {
			r.i = save
		}
	}
	var keys []string
	for i := uint64(0); i < n; i++ {
		k, err := r.key()
		if err != nil {
			t.Fatal(err)
		}
		keys = append(keys, string(k))
		if err := r.skip(); err != nil {
			t.Fatal(err)
		}
	}
	return keys
}

// isSubsequence reports whether sub lists some of all's items in all's order.
func isSubsequence(sub, all []string) bool {
	i := 0
	for _, k := range all {
		if i < len(sub) && sub[i] == k {
			i++
		}
	}
	return i == len(sub)
}

// TestFieldTablesAgreeWithEncoders round-trips every record type with every
// field set and then with each field in turn left at its zero value (absent,
// for an optional one): the encoder must write exactly the table's keys in
// the table's order, and the table must read back what was written.
func TestFieldTablesAgreeWithEncoders(t *testing.T) {
	for _, c := range tableCases() {
		t.Run(c.name, func(t *testing.T) {
			if len(c.keys) > 32 {
				t.Fatalf("%d fields, more than a fieldSet tracks", len(c.keys))
			}
			full := c.full()
			b, err := c.encode(full)
			if err != nil {
				t.Fatal(err)
			}
			if got := mapKeys(t, b); !slices.Equal(got, c.keys) {
				t.Fatalf("encoder writes keys %q, table reads %q", got, c.keys)
			}
			roundTrip(t, c, full, b)
			typ := reflect.TypeOf(full).Elem()
			for i := range typ.NumField() {
				v := c.full()
				f := reflect.ValueOf(v).Elem().Field(i)
				if f.Kind() == reflect.Map {
					f.Set(reflect.MakeMap(f.Type())) // a map decodes empty, never nil
				} else {
					f.SetZero()
				}
				b, err := c.encode(v)
				if err != nil {
					continue // a field the encoder requires (an envelope's kind or source)
				}
				if got := mapKeys(t, b); !isSubsequence(got, c.keys) {
					t.Fatalf("without %s the encoder writes keys %q, not in the table's order %q", typ.Field(i).Name, got, c.keys)
				}
				roundTrip(t, c, v, b)
			}
		})
	}
}

func roundTrip(t *testing.T, c tableCase, want any, b []byte) {
	t.Helper()
	got, err := c.decode(b)
	if err != nil {
		t.Fatalf("decoding %x: %v", b, err)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("decode(encode(v)) differs (-want +got):\n%s", diff)
	}
}

// recordRule is the reference's shape of one record, written out by hand:
// which fields must appear, which may be missing (a serde default), and
// which are Options (missing or null alike).
type recordRule struct {
	name                          string
	full                          func(t *testing.T) []byte // the record's map with every field
	wrap                          func(inner []byte) []byte // puts the map where a decoder reads it
	decode                        func(b []byte) error
	required, defaulted, optional []string
}

func recordRules() []recordRule {
	byName := map[string]tableCase{}
	for _, c := range tableCases() {
		byName[c.name] = c
	}
	full := func(name string) func(t *testing.T) []byte {
		return func(t *testing.T) []byte {
			c := byName[name]
			b, err := c.encode(c.full())
			if err != nil {
				t.Fatal(err)
			}
			return b
		}
	}
	dec := func(name string) func([]byte) error {
		return func(b []byte) error { _, err := byName[name].decode(b); return err }
	}
	self := func(b []byte) []byte { return b }
	// in places inner as the value of key in a minimal record of the outer map.
	in := func(outer []byte, key string) func([]byte) []byte {
		return func(inner []byte) []byte {
			b := appendHead(nil, majorMap, uint64(outer[0]&0x1f)+1)
			b = append(b, outer[1:]...)
			return append(appendText(b, key), inner...)
		}
	}
	minimalEnvelope, _ := (&Envelope{Kind: KindEvent, Conversation: IDFromUint128(0, 1), Source: "a"}).Marshal()
	minimalSignature, _ := (&Signature{Scheme: 1, KeyID: []byte("k"), Bytes: []byte("s")}).Marshal()
	memory := func(variant string) func([]byte) []byte {
		return func(inner []byte) []byte { return append(appendText([]byte{majorMap | 1}, variant), inner...) }
	}
	// memoryInner is a memory record's inner map, without the variant.
	memoryInner := func(name, variant string) func(t *testing.T) []byte {
		return func(t *testing.T) []byte { return full(name)(t)[1+1+len(variant):] }
	}
	return []recordRule{
		{name: "envelope", full: full("envelope"), wrap: self, decode: dec("envelope"),
			required:  []string{"kind", "conversation", "source"},
			defaulted: []string{"last", "must_understand", "body"},
			optional: []string{"record", "target", "cause", "cause_at", "correlation", "channel", "idempotency_key",
				"deadline_micros", "sequence", "finish_reason", "task_state", "operation", "tool", "usage", "metadata", "signature"}},
		{name: "usage", full: full("usage"), wrap: in(minimalEnvelope, "usage"), decode: dec("envelope"),
			required: []string{"input_tokens", "output_tokens"},
			optional: []string{"reasoning_output_tokens", "cache_read_input_tokens", "cache_creation_input_tokens"}},
		{name: "signature", full: full("signature"), wrap: self, decode: dec("signature"),
			required: []string{"scheme", "key_id", "bytes"}, optional: []string{"context"}},
		{name: "signature context", full: full("signature context"), wrap: in(minimalSignature, "context"), decode: dec("signature"),
			optional: []string{"content_type", "agent_version"}},
		{name: "agent card", full: full("agent card"), wrap: self, decode: dec("agent card"),
			defaulted: []string{"capabilities"}, optional: []string{"name", "version", "ttl_micros"}},
		{name: "capability", full: full("capability"),
			wrap: func(inner []byte) []byte {
				return append(appendText([]byte{majorMap | 1}, "capabilities"), append([]byte{majorArray | 1}, inner...)...)
			},
			decode:   dec("agent card"),
			required: []string{"skill_id"},
			optional: []string{"input", "output", "cost_class", "latency_class", "max_concurrency", "health", "load"}},
		{name: "body ref", full: full("body ref"), wrap: self, decode: dec("body ref"),
			required: []string{"reference", "size_bytes", "sha256"}, optional: []string{"encryption"}},
		{name: "dead letter", full: full("dead letter"), wrap: self, decode: dec("dead letter"),
			required: []string{"source", "reason", "attempts", "payload"}, optional: []string{"detail"}},
		{name: "error body", full: full("error body"), wrap: self, decode: dec("error body"),
			required: []string{"code"}, defaulted: []string{"retryable"}, optional: []string{"message", "detail"}},
		{name: "fold snapshot", full: full("fold snapshot"), wrap: self, decode: dec("fold snapshot"),
			required: []string{"conversation", "as_of", "state"}},
		{name: "memory Item", full: memoryInner("memory Item", "Item"), wrap: memory("Item"), decode: dec("memory Item"),
			required: []string{"id", "kind", "body"}},
		{name: "memory Forget", full: memoryInner("memory Forget", "Forget"), wrap: memory("Forget"), decode: dec("memory Forget"),
			required: []string{"target"}},
		{name: "memory Feedback", full: memoryInner("memory Feedback", "Feedback"), wrap: memory("Feedback"), decode: dec("memory Feedback"),
			required: []string{"target", "weight"}},
	}
}

// pair is one key and value of an encoded map, as raw CBOR.
type pair struct{ key, value []byte }

func splitMap(t *testing.T, b []byte) []pair {
	t.Helper()
	r := reader{b: b}
	n, indef, err := r.container(majorMap)
	if err != nil || indef {
		t.Fatalf("not a definite map: %x", b)
	}
	var out []pair
	for i := uint64(0); i < n; i++ {
		start := r.i
		if _, err := r.key(); err != nil {
			t.Fatal(err)
		}
		mid := r.i
		if err := r.skip(); err != nil {
			t.Fatal(err)
		}
		out = append(out, pair{b[start:mid], b[mid:r.i]})
	}
	return out
}

func joinMap(pairs []pair) []byte {
	b := appendHead(nil, majorMap, uint64(len(pairs)))
	for _, p := range pairs {
		b = append(append(b, p.key...), p.value...)
	}
	return b
}

// edit returns the rule's full map with fn applied to its pairs, wrapped.
func (rule recordRule) edit(t *testing.T, fn func([]pair) []pair) []byte {
	return rule.wrap(joinMap(fn(splitMap(t, rule.full(t)))))
}

func keyOf(p pair) string {
	r := reader{b: p.key}
	k, _ := r.key()
	return string(k)
}

func TestRecordRulesCoverEveryField(t *testing.T) {
	for _, rule := range recordRules() {
		var listed []string
		listed = append(append(append(listed, rule.required...), rule.defaulted...), rule.optional...)
		var got []string
		for _, p := range splitMap(t, rule.full(t)) {
			got = append(got, keyOf(p))
		}
		slices.Sort(listed)
		slices.Sort(got)
		if !slices.Equal(listed, got) {
			t.Errorf("%s: rules name %q, the full record has %q", rule.name, listed, got)
		}
		if err := rule.decode(rule.wrap(rule.full(t))); err != nil {
			t.Errorf("%s: the full record does not decode: %v", rule.name, err)
		}
	}
}

func TestRecordRefusesAFieldNamedTwice(t *testing.T) {
	for _, rule := range recordRules() {
		for _, p := range splitMap(t, rule.full(t)) {
			b := rule.edit(t, func(ps []pair) []pair { return append(ps, p) })
			if err := rule.decode(b); !errors.Is(err, ErrDuplicateKey) || !strings.Contains(err.Error(), `"`+keyOf(p)+`"`) {
				t.Errorf("%s: %s twice: %v, want ErrDuplicateKey naming it", rule.name, keyOf(p), err)
			}
		}
	}
}

func TestRecordRequiresItsRequiredFields(t *testing.T) {
	for _, rule := range recordRules() {
		for _, p := range splitMap(t, rule.full(t)) {
			b := rule.edit(t, func(ps []pair) []pair {
				return slices.DeleteFunc(ps, func(q pair) bool { return keyOf(q) == keyOf(p) })
			})
			err := rule.decode(b)
			if slices.Contains(rule.required, keyOf(p)) {
				if !errors.Is(err, errMissingField) || !strings.Contains(err.Error(), `"`+keyOf(p)+`"`) {
					t.Errorf("%s without %s: %v, want errMissingField naming it", rule.name, keyOf(p), err)
				}
			} else if err != nil {
				t.Errorf("%s without %s: %v, want it to decode", rule.name, keyOf(p), err)
			}
		}
	}
}

func TestRecordReadsNullAsAbsentOnlyForOptionalFields(t *testing.T) {
	for _, rule := range recordRules() {
		for _, p := range splitMap(t, rule.full(t)) {
			for _, null := range []byte{cborNull, cborUndefined} {
				b := rule.edit(t, func(ps []pair) []pair {
					out := slices.Clone(ps)
					for i := range out {
						if keyOf(out[i]) == keyOf(p) {
							out[i].value = []byte{null}
						}
					}
					return out
				})
				err := rule.decode(b)
				if slices.Contains(rule.optional, keyOf(p)) {
					if err != nil {
						t.Errorf("%s with %s = %#x: %v, want absent", rule.name, keyOf(p), null, err)
					}
				} else if !errors.Is(err, errMalformed) {
					t.Errorf("%s with %s = %#x: %v, want a wrong-type error", rule.name, keyOf(p), null, err)
				}
			}
		}
	}
}

func TestRecordSkipsUnknownFields(t *testing.T) {
	unknown := pair{appendText(nil, "zz_later"), []byte{majorMap | 1, majorText | 1, 'x', majorArray | 2, 0x01, 0x20}}
	for _, rule := range recordRules() {
		b := rule.edit(t, func(ps []pair) []pair { return append([]pair{unknown}, ps...) })
		if err := rule.decode(b); err != nil {
			t.Errorf("%s with an unknown field: %v, want it skipped", rule.name, err)
		}
	}
}

func TestRecordWrongTypeNamesTheField(t *testing.T) {
	for _, rule := range recordRules() {
		for _, p := range splitMap(t, rule.full(t)) {
			b := rule.edit(t, func(ps []pair) []pair {
				out := slices.Clone(ps)
				for i := range out {
					if keyOf(out[i]) == keyOf(p) {
						out[i].value = []byte{majorNeg} // -1: no field's type
					}
				}
				return out
			})
			err := rule.decode(b)
			var de *DecodeError
			if !errors.As(err, &de) || de.Field != keyOf(p) || !errors.Is(err, errMalformed) {
				t.Errorf("%s with %s = -1: %v, want a malformed DecodeError naming the field", rule.name, keyOf(p), err)
			}
		}
	}
}
