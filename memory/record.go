package memory

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"slices"
	"sync"

	"github.com/lasergo/laser/clock"
	"github.com/lasergo/laser/runtime"
	"github.com/lasergo/laser/sign"
	"github.com/lasergo/laser/wire"
)

// Header keys the reference stamps on memory records: the namespace always,
// user and app when the scope names them. Lifetime and agent are laser-go's:
// the lifetime rides when an item is durable, and a signed record carries
// all of them in its signed metadata, the agent included, since its source
// is the signer.
const (
	HeaderNamespace = "agdx.mem.ns"
	HeaderUser      = "agdx.mem.user"
	HeaderApp       = "agdx.mem.app"
	HeaderLifetime  = "agdx.mem.lifetime"
	HeaderAgent     = "agdx.mem.agent"
)

// Operations of a signed memory record's envelope: a memory record (the
// reference's bytes as its body) or the vector of an item.
const (
	OperationRecord    = "agdx.memory"
	OperationEmbedding = "agdx.memory.embedding"
)

// vectorMagic opens an embedding payload; no memory record (a CBOR map)
// starts with it, so readers that do not know embeddings skip them.
var vectorMagic = []byte("LGMV\x01")

// Refusals of the fold, counted by Store.Refused.
var (
	// ErrUnverified reports a memory record refused under a verifier.
	ErrUnverified = errors.New("memory: record not verified")
	// ErrReplayed reports a verified record folded before: a replay, or a
	// copy older than its writer's high-water mark.
	ErrReplayed = errors.New("memory: record replayed")
	// ErrNotAuthor reports a verified forget, feedback, item or named write
	// its principal may not make: of another's item or key.
	ErrNotAuthor = errors.New("memory: not the item's author")
)

// vectorRecord is the stored vector of an item under a model.
type vectorRecord struct {
	target wire.ID
	model  string
	vec    []float32
}

// marshalVector encodes v as an embedding payload: the magic, the target's
// 16 bytes, the model's length and name, the dimension, then the floats,
// little-endian.
func marshalVector(v *vectorRecord) []byte {
	b := make([]byte, 0, len(vectorMagic)+16+1+len(v.model)+2+4*len(v.vec))
	b = append(b, vectorMagic...)
	b = append(b, v.target[:]...)
	b = append(b, byte(len(v.model)))
	b = append(b, v.model...)
	b = binary.LittleEndian.AppendUint16(b, uint16(len(v.vec)))
	for _, x := range v.vec {
		b = binary.LittleEndian.AppendUint32(b, math.Float32bits(x))
	}
	return b
}

// isVector reports whether a payload is an embedding payload.
func isVector(b []byte) bool {
	return len(b) >= len(vectorMagic) && string(b[:len(vectorMagic)]) == string(vectorMagic)
}

func decodeVector(b []byte) (*vectorRecord, error) {
	b = b[len(vectorMagic):]
	if len(b) < 17 {
		return nil, errors.New("memory: short embedding record")
	}
	v := &vectorRecord{target: wire.ID(b[:16])}
	n := int(b[16])
	b = b[17:]
	if len(b) < n+2 {
		return nil, errors.New("memory: short embedding record")
	}
	v.model = string(b[:n])
	dims := int(binary.LittleEndian.Uint16(b[n:]))
	b = b[n+2:]
	if len(b) != 4*dims {
		return nil, fmt.Errorf("memory: embedding record of %d dimensions carries %d bytes", dims, len(b))
	}
	v.vec = make([]float32, dims)
	for i := range v.vec {
		v.vec[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
	}
	if !finite(v.vec) {
		return nil, errors.New("memory: embedding record carries a NaN or infinite value")
	}
	return v, nil
}

// record is one memory record as the fold reads it, whichever form it rode.
type record struct {
	mem *wire.MemoryRecord // nil for an embedding
	vec *vectorRecord
	// conv, agent, user, app and lifetime are the scope it was written under.
	conv     wire.ID
	agent    string
	user     string
	app      string
	lifetime Lifetime
	// scopeAgent is the agent of the scope as written ("" when the scope
	// named none), the agent a content id is computed over; agent falls
	// back to a signed record's source.
	scopeAgent string
	// author is the verified principal of a signed record, "" otherwise.
	author string
	// key identifies the write (its idempotency key, or a signed record's
	// id), so a feedback record appended twice counts once.
	key string
	// id is the envelope's record id (a ULID), zero for the plain form.
	id wire.ID
	at uint64
}

// scopeOf reads a record's scope fields from a header or metadata lookup.
func (r *record) scopeOf(get func(string) (string, bool)) {
	r.user, _ = get(HeaderUser)
	r.app, _ = get(HeaderApp)
	if lt, _ := get(HeaderLifetime); lt == string(Durable) {
		r.lifetime = Durable
	} else {
		r.lifetime = Session
	}
}

// reader decodes the records of one namespace, verifying them when it has
// a verifier.
type reader struct {
	topic    string
	ns       string
	verifier runtime.Verifier
	writers  map[string]bool
}

// read decodes one record of the topic; a record of another namespace, or
// one that is not a memory record, returns nil and no error, and a record
// the verifier refuses returns ErrUnverified. A forget or feedback without a
// namespace header (the reference's) is read as this namespace's.
func (rd *reader) read(in *runtime.Incoming) (*record, error) {
	if _, enveloped := in.Headers.Get(wire.HeaderAgentVersion); enveloped {
		return rd.readEnvelope(in)
	}
	if rd.verifier != nil {
		if ns, _ := headerString(in.Headers, HeaderNamespace); ns == rd.ns {
			return nil, fmt.Errorf("%w: an unsigned record", ErrUnverified)
		}
		return nil, nil
	}
	ns, stamped := headerString(in.Headers, HeaderNamespace)
	if stamped && ns != rd.ns {
		return nil, nil
	}
	prov, err := wire.DecodeProvenance(in.Headers)
	if err != nil {
		return nil, nil
	}
	r := &record{conv: prov.Conversation, agent: prov.Agent, scopeAgent: prov.Agent, key: prov.IdempotencyKey, at: in.Timestamp}
	r.scopeOf(func(k string) (string, bool) { return headerString(in.Headers, k) })
	if err := r.body(in.Payload); err != nil {
		return nil, nil
	}
	if !stamped && !targetsAnItem(r) {
		return nil, nil
	}
	return r, nil
}

// targetsAnItem reports whether a record is a forget or feedback: what the
// reference's LogMemory writes without a namespace header. Its fold applies
// every record of the topic to the item its id names, whatever the
// namespace, so a namespace-less forget or feedback belongs to every
// namespace of the topic and applies where its target is (item ids are
// unique, so that is at most one). A namespace-less item or named write is
// not the reference's and stays out: a Store's namespace is its isolation.
func targetsAnItem(r *record) bool {
	return r.mem != nil && (r.mem.Op == wire.MemoryForget || r.mem.Op == wire.MemoryFeedback)
}

// readEnvelope decodes a memory record that rode an AGDX envelope, the form
// a signing Store writes.
func (rd *reader) readEnvelope(in *runtime.Incoming) (*record, error) {
	m, err := runtime.DecodeRecord(rd.topic, in, 0)
	if err != nil || m.Envelope == nil {
		return nil, nil
	}
	env := m.Envelope
	if env.Operation == nil || (*env.Operation != OperationRecord && *env.Operation != OperationEmbedding) {
		return nil, nil
	}
	meta := func(k string) (string, bool) { return env.Metadata.Get(k).AsStr() }
	if ns, _ := meta(HeaderNamespace); ns != rd.ns {
		return nil, nil
	}
	r := &record{conv: env.Conversation, agent: string(env.Source), at: in.Timestamp}
	if a, ok := meta(HeaderAgent); ok {
		r.agent, r.scopeAgent = a, a
	}
	r.scopeOf(meta)
	if env.Record != nil {
		r.key, r.id = env.Record.String(), *env.Record
	}
	if rd.verifier != nil {
		v, err := m.Verify(rd.verifier)
		switch {
		case err != nil:
			return nil, fmt.Errorf("%w: %w", ErrUnverified, err)
		case v.Principal != string(env.Source):
			return nil, fmt.Errorf("%w: signed by %q, sent as %q", ErrUnverified, v.Principal, env.Source)
		case rd.writers != nil && !rd.writers[v.Principal]:
			return nil, fmt.Errorf("%w: %q is not a writer of namespace %q", ErrUnverified, v.Principal, rd.ns)
		}
		r.author = v.Principal
	}
	if err := r.body(env.Body); err != nil {
		return nil, nil
	}
	return r, nil
}

// body decodes the record's payload: an embedding or a memory record.
func (r *record) body(b []byte) error {
	var err error
	if isVector(b) {
		r.vec, err = decodeVector(b)
	} else {
		r.mem, err = wire.DecodeMemoryRecord(b)
	}
	return err
}

func headerString(h wire.EncodedHeaders, key string) (string, bool) {
	v, ok := h.Get(key)
	if !ok {
		return "", false
	}
	s, err := v.AsString()
	return s, err == nil
}

// writer encodes the records a Store appends: plain records in the
// reference's form, or, with a key, AGDX events from the Store's agent
// signed over the record and its scope.
type writer struct {
	topic string
	ns    string
	key   *sign.Key
	agent string
	ids   clock.IDSource
	clock clock.Clock
	// mu guards last, the newest record id minted: ids are kept strictly
	// increasing (a ULID's random part is not ordered within a
	// millisecond) since a reader drops a named write not newer than the
	// last it applied.
	mu   sync.Mutex
	last wire.ID
}

// nextID mints a record id newer than every one this writer minted before.
func (w *writer) nextID() wire.ID {
	id := w.ids.NewID()
	w.mu.Lock()
	defer w.mu.Unlock()
	if bytes.Compare(id[:], w.last[:]) <= 0 {
		id = w.last
		for i := len(id) - 1; i >= 0; i-- {
			id[i]++
			if id[i] != 0 {
				break
			}
		}
	}
	w.last = id
	return id
}

// outgoing builds the transport record of a memory payload written under
// scope with provenance prov.
func (w *writer) outgoing(payload []byte, scope Scope, prov wire.Provenance, embedding bool) (runtime.Outgoing, error) {
	if w.key == nil {
		headers, err := prov.Headers()
		if err != nil {
			return runtime.Outgoing{}, &runtime.Error{Code: runtime.CodeInvalid, Msg: "provenance headers", Err: err}
		}
		headers = append(headers, wire.Header{Key: HeaderNamespace, Value: wire.StringValue(w.ns)})
		for _, h := range scopeFields(scope) {
			headers = append(headers, wire.Header{Key: h[0], Value: wire.StringValue(h[1])})
		}
		return runtime.Outgoing{Key: prov.PartitionKey(), Headers: headers, Payload: payload}, nil
	}
	source, err := wire.ParseAgentID(w.agent)
	if err != nil {
		return runtime.Outgoing{}, &runtime.Error{Code: runtime.CodeConfig, Msg: "memory signing agent", Err: err}
	}
	op, ct := OperationRecord, wire.ContentCBOR
	if embedding {
		op, ct = OperationEmbedding, wire.ContentRaw
	}
	rec := w.nextID()
	env := &wire.Envelope{Kind: wire.KindEvent, Record: &rec, Conversation: prov.Conversation, Source: source, Operation: &op, Body: payload}
	env.Metadata.Set(HeaderNamespace, wire.StrValue(w.ns))
	if scope.Agent != "" {
		env.Metadata.Set(HeaderAgent, wire.StrValue(scope.Agent))
	}
	for _, h := range scopeFields(scope) {
		env.Metadata.Set(h[0], wire.StrValue(h[1]))
	}
	// Signed with its topic and issued-at, a record copied to another
	// topic, or appended past the freshness bound, does not verify.
	sign.Bind(env, w.topic, uint64(w.clock.Now().UnixMicro()))
	if err := wire.Validate(env); err != nil {
		return runtime.Outgoing{}, &runtime.Error{Code: runtime.CodeInvalid, Msg: "memory envelope", Err: err}
	}
	if err := w.key.Sign(env, wire.NewSignatureContext(ct, wire.AgentOpVersion)); err != nil {
		return runtime.Outgoing{}, &runtime.Error{Code: runtime.CodeSignature, Msg: "sign memory record", Err: err}
	}
	b, err := env.Marshal()
	if err != nil {
		return runtime.Outgoing{}, &runtime.Error{Code: runtime.CodeCodec, Msg: "encode memory envelope", Err: err}
	}
	headers := append(wire.EnvelopeHeaders(env, ct), wire.Header{Key: HeaderNamespace, Value: wire.StringValue(w.ns)})
	return runtime.Outgoing{Key: wire.PartitionKey(env.Conversation), Headers: headers, Payload: b}, nil
}

// scopeFields are the optional scope headers a record carries.
func scopeFields(scope Scope) [][2]string {
	var out [][2]string
	if scope.User != "" {
		out = append(out, [2]string{HeaderUser, scope.User})
	}
	if scope.App != "" {
		out = append(out, [2]string{HeaderApp, scope.App})
	}
	if scope.Lifetime == Durable {
		out = append(out, [2]string{HeaderLifetime, string(Durable)})
	}
	return slices.Clip(out)
}
