package wire

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"unicode/utf8"
)

// Agent card caps.
const (
	MaxCardTextBytes    = 256
	MaxCardCapabilities = 64
	MaxBodyRefBytes     = 1024
	BodyRefDigestLen    = 32
)

// errInvalidCard reports an agent card or body reference that breaks its rules.
var errInvalidCard = errors.New("wire: invalid agent card")

// errInvalidBodyRef reports a claim-check reference that breaks its rules.
var errInvalidBodyRef = errors.New("wire: invalid body reference")

// Health is a capability's advertised health; unknown codes pass through.
type Health uint8

// Health codes.
const (
	HealthHealthy     Health = 1
	HealthDegraded    Health = 2
	HealthUnavailable Health = 3
)

// String returns the name, or "unrecognized-N".
func (h Health) String() string {
	switch h {
	case HealthHealthy:
		return "healthy"
	case HealthDegraded:
		return "degraded"
	case HealthUnavailable:
		return "unavailable"
	}
	return "unrecognized-" + strconv.Itoa(int(h))
}

// ContentReference names a capability's input or output: either a content
// type or a schema id (when SchemaID is non-nil). On the wire the content type
// rides as its name string, unlike everywhere else. (The reference calls it
// ContentRef; here that name is the claim-check content type code.)
type ContentReference struct {
	ContentType ContentType
	SchemaID    *string
}

// ContentByType refers to a content type.
func ContentByType(ct ContentType) *ContentReference { return &ContentReference{ContentType: ct} }

// ContentBySchema refers to a registered schema.
func ContentBySchema(id string) *ContentReference { return &ContentReference{SchemaID: &id} }

func (c *ContentReference) appendCBOR(b []byte) ([]byte, error) {
	b = appendHead(b, majorMap, 1)
	if c.SchemaID != nil {
		if !utf8.ValidString(*c.SchemaID) {
			return b, fmt.Errorf("%w content ref: schema_id is not valid UTF-8", ErrEncode)
		}
		b = append(b, "\x69schema_id"...)
		return appendText(b, *c.SchemaID), nil
	}
	if !c.ContentType.Known() {
		return b, fmt.Errorf("%w content ref: %w code %d has no name", ErrEncode, errUnknownContentType, c.ContentType)
	}
	b = append(b, "\x6ccontent_type"...)
	return appendText(b, c.ContentType.String()), nil
}

// decode reads the externally tagged enum as the reference does: a
// definite one-entry map from the variant's name to its content, where the
// content type is itself an enum, so a definite name.
func (c *ContentReference) decode(r *reader) error {
	if err := r.skipTags(); err != nil {
		return err
	}
	if r.i < len(r.b) && r.b[r.i]&0xe0 == majorText {
		return fmt.Errorf("%w: a content ref as a bare variant name", errAmbiguousEnum)
	}
	n, indef, err := r.container(majorMap)
	if err != nil {
		return err
	}
	if indef || n != 1 {
		return fmt.Errorf("%w: a content ref is a definite map of one entry", errMalformed)
	}
	key, err := r.key()
	if err != nil {
		return err
	}
	switch string(key) {
	case "content_type":
		if err := r.skipTags(); err != nil {
			return err
		}
		if r.i < len(r.b) && r.b[r.i]&0xe0 == majorMap {
			return fmt.Errorf("%w: a content type as a map", errAmbiguousEnum)
		}
		name, err := r.definite(majorText)
		if err != nil {
			return err
		}
		if c.ContentType, err = ParseContentType(string(name)); err != nil {
			return err
		}
	case "schema_id":
		s, err := r.string()
		if err != nil {
			return err
		}
		c.SchemaID = &s
	default:
		return fmt.Errorf("%w: unknown content ref variant %q", errMalformed, key)
	}
	r.leave()
	return nil
}

// CapabilityDescriptor advertises one skill of an agent.
type CapabilityDescriptor struct {
	SkillID        string
	Input          *ContentReference
	Output         *ContentReference
	CostClass      *uint8
	LatencyClass   *uint8
	MaxConcurrency *uint32
	Health         *Health
	// Load is per-mille.
	Load *uint16
}

func (c *CapabilityDescriptor) appendCBOR(b []byte) ([]byte, error) {
	if !utf8.ValidString(c.SkillID) {
		return b, fmt.Errorf("%w capability: skill_id is not valid UTF-8", ErrEncode)
	}
	n := uint64(1)
	for _, present := range [...]bool{c.Input != nil, c.Output != nil, c.CostClass != nil, c.LatencyClass != nil, c.MaxConcurrency != nil, c.Health != nil, c.Load != nil} {
		if present {
			n++
		}
	}
	b = appendHead(b, majorMap, n)
	b = append(b, "\x68skill_id"...)
	b = appendText(b, c.SkillID)
	var err error
	if c.Input != nil {
		b = append(b, "\x65input"...)
		if b, err = c.Input.appendCBOR(b); err != nil {
			return b, err
		}
	}
	if c.Output != nil {
		b = append(b, "\x66output"...)
		if b, err = c.Output.appendCBOR(b); err != nil {
			return b, err
		}
	}
	if c.CostClass != nil {
		b = append(b, "\x6acost_class"...)
		b = appendHead(b, majorUint, uint64(*c.CostClass))
	}
	if c.LatencyClass != nil {
		b = append(b, "\x6dlatency_class"...)
		b = appendHead(b, majorUint, uint64(*c.LatencyClass))
	}
	if c.MaxConcurrency != nil {
		b = append(b, "\x6fmax_concurrency"...)
		b = appendHead(b, majorUint, uint64(*c.MaxConcurrency))
	}
	if c.Health != nil {
		b = append(b, "\x66health"...)
		b = appendHead(b, majorUint, uint64(*c.Health))
	}
	if c.Load != nil {
		b = append(b, "\x64load"...)
		b = appendHead(b, majorUint, uint64(*c.Load))
	}
	return b, nil
}

// capabilityFields are CapabilityDescriptor's fields in wire order.
var capabilityFields = recordFields[CapabilityDescriptor]{
	{"skill_id", required, readCapabilitySkillID},
	{"input", optional, readCapabilityInput},
	{"output", optional, readCapabilityOutput},
	{"cost_class", optional, readCapabilityCostClass},
	{"latency_class", optional, readCapabilityLatencyClass},
	{"max_concurrency", optional, readCapabilityMaxConcurrency},
	{"health", optional, readCapabilityHealth},
	{"load", optional, readCapabilityLoad},
}

func readCapabilitySkillID(r *reader, c *CapabilityDescriptor) (err error) {
	c.SkillID, err = r.string()
	return err
}

func readCapabilityInput(r *reader, c *CapabilityDescriptor) error {
	c.Input = new(ContentReference)
	return c.Input.decode(r)
}

func readCapabilityOutput(r *reader, c *CapabilityDescriptor) error {
	c.Output = new(ContentReference)
	return c.Output.decode(r)
}

func readCapabilityCostClass(r *reader, c *CapabilityDescriptor) error {
	v, err := r.uint(math.MaxUint8)
	c.CostClass = ptr(uint8(v))
	return err
}

func readCapabilityLatencyClass(r *reader, c *CapabilityDescriptor) error {
	v, err := r.uint(math.MaxUint8)
	c.LatencyClass = ptr(uint8(v))
	return err
}

func readCapabilityMaxConcurrency(r *reader, c *CapabilityDescriptor) error {
	v, err := r.uint(math.MaxUint32)
	c.MaxConcurrency = ptr(uint32(v))
	return err
}

func readCapabilityHealth(r *reader, c *CapabilityDescriptor) error {
	v, err := r.uint(math.MaxUint8)
	c.Health = ptr(Health(v))
	return err
}

func readCapabilityLoad(r *reader, c *CapabilityDescriptor) error {
	v, err := r.uint(math.MaxUint16)
	c.Load = ptr(uint16(v))
	return err
}

func ptr[T any](v T) *T { return &v }

// AgentCard is the body of a status/card envelope: who the agent is and what
// it can do. Empty Name, Version and Capabilities are absent on the wire.
type AgentCard struct {
	Name         string
	Version      string
	Capabilities []CapabilityDescriptor
	TTLMicros    *uint64
}

// Marshal returns the card's canonical CBOR.
func (c *AgentCard) Marshal() ([]byte, error) { return c.AppendMarshal(nil) }

// AppendMarshal appends the card's canonical CBOR to b.
func (c *AgentCard) AppendMarshal(b []byte) ([]byte, error) {
	if !utf8.ValidString(c.Name) || !utf8.ValidString(c.Version) {
		return b, fmt.Errorf("%w agent card: text is not valid UTF-8", ErrEncode)
	}
	n := uint64(0)
	for _, present := range [...]bool{c.Name != "", c.Version != "", len(c.Capabilities) != 0, c.TTLMicros != nil} {
		if present {
			n++
		}
	}
	b = appendHead(b, majorMap, n)
	if c.Name != "" {
		b = append(b, "\x64name"...)
		b = appendText(b, c.Name)
	}
	if c.Version != "" {
		b = append(b, "\x67version"...)
		b = appendText(b, c.Version)
	}
	if len(c.Capabilities) != 0 {
		b = append(b, "\x6ccapabilities"...)
		b = appendHead(b, majorArray, uint64(len(c.Capabilities)))
		var err error
		for i := range c.Capabilities {
			if b, err = c.Capabilities[i].appendCBOR(b); err != nil {
				return b, err
			}
		}
	}
	if c.TTLMicros != nil {
		b = append(b, "\x6attl_micros"...)
		b = appendHead(b, majorUint, *c.TTLMicros)
	}
	return b, nil
}

// MarshalCBOR implements cbor.Marshaler.
func (c *AgentCard) MarshalCBOR() ([]byte, error) { return c.Marshal() }

// UnmarshalCBOR implements cbor.Unmarshaler.
func (c *AgentCard) UnmarshalCBOR(b []byte) error { return unmarshalInto(c, b, "agent card") }

// DecodeAgentCard decodes an agent card body.
func DecodeAgentCard(b []byte) (*AgentCard, error) { return decodeAs[AgentCard](b, "agent card") }

func (c *AgentCard) decode(r *reader) error { return decodeCardFields(r, c) }

// cardFields are AgentCard's fields in wire order.
var cardFields = recordFields[AgentCard]{
	{"name", optional, readCardName},
	{"version", optional, readCardVersion},
	// A list, not an option: null is no list.
	{"capabilities", defaulted, readCapabilities},
	{"ttl_micros", optional, readCardTtlMicros},
}

func readCardName(r *reader, c *AgentCard) (err error) {
	c.Name, err = r.string()
	return err
}

func readCardVersion(r *reader, c *AgentCard) (err error) {
	c.Version, err = r.string()
	return err
}

func readCardTtlMicros(r *reader, c *AgentCard) error {
	v, err := r.uint(maxUint64)
	c.TTLMicros = &v
	return err
}

func readCapabilities(r *reader, c *AgentCard) error {
	if err := r.skipTags(); err != nil {
		return err
	}
	if r.i < len(r.b) && r.b[r.i]&0xe0 == majorBytes {
		// The reference reads a byte string as a list of its bytes, so an
		// empty one is an empty list (and any byte no capability).
		p, err := r.str(majorBytes)
		if err != nil {
			return err
		}
		if len(p) > 0 {
			return fmt.Errorf("%w: capabilities as a non-empty byte string", errMalformed)
		}
		c.Capabilities = nil
		return nil
	}
	n, indef, err := r.container(majorArray)
	if err != nil {
		return err
	}
	c.Capabilities = nil
	for i := uint64(0); r.next(i, n, indef); i++ {
		var d CapabilityDescriptor
		if err := decodeCapabilityFields(r, &d); err != nil {
			return err
		}
		c.Capabilities = append(c.Capabilities, d)
	}
	r.leave()
	return nil
}

// Validate checks the card's caps: name and version at most 256 bytes, at
// most 64 capabilities, each with a skill id of 1..256 bytes.
func (c *AgentCard) Validate() error {
	switch {
	case len(c.Name) > MaxCardTextBytes:
		return fmt.Errorf("%w: name is %d bytes, max %d", errInvalidCard, len(c.Name), MaxCardTextBytes)
	case len(c.Version) > MaxCardTextBytes:
		return fmt.Errorf("%w: version is %d bytes, max %d", errInvalidCard, len(c.Version), MaxCardTextBytes)
	case len(c.Capabilities) > MaxCardCapabilities:
		return fmt.Errorf("%w: %d capabilities, max %d", errInvalidCard, len(c.Capabilities), MaxCardCapabilities)
	}
	for i, d := range c.Capabilities {
		if d.SkillID == "" || len(d.SkillID) > MaxCardTextBytes {
			return fmt.Errorf("%w: capability %d: skill_id is %d bytes, want 1..%d", errInvalidCard, i, len(d.SkillID), MaxCardTextBytes)
		}
	}
	return nil
}

// BodyRef is the claim-check capsule (content type ref): the real body lives
// elsewhere, named by Reference and pinned by its SHA-256.
type BodyRef struct {
	Reference string
	SizeBytes uint64
	SHA256    []byte
	// Encryption is dormant; nil means plaintext.
	Encryption *uint8
}

// Marshal returns the capsule's canonical CBOR.
func (b *BodyRef) Marshal() ([]byte, error) { return b.AppendMarshal(nil) }

// AppendMarshal appends the capsule's canonical CBOR to dst.
func (b *BodyRef) AppendMarshal(dst []byte) ([]byte, error) {
	if !utf8.ValidString(b.Reference) {
		return dst, fmt.Errorf("%w body ref: reference is not valid UTF-8", ErrEncode)
	}
	n := uint64(3)
	if b.Encryption != nil {
		n++
	}
	dst = appendHead(dst, majorMap, n)
	dst = append(dst, "\x69reference"...)
	dst = appendText(dst, b.Reference)
	dst = append(dst, "\x6asize_bytes"...)
	dst = appendHead(dst, majorUint, b.SizeBytes)
	dst = append(dst, "\x66sha256"...)
	dst = appendBytes(dst, b.SHA256)
	if b.Encryption != nil {
		dst = append(dst, "\x6aencryption"...)
		dst = appendHead(dst, majorUint, uint64(*b.Encryption))
	}
	return dst, nil
}

// MarshalCBOR implements cbor.Marshaler.
func (b *BodyRef) MarshalCBOR() ([]byte, error) { return b.Marshal() }

// UnmarshalCBOR implements cbor.Unmarshaler.
func (b *BodyRef) UnmarshalCBOR(p []byte) error { return unmarshalInto(b, p, "body ref") }

// DecodeBodyRef decodes a claim-check capsule.
func DecodeBodyRef(p []byte) (*BodyRef, error) { return decodeAs[BodyRef](p, "body ref") }

func (b *BodyRef) decode(r *reader) error { return decodeBodyRefFields(r, b) }

// bodyRefFields are the claim-check capsule's fields in wire order.
var bodyRefFields = recordFields[BodyRef]{
	{"reference", required, readBodyRefReference},
	{"size_bytes", required, readBodyRefSizeBytes},
	{"sha256", required, readBodyRefSha256},
	{"encryption", optional, readBodyRefEncryption},
}

func readBodyRefReference(r *reader, b *BodyRef) (err error) {
	b.Reference, err = r.string()
	return err
}

func readBodyRefSizeBytes(r *reader, b *BodyRef) (err error) {
	b.SizeBytes, err = r.uint(maxUint64)
	return err
}

func readBodyRefSha256(r *reader, b *BodyRef) (err error) {
	b.SHA256, err = r.binBytes()
	return err
}

func readBodyRefEncryption(r *reader, b *BodyRef) error {
	v, err := r.uint(math.MaxUint8)
	b.Encryption = ptr(uint8(v))
	return err
}

// Validate checks a reference of 1..1024 bytes and a 32-byte digest.
func (b *BodyRef) Validate() error {
	if b.Reference == "" || len(b.Reference) > MaxBodyRefBytes {
		return fmt.Errorf("%w: reference is %d bytes, want 1..%d", errInvalidBodyRef, len(b.Reference), MaxBodyRefBytes)
	}
	if len(b.SHA256) != BodyRefDigestLen {
		return fmt.Errorf("%w: sha256 is %d bytes, want %d", errInvalidBodyRef, len(b.SHA256), BodyRefDigestLen)
	}
	return nil
}
