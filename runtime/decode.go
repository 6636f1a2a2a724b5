package runtime

import (
	"fmt"
	"unsafe"

	"github.com/lasergo/laser/wire"
)

// maxSDKAgentID is the agent id limit of the reference runtime (the wire
// allows one byte more); longer names drop out of synthesized provenance.
const maxSDKAgentID = 255

// DecodeRecord turns a log record into a Message: an AGDX envelope when the
// agdx.av header is present (version, CBOR, validity matrix and
// must-understand bits checked), otherwise plain provenance headers. Any
// failure is a decode failure, which the consumer dead-letters verbatim.
func DecodeRecord(topic string, rec *Incoming, understood uint64) (*Message, error) {
	return (*messageSlab)(nil).decode(topic, rec, understood)
}

// decode decodes rec as the consumer reads its topic, into a message of
// slab (nil: a message of its own).
func (c *Consumer) decode(slab *messageSlab, rec *Incoming) decodedRecord {
	m, err := slab.decode(c.cfg.Topic, rec, c.cfg.UnderstoodFeatures)
	return decodedRecord{m: m, err: err}
}

// slabSize is how many messages of one shape a messageSlab allocates at
// most at once: enough that the allocation per message mostly disappears,
// few enough that a message a handler keeps holds little else alive.
const slabSize = 32

// messageSlab hands out fresh messages from arrays of up to slabSize, one
// allocation per slabSize records of a shape instead of one per record. Its
// owner calls reset with each batch's size, so an array is never larger
// than the batch needs, and with 0 once the batch is handled, so an idle
// consumer keeps none of its messages alive. Each decoding goroutine has
// its own (a slab is not safe for concurrent use); a nil slab allocates
// every message on its own.
type messageSlab struct {
	plain []plainMessage
	agdx  []agdxMessage
	// want is how many records the current batch has left to decode.
	want int
}

// reset drops the arrays handed out so far (their messages stay with
// whoever holds them) and expects n more records.
func (s *messageSlab) reset(n int) { *s = messageSlab{want: n} }

// expect makes the slab expect at least n more records, keeping the arrays
// it has.
func (s *messageSlab) expect(n int) { s.want = max(s.want, n) }

// slabBytes bounds one array of a slab: 32 KiB less room for the
// allocator's header, so an array stays a small object (one of 32
// messages of 1 KiB, an AGDX message, would be a large one: a trip to the
// heap's lock and a cleared span for every 32 records).
const slabBytes = 32<<10 - 64

// takeFresh hands out the first element of *arr, first filling it with
// zero elements for the records the batch has left (want, at most
// slabSize, at least one) when it is empty; an element is never handed out
// twice.
func takeFresh[T any](arr *[]T, want *int) *T {
	if len(*arr) == 0 {
		*arr = make([]T, min(max(*want, 1), slabSize, slabBytes/int(unsafe.Sizeof(*new(T)))))
	}
	e := &(*arr)[0]
	*arr = (*arr)[1:]
	*want--
	return e
}

// decode is DecodeRecord with the message taken from s.
func (s *messageSlab) decode(topic string, rec *Incoming, understood uint64) (*Message, error) {
	if s == nil {
		s = &messageSlab{want: 1} // an array of one: a message of its own
	}
	// One pass over the headers for the two typed ones, rather than a
	// lookup each.
	var v, ct wire.HeaderValue
	var agdx, hasCT bool
	for key, value := range rec.Headers.All() {
		switch key {
		case wire.HeaderAgentVersion:
			if !agdx {
				v, agdx = value, true
			}
		case wire.HeaderContentType:
			if !hasCT {
				ct, hasCT = value, true
			}
		}
	}
	var m *Message
	var am *agdxMessage
	var pm *plainMessage
	if agdx {
		am = takeFresh(&s.agdx, &s.want)
		m = &am.m
	} else {
		pm = takeFresh(&s.plain, &s.want)
		m = &pm.m
	}
	// Field by field, not *m = Message{...}: the message is fresh (zero),
	// and a whole-struct store would run the write barrier over every
	// pointer slot of it while the collector marks.
	m.Topic = topic
	m.Position = rec.Position
	m.Timestamp = rec.Timestamp
	m.Headers = rec.Headers
	m.Payload = rec.Payload
	if hasCT {
		code, err := ct.AsUint8()
		if err != nil {
			return nil, fmt.Errorf("header %s: %w", wire.HeaderContentType, err)
		}
		m.ContentType, m.HasContentType = wire.ContentType(code), true
		m.ctCode = code
		m.observed.ContentType = &m.ctCode
	}
	if !agdx {
		if err := wire.DecodeProvenanceInto(&m.Provenance, rec.Headers, pm.text[:]); err != nil {
			return nil, fmt.Errorf("provenance headers: %w", err)
		}
		m.observed.ContentType = nil
		return m, nil
	}
	version, err := v.AsUint32()
	if err != nil {
		return nil, fmt.Errorf("header %s: %w", wire.HeaderAgentVersion, err)
	}
	if version != wire.AgentOpVersion {
		return nil, fmt.Errorf("unsupported agent envelope version %d", version)
	}
	m.avCode = version
	m.observed.AgentVersion = &m.avCode
	env, err := am.envBuf.Decode(rec.Payload)
	if err != nil {
		return nil, err
	}
	if err := wire.Validate(env); err != nil {
		return nil, err
	}
	if unmet := env.UnmetRequirements(understood); unmet != 0 {
		return nil, fmt.Errorf("agent envelope requires unsupported features 0x%016x", unmet)
	}
	m.Envelope = env
	m.Provenance = provenanceOf(env)
	if env.Correlation != nil {
		// The text lives in the message: one allocation less per record.
		text, _ := env.Correlation.AppendText(am.corrText[:0])
		m.Provenance.Correlation = unsafe.String(unsafe.SliceData(text), len(text))
	}
	if f, ok := env.Fence(); ok {
		m.fence = f
		m.Provenance.Fence = &m.fence
	}
	return m, nil
}

// provenanceOf synthesizes routing provenance from an envelope, so the
// target filter, dedup, fence and deadline read one shape for both kinds of
// message. Names the reference's agent-id rules reject simply drop out. The
// fence is set by DecodeRecord, which owns storage for it.
func provenanceOf(env *wire.Envelope) wire.Provenance {
	p := wire.Provenance{Conversation: env.Conversation}
	if s := string(env.Source); len(s) <= maxSDKAgentID {
		p.Agent = s
	}
	if env.Target != nil && len(*env.Target) <= maxSDKAgentID {
		p.Target = string(*env.Target)
	}
	if env.IdempotencyKey != nil {
		p.IdempotencyKey = string(*env.IdempotencyKey)
	}
	// The correlation text is filled in by DecodeRecord, which owns storage
	// for it.
	// Shared with the envelope: provenance is copied, never written through.
	p.Deadline = env.DeadlineMicros
	return p
}
