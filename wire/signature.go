package wire

import (
	"fmt"
	"math"
)

// SignatureDomain prefixes every signing preimage.
const SignatureDomain = "agdx.signature.v1"

// SignatureSchemeEd25519 is the only defined signature scheme; other codes
// pass validation but never verify.
const SignatureSchemeEd25519 uint8 = 1

// Ed25519 capsule sizes.
const (
	Ed25519KeyIDLen     = 8
	Ed25519SignatureLen = 64
)

// Signature is the envelope's signature capsule.
type Signature struct {
	Scheme  uint8
	KeyID   []byte
	Bytes   []byte
	Context *SignatureContext
}

// SignatureContext binds the record headers the signer saw (agdx.ct and
// agdx.av) into the signature. A context with both fields nil still encodes
// (as an empty map) and differs from no context at all.
type SignatureContext struct {
	ContentType  *uint8
	AgentVersion *uint32
}

// NewSignatureContext returns the context the reference binds at publish time.
func NewSignatureContext(ct ContentType, agentVersion uint32) *SignatureContext {
	c := uint8(ct)
	return &SignatureContext{ContentType: &c, AgentVersion: &agentVersion}
}

// Equal compares field by field, telling nil from a present zero.
func (c *SignatureContext) Equal(o *SignatureContext) bool {
	if c == nil || o == nil {
		return c == o
	}
	return eqPtr(c.ContentType, o.ContentType) && eqPtr(c.AgentVersion, o.AgentVersion)
}

func eqPtr[T comparable](a, b *T) bool {
	if a == nil || b == nil {
		return a == b
	}
	return *a == *b
}

// String renders "{ct=1 av=1}" with "-" for an absent field.
func (c *SignatureContext) String() string {
	if c == nil {
		return "<none>"
	}
	f := func(p any) string {
		switch v := p.(type) {
		case *uint8:
			if v != nil {
				return fmt.Sprint(*v)
			}
		case *uint32:
			if v != nil {
				return fmt.Sprint(*v)
			}
		}
		return "-"
	}
	return "{ct=" + f(c.ContentType) + " av=" + f(c.AgentVersion) + "}"
}

// AppendMarshal appends the context's canonical CBOR, the form the signing
// preimage embeds.
func (c *SignatureContext) AppendMarshal(b []byte) []byte {
	n := uint64(0)
	if c.ContentType != nil {
		n++
	}
	if c.AgentVersion != nil {
		n++
	}
	b = appendHead(b, majorMap, n)
	if c.ContentType != nil {
		b = appendText(b, "content_type")
		b = appendHead(b, majorUint, uint64(*c.ContentType))
	}
	if c.AgentVersion != nil {
		b = appendText(b, "agent_version")
		b = appendHead(b, majorUint, uint64(*c.AgentVersion))
	}
	return b
}

// Marshal returns the context's canonical CBOR.
func (c *SignatureContext) Marshal() []byte { return c.AppendMarshal(nil) }

// signatureContextStorage is a decoded context with the targets of its
// pointer fields, so one allocation serves them all.
type signatureContextStorage struct {
	ctx SignatureContext
	ct  uint8
	av  uint32
}

// signatureContextFields are SignatureContext's fields in wire order.
var signatureContextFields = recordFields[signatureContextStorage]{
	{"content_type", optional, readSignatureContextContentType},
	{"agent_version", optional, readSignatureContextAgentVersion},
}

func readSignatureContextContentType(r *reader, st *signatureContextStorage) error {
	v, err := r.uint(math.MaxUint8)
	st.ct = uint8(v)
	st.ctx.ContentType = &st.ct
	return err
}

func readSignatureContextAgentVersion(r *reader, st *signatureContextStorage) error {
	v, err := r.uint(math.MaxUint32)
	st.av = uint32(v)
	st.ctx.AgentVersion = &st.av
	return err
}

// AppendMarshal appends the capsule's canonical CBOR.
func (s *Signature) AppendMarshal(b []byte) []byte {
	n := uint64(3)
	if s.Context != nil {
		n++
	}
	b = appendHead(b, majorMap, n)
	b = appendText(b, "scheme")
	b = appendHead(b, majorUint, uint64(s.Scheme))
	b = appendText(b, "key_id")
	b = appendBytes(b, s.KeyID)
	b = appendText(b, "bytes")
	b = appendBytes(b, s.Bytes)
	if s.Context != nil {
		b = appendText(b, "context")
		b = s.Context.AppendMarshal(b)
	}
	return b
}

// Marshal returns the capsule's canonical CBOR.
func (s *Signature) Marshal() ([]byte, error) { return s.AppendMarshal(nil), nil }

// MarshalCBOR implements cbor.Marshaler.
func (s *Signature) MarshalCBOR() ([]byte, error) { return s.Marshal() }

// UnmarshalCBOR implements cbor.Unmarshaler.
func (s *Signature) UnmarshalCBOR(b []byte) error { return unmarshalInto(s, b, "signature") }

// DecodeSignature decodes a bare signature capsule.
func DecodeSignature(b []byte) (*Signature, error) { return decodeAs[Signature](b, "signature") }

func (s *Signature) decode(r *reader) error { return decodeSignatureFields(r, s) }

// signatureFields are the signature capsule's fields in wire order.
var signatureFields = recordFields[Signature]{
	{"scheme", required, readSignatureScheme},
	{"key_id", required, readSignatureKeyID},
	{"bytes", required, readSignatureBytes},
	{"context", optional, readSignatureContext},
}

func readSignatureScheme(r *reader, s *Signature) error {
	v, err := r.uint(math.MaxUint8)
	s.Scheme = uint8(v)
	return err
}

func readSignatureKeyID(r *reader, s *Signature) (err error) {
	s.KeyID, err = r.binBytes()
	return err
}

func readSignatureBytes(r *reader, s *Signature) (err error) {
	s.Bytes, err = r.binBytes()
	return err
}

func readSignatureContext(r *reader, s *Signature) error {
	st := new(signatureContextStorage)
	s.Context = &st.ctx
	return decodeSignatureContextFields(r, st)
}

// Validate applies the capsule rule: an Ed25519 capsule carries an 8-byte key
// id and a 64-byte signature; other schemes pass (and never verify).
func (s *Signature) Validate() error {
	if s.Scheme != SignatureSchemeEd25519 {
		return nil
	}
	if len(s.KeyID) != Ed25519KeyIDLen {
		return &ValidateError{Rule: Invalid, Field: "signature", Reason: fmt.Sprintf("ed25519 key_id is %d bytes, want %d", len(s.KeyID), Ed25519KeyIDLen)}
	}
	if len(s.Bytes) != Ed25519SignatureLen {
		return &ValidateError{Rule: Invalid, Field: "signature", Reason: fmt.Sprintf("ed25519 signature is %d bytes, want %d", len(s.Bytes), Ed25519SignatureLen)}
	}
	return nil
}
