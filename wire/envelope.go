package wire

import (
	"errors"
	"fmt"
	"math"
)

// Operation vocabularies. Status operations and chunk purposes are closed
// sets checked by Validate; the state-sync pair is a convention for events.
const (
	OperationTask         = "task"
	OperationCard         = "card"
	OperationProgress     = "progress"
	OperationQuarantine   = "quarantine"
	OperationUnquarantine = "unquarantine"

	OperationChat      = "chat"
	OperationReasoning = "reasoning"
	OperationToolArgs  = "tool_args"

	OperationStateSnapshot = "state_snapshot"
	OperationStateDelta    = "state_delta"
)

// FeaturesNone is the empty must-understand set; no feature bits are defined.
const FeaturesNone uint64 = 0

// MaxTextFieldBytes caps operation, tool and finish_reason.
const MaxTextFieldBytes = 256

// MaxChunkBodyBytes is the SDK's cap on one chunk body, applied by writers
// before publishing (Validate does not check body size).
const MaxChunkBodyBytes = 64 << 10

// Envelope is the AGDX agent envelope, the whole payload of an enveloped
// record. Field order here is the wire order; nil pointers, false Last, zero
// MustUnderstand and empty Body are absent on the wire.
type Envelope struct {
	Kind           Kind
	Record         *ID
	Conversation   ID
	Source         AgentID
	Target         *AgentID
	Cause          *ID
	CauseAt        *LogPosition
	Correlation    *ID
	Channel        *ID
	IdempotencyKey *IdempotencyKey
	DeadlineMicros *uint64
	Sequence       *uint64
	Last           bool
	FinishReason   *string
	TaskState      *TaskState
	Operation      *string
	Tool           *string
	Usage          *TokenUsage
	Metadata       Metadata
	MustUnderstand uint64
	Body           []byte
	Signature      *Signature
}

// ErrEncode reports an envelope (or capsule) that cannot be encoded because a
// field breaks a rule the decoder enforces, so the bytes would not read back.
var ErrEncode = errors.New("wire: cannot encode")

// UnmetRequirements returns the must-understand bits the receiver does not
// implement; a non-zero result means the message must be refused.
func (e *Envelope) UnmetRequirements(understood uint64) uint64 {
	return e.MustUnderstand &^ understood
}

// Fence returns the metadata "agdx.fence" token when it is a Uint or a
// non-negative Int; any other value counts as absent, as the reference reads it.
func (e *Envelope) Fence() (uint64, bool) {
	return e.Metadata.Get(MetaFence).AsUint()
}

// Clone returns a deep copy, so a caller can mutate it (for instance to sign
// or re-target) without touching the original.
func (e *Envelope) Clone() *Envelope {
	c := *e
	c.Record = clonePtr(e.Record)
	c.Target = clonePtr(e.Target)
	c.Cause = clonePtr(e.Cause)
	c.CauseAt = clonePtr(e.CauseAt)
	c.Correlation = clonePtr(e.Correlation)
	c.Channel = clonePtr(e.Channel)
	c.IdempotencyKey = clonePtr(e.IdempotencyKey)
	c.DeadlineMicros = clonePtr(e.DeadlineMicros)
	c.Sequence = clonePtr(e.Sequence)
	c.FinishReason = clonePtr(e.FinishReason)
	c.TaskState = clonePtr(e.TaskState)
	c.Operation = clonePtr(e.Operation)
	c.Tool = clonePtr(e.Tool)
	if e.Usage != nil {
		u := *e.Usage
		u.ReasoningOutputTokens = clonePtr(u.ReasoningOutputTokens)
		u.CacheReadInputTokens = clonePtr(u.CacheReadInputTokens)
		u.CacheCreationInputTokens = clonePtr(u.CacheCreationInputTokens)
		c.Usage = &u
	}
	c.Metadata = e.Metadata.Clone()
	if e.Body != nil {
		c.Body = append([]byte{}, e.Body...)
	}
	if e.Signature != nil {
		s := *e.Signature
		s.KeyID = append([]byte(nil), s.KeyID...)
		s.Bytes = append([]byte(nil), s.Bytes...)
		if s.Context != nil {
			ctx := SignatureContext{ContentType: clonePtr(s.Context.ContentType), AgentVersion: clonePtr(s.Context.AgentVersion)}
			s.Context = &ctx
		}
		c.Signature = &s
	}
	return &c
}

func clonePtr[T any](p *T) *T {
	if p == nil {
		return nil
	}
	v := *p
	return &v
}

// Marshal returns the envelope's canonical CBOR, the bytes the reference
// encoder writes and signatures cover.
func (e *Envelope) Marshal() ([]byte, error) {
	return e.AppendMarshal(make([]byte, 0, e.sizeHint()))
}

// MarshalCBOR implements cbor.Marshaler with the canonical bytes.
func (e *Envelope) MarshalCBOR() ([]byte, error) { return e.Marshal() }

// sizeHint over-estimates the encoded size so Marshal allocates once: fixed
// keys and heads take under 256 bytes, variable text and bytes are counted.
func (e *Envelope) sizeHint() int {
	n := 256 + len(e.Source) + len(e.Body)
	for _, p := range [...]*string{e.FinishReason, e.Operation, e.Tool} {
		if p != nil {
			n += len(*p)
		}
	}
	if e.Target != nil {
		n += len(*e.Target)
	}
	if e.IdempotencyKey != nil {
		n += len(*e.IdempotencyKey)
	}
	for _, m := range e.Metadata {
		n += 18 + len(m.Key) + m.Value.size()
	}
	if e.Signature != nil {
		n += 64 + len(e.Signature.KeyID) + len(e.Signature.Bytes)
	}
	return n
}

// AppendMarshal appends the canonical CBOR of e to dst. It refuses fields the
// decoder would reject (an unknown kind, a bad agent id or idempotency key,
// text that is not UTF-8), so whatever it writes reads back.
func (e *Envelope) AppendMarshal(dst []byte) ([]byte, error) {
	return e.appendCBOR(dst, true)
}

// appendCBOR writes the envelope; withSig false leaves the signature out, the
// form the signing preimage uses.
func (e *Envelope) appendCBOR(b []byte, withSig bool) ([]byte, error) {
	if err := e.checkEncodable(); err != nil {
		return b, err
	}
	n := uint64(3)
	for _, present := range [...]bool{
		e.Record != nil, e.Target != nil, e.Cause != nil, e.CauseAt != nil,
		e.Correlation != nil, e.Channel != nil, e.IdempotencyKey != nil,
		e.DeadlineMicros != nil, e.Sequence != nil, e.Last, e.FinishReason != nil,
		e.TaskState != nil, e.Operation != nil, e.Tool != nil, e.Usage != nil,
		e.Metadata != nil, e.MustUnderstand != 0, len(e.Body) != 0,
		withSig && e.Signature != nil,
	} {
		if present {
			n++
		}
	}
	b = appendHead(b, majorMap, n)
	b = append(b, "\x64kind"...)
	b = appendText(b, string(e.Kind))
	if e.Record != nil {
		b = append(b, "\x66record"...)
		b = appendID(b, e.Record)
	}
	b = append(b, "\x6cconversation"...)
	b = appendID(b, &e.Conversation)
	b = append(b, "\x66source"...)
	b = appendText(b, string(e.Source))
	if e.Target != nil {
		b = append(b, "\x66target"...)
		b = appendText(b, string(*e.Target))
	}
	if e.Cause != nil {
		b = append(b, "\x65cause"...)
		b = appendID(b, e.Cause)
	}
	if e.CauseAt != nil {
		b = append(b, "\x68cause_at"...)
		b = appendLogPosition(b, *e.CauseAt)
	}
	if e.Correlation != nil {
		b = append(b, "\x6bcorrelation"...)
		b = appendID(b, e.Correlation)
	}
	if e.Channel != nil {
		b = append(b, "\x67channel"...)
		b = appendID(b, e.Channel)
	}
	if e.IdempotencyKey != nil {
		b = append(b, "\x6fidempotency_key"...)
		b = appendText(b, string(*e.IdempotencyKey))
	}
	if e.DeadlineMicros != nil {
		b = append(b, "\x6fdeadline_micros"...)
		b = appendHead(b, majorUint, *e.DeadlineMicros)
	}
	if e.Sequence != nil {
		b = append(b, "\x68sequence"...)
		b = appendHead(b, majorUint, *e.Sequence)
	}
	if e.Last {
		b = append(b, "\x64last"...)
		b = append(b, cborTrue)
	}
	if e.FinishReason != nil {
		b = append(b, "\x6dfinish_reason"...)
		b = appendText(b, *e.FinishReason)
	}
	if e.TaskState != nil {
		b = append(b, "\x6atask_state"...)
		b = appendHead(b, majorUint, uint64(*e.TaskState))
	}
	if e.Operation != nil {
		b = append(b, "\x69operation"...)
		b = appendText(b, *e.Operation)
	}
	if e.Tool != nil {
		b = append(b, "\x64tool"...)
		b = appendText(b, *e.Tool)
	}
	if e.Usage != nil {
		b = append(b, "\x65usage"...)
		b = e.Usage.appendCBOR(b)
	}
	if e.Metadata != nil {
		b = append(b, "\x68metadata"...)
		var err error
		if b, err = e.Metadata.appendCBOR(b); err != nil {
			return b, fmt.Errorf("%w envelope: metadata: %w", ErrEncode, err)
		}
	}
	if e.MustUnderstand != 0 {
		b = append(b, "\x6fmust_understand"...)
		b = appendHead(b, majorUint, e.MustUnderstand)
	}
	if len(e.Body) != 0 {
		b = append(b, "\x64body"...)
		b = appendBytes(b, e.Body)
	}
	if withSig && e.Signature != nil {
		b = append(b, "\x69signature"...)
		b = e.Signature.AppendMarshal(b)
	}
	return b, nil
}

func (e *Envelope) checkEncodable() error {
	fail := func(field string, err error) error {
		return fmt.Errorf("%w envelope: %s: %w", ErrEncode, field, err)
	}
	if !e.Kind.Known() {
		return fail("kind", fmt.Errorf("%w %q", errUnknownKind, e.Kind))
	}
	if err := e.Source.Validate(); err != nil {
		return fail("source", err)
	}
	if e.Target != nil {
		if err := e.Target.Validate(); err != nil {
			return fail("target", err)
		}
	}
	if e.IdempotencyKey != nil {
		if err := e.IdempotencyKey.Validate(); err != nil {
			return fail("idempotency_key", err)
		}
	}
	for _, f := range [...]struct {
		name string
		p    *string
	}{{"finish_reason", e.FinishReason}, {"operation", e.Operation}, {"tool", e.Tool}} {
		if f.p != nil && !validUTF8String(*f.p) {
			return fail(f.name, errors.New("text is not valid UTF-8"))
		}
	}
	return nil
}

// DecodeEnvelope decodes one envelope from exactly b (trailing bytes are an
// error). Agent ids and the idempotency key are validated here; the per-kind
// rules are Validate's job. The result does not alias b.
func DecodeEnvelope(b []byte) (*Envelope, error) {
	return new(EnvelopeBuffer).Decode(b)
}

// EnvelopeBuffer is room for one decoded envelope and the targets of its
// optional fields. Embedded in a larger struct (the runtime's message), it
// decodes an envelope without allocating it on its own. The zero value is
// ready to use.
type EnvelopeBuffer struct{ st envelopeStorage }

// Decode decodes b as DecodeEnvelope does, into the buffer: the envelope
// returned, and metadata of up to two entries, live in the buffer and are
// overwritten by the next Decode.
func (eb *EnvelopeBuffer) Decode(b []byte) (*Envelope, error) {
	eb.st = envelopeStorage{}
	r := newReader(b, true)
	if err := r.finish("envelope", eb.st.decode(&r)); err != nil {
		return nil, err
	}
	return &eb.st.env, nil
}

// UnmarshalCBOR implements cbor.Unmarshaler.
func (e *Envelope) UnmarshalCBOR(b []byte) error {
	d, err := DecodeEnvelope(b)
	if err != nil {
		return err
	}
	*e = *d
	return nil
}

// envelopeStorage holds a decoded envelope together with the targets of its
// optional pointer fields, so one allocation serves them all.
type envelopeStorage struct {
	env                                 Envelope
	record, cause, correlation, channel ID
	causeAt                             LogPosition
	target                              AgentID
	idem                                IdempotencyKey
	deadline, sequence                  uint64
	finish, operation, tool             string
	taskState                           TaskState
	usage                               TokenUsage
	// meta holds the metadata of the usual envelope, which has an entry or
	// two (a fence, a run); more move it to the heap.
	meta [2]MetadataEntry
}

func (st *envelopeStorage) decode(r *reader) error { return decodeEnvelopeFields(r, st) }

// envelopeFields are the envelope's fields in wire order. The optional ones
// point into the storage beside the envelope.
var envelopeFields = recordFields[envelopeStorage]{
	{"kind", required, readEnvelopeKind},
	{"record", optional, readEnvelopeRecord},
	{"conversation", required, readEnvelopeConversation},
	{"source", required, readEnvelopeSource},
	{"target", optional, readEnvelopeTarget},
	{"cause", optional, readEnvelopeCause},
	{"cause_at", optional, readEnvelopeCauseAt},
	{"correlation", optional, readEnvelopeCorrelation},
	{"channel", optional, readEnvelopeChannel},
	{"idempotency_key", optional, readEnvelopeIdempotencyKey},
	{"deadline_micros", optional, readEnvelopeDeadlineMicros},
	{"sequence", optional, readEnvelopeSequence},
	{"last", defaulted, readEnvelopeLast},
	{"finish_reason", optional, readEnvelopeFinishReason},
	{"task_state", optional, readEnvelopeTaskState},
	{"operation", optional, readEnvelopeOperation},
	{"tool", optional, readEnvelopeTool},
	{"usage", optional, readEnvelopeUsage},
	{"metadata", optional, readEnvelopeMetadata},
	{"must_understand", defaulted, readEnvelopeMustUnderstand},
	{"body", defaulted, readEnvelopeBody},
	{"signature", optional, readEnvelopeSignature},
}

func readEnvelopeKind(r *reader, st *envelopeStorage) error {
	if err := r.skipTags(); err != nil {
		return err
	}
	if r.i < len(r.b) && r.b[r.i]&0xe0 == majorMap {
		return fmt.Errorf("%w: kind is a map", errAmbiguousEnum)
	}
	p, err := r.definite(majorText)
	if err != nil {
		return err
	}
	k, ok := kindOf(p)
	if !ok {
		return fmt.Errorf("%w %q", errUnknownKind, p)
	}
	st.env.Kind = k
	return nil
}

func readEnvelopeRecord(r *reader, st *envelopeStorage) (err error) {
	st.record, err = r.id()
	st.env.Record = &st.record
	return err
}

func readEnvelopeConversation(r *reader, st *envelopeStorage) (err error) {
	st.env.Conversation, err = r.id()
	return err
}

func readEnvelopeSource(r *reader, st *envelopeStorage) (err error) {
	st.env.Source, err = r.agentID()
	return err
}

func readEnvelopeTarget(r *reader, st *envelopeStorage) (err error) {
	st.target, err = r.agentID()
	st.env.Target = &st.target
	return err
}

func readEnvelopeCause(r *reader, st *envelopeStorage) (err error) {
	st.cause, err = r.id()
	st.env.Cause = &st.cause
	return err
}

func readEnvelopeCauseAt(r *reader, st *envelopeStorage) (err error) {
	st.causeAt, err = r.logPosition()
	st.env.CauseAt = &st.causeAt
	return err
}

func readEnvelopeCorrelation(r *reader, st *envelopeStorage) (err error) {
	st.correlation, err = r.id()
	st.env.Correlation = &st.correlation
	return err
}

func readEnvelopeChannel(r *reader, st *envelopeStorage) (err error) {
	st.channel, err = r.id()
	st.env.Channel = &st.channel
	return err
}

func readEnvelopeIdempotencyKey(r *reader, st *envelopeStorage) error {
	s, err := r.string()
	if err != nil {
		return err
	}
	if err := checkIdempotencyKey(s); err != nil {
		return err
	}
	st.idem = IdempotencyKey(s)
	st.env.IdempotencyKey = &st.idem
	return nil
}

func readEnvelopeDeadlineMicros(r *reader, st *envelopeStorage) (err error) {
	st.deadline, err = r.uint(maxUint64)
	st.env.DeadlineMicros = &st.deadline
	return err
}

func readEnvelopeSequence(r *reader, st *envelopeStorage) (err error) {
	st.sequence, err = r.uint(maxUint64)
	st.env.Sequence = &st.sequence
	return err
}

func readEnvelopeLast(r *reader, st *envelopeStorage) (err error) {
	st.env.Last, err = r.bool()
	return err
}

func readEnvelopeFinishReason(r *reader, st *envelopeStorage) (err error) {
	st.finish, err = r.string()
	st.env.FinishReason = &st.finish
	return err
}

func readEnvelopeTaskState(r *reader, st *envelopeStorage) error {
	v, err := r.uint(math.MaxUint8)
	st.taskState = TaskState(v)
	st.env.TaskState = &st.taskState
	return err
}

func readEnvelopeOperation(r *reader, st *envelopeStorage) error {
	p, err := r.text()
	if err != nil {
		return err
	}
	st.operation = r.internOperation(p)
	st.env.Operation = &st.operation
	return nil
}

func readEnvelopeTool(r *reader, st *envelopeStorage) (err error) {
	st.tool, err = r.string()
	st.env.Tool = &st.tool
	return err
}

func readEnvelopeUsage(r *reader, st *envelopeStorage) error {
	st.env.Usage = &st.usage
	return decodeUsageFields(r, &st.usage)
}

func readEnvelopeMetadata(r *reader, st *envelopeStorage) error {
	return st.env.Metadata.decode(r, st.meta[:0])
}

func readEnvelopeMustUnderstand(r *reader, st *envelopeStorage) (err error) {
	st.env.MustUnderstand, err = r.uint(maxUint64)
	return err
}

func readEnvelopeBody(r *reader, st *envelopeStorage) (err error) {
	st.env.Body, err = r.binBytes()
	return err
}

func readEnvelopeSignature(r *reader, st *envelopeStorage) error {
	st.env.Signature = new(Signature)
	return decodeSignatureFields(r, st.env.Signature)
}

// internOperation returns the vocabulary constant for well-known operations,
// sparing an allocation on the hot path.
func (r *reader) internOperation(p []byte) string {
	switch string(p) {
	case OperationTask:
		return OperationTask
	case OperationCard:
		return OperationCard
	case OperationProgress:
		return OperationProgress
	case OperationChat:
		return OperationChat
	case OperationReasoning:
		return OperationReasoning
	case OperationToolArgs:
		return OperationToolArgs
	}
	return r.intern(p)
}

func (r *reader) agentID() (AgentID, error) {
	s, err := r.string()
	if err != nil {
		return "", err
	}
	if err := checkAgentID(s); err != nil {
		return "", err
	}
	return AgentID(s), nil
}
