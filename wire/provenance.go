package wire

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"unicode/utf8"
	"unsafe"
)

// MessageID is a record's place in one topic: partition and offset. Its text
// form "p:o" is the generic-path agdx.cause header.
type MessageID struct {
	Partition uint32
	Offset    uint64
}

// errBadMessageID reports text that is not a strict "partition:offset".
var errBadMessageID = errors.New("wire: invalid message id")

// String renders "partition:offset".
func (m MessageID) String() string {
	return string(m.AppendText(make([]byte, 0, 24)))
}

// AppendText appends "partition:offset" to b.
func (m MessageID) AppendText(b []byte) []byte {
	b = strconv.AppendUint(b, uint64(m.Partition), 10)
	b = append(b, ':')
	return strconv.AppendUint(b, m.Offset, 10)
}

// ParseMessageID parses "partition:offset": two decimals with no sign, space
// or leading zero (other than "0" itself).
func ParseMessageID(s string) (MessageID, error) {
	for i := 0; i < len(s); i++ {
		if s[i] != ':' {
			continue
		}
		p, perr := strictDecimal(s[:i], math.MaxUint32)
		o, oerr := strictDecimal(s[i+1:], math.MaxUint64)
		if perr != nil || oerr != nil {
			break
		}
		return MessageID{Partition: uint32(p), Offset: o}, nil
	}
	return MessageID{}, fmt.Errorf("%w %q: want partition:offset", errBadMessageID, s)
}

func strictDecimal(s string, max uint64) (uint64, error) {
	if s == "" || (len(s) > 1 && s[0] == '0') {
		return 0, strconv.ErrSyntax
	}
	var v uint64
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < '0' || c > '9' {
			return 0, strconv.ErrSyntax
		}
		d := uint64(c - '0')
		if v > (max-d)/10 {
			return 0, strconv.ErrRange
		}
		v = v*10 + d
	}
	return v, nil
}

// Provenance is the generic (non-enveloped) provenance carried as string
// headers by plain messages and dead-letter capsules. Empty strings and nil
// pointers are absent.
type Provenance struct {
	Conversation       ID
	CausalParent       *MessageID
	ParentConversation *ID
	RootConversation   *ID
	Agent              string
	Target             string
	IdempotencyKey     string
	Correlation        string
	Fence              *uint64
	// Deadline is in epoch microseconds.
	Deadline     *uint64
	InputTokens  *uint64
	OutputTokens *uint64
	Cost         *float64
}

// Provenance header errors.
var (
	// errProvenanceValue reports a header value that breaks the value rules
	// (writing) or cannot be parsed (reading).
	errProvenanceValue = errors.New("wire: invalid provenance header value")
	// errProvenanceTooLarge reports provenance headers over HeaderSoftCap.
	errProvenanceTooLarge = errors.New("wire: provenance headers too large")
	// errMissingConversation reports generic headers without gen_ai.conversation.id.
	errMissingConversation = errors.New("wire: missing gen_ai.conversation.id header")
)

// PartitionKey is the conversation's Crockford text.
func (p *Provenance) PartitionKey() string { return p.Conversation.String() }

// Headers returns the provenance as String headers in bytewise key order.
func (p *Provenance) Headers() (Headers, error) {
	return p.AppendHeaders(make(Headers, 0, 4))
}

// AppendHeaders appends the provenance's String headers (in bytewise key
// order) to h. Every value must be 1..255 bytes of UTF-8 without control
// bytes, and the appended headers must total at most HeaderSoftCap bytes
// (key + value + framing each); headers already in h are not counted, as the
// reference adds its content-type header after this check.
func (p *Provenance) AppendHeaders(h Headers) (Headers, error) {
	start := len(h)
	var num [24]byte
	add := func(key, value string) error {
		if err := checkProvenanceValue(value); err != nil {
			return fmt.Errorf("%w: %s: %w", errProvenanceValue, key, err)
		}
		h = append(h, Header{Key: key, Value: StringValue(value)})
		return nil
	}
	addUint := func(key string, v *uint64) error {
		if v == nil {
			return nil
		}
		return add(key, string(strconv.AppendUint(num[:0], *v, 10)))
	}
	addStr := func(key, v string) error {
		if v == "" {
			return nil
		}
		return add(key, v)
	}
	addID := func(key string, id *ID) error {
		if id == nil {
			return nil
		}
		return add(key, id.String())
	}
	var cost string
	if p.Cost != nil {
		if math.IsInf(*p.Cost, 0) || math.IsNaN(*p.Cost) {
			return h[:start], fmt.Errorf("%w: %s: cost must be finite", errProvenanceValue, HeaderCost)
		}
		cost = strconv.FormatFloat(*p.Cost, 'f', -1, 64)
	}
	for _, a := range [...]struct{ key, id string }{{HeaderAgentID, p.Agent}, {HeaderTarget, p.Target}} {
		if a.id == "" {
			continue
		}
		if err := checkSDKAgentID(a.id); err != nil {
			return h[:start], fmt.Errorf("%w: %s: %w", errProvenanceValue, a.key, err)
		}
	}
	var cause string
	if p.CausalParent != nil {
		cause = p.CausalParent.String()
	}
	for _, err := range [...]func() error{
		func() error { return addStr(HeaderCausalParent, cause) },
		func() error { return addStr(HeaderCorrelationID, p.Correlation) },
		func() error { return addStr(HeaderCost, cost) },
		func() error { return addUint(HeaderDeadline, p.Deadline) },
		func() error { return addUint(HeaderFence, p.Fence) },
		func() error { return addStr(HeaderIdempotencyKey, p.IdempotencyKey) },
		func() error { return addID(HeaderParentConversation, p.ParentConversation) },
		func() error { return addID(HeaderRootConversation, p.RootConversation) },
		func() error { return addStr(HeaderTarget, p.Target) },
		func() error { return addStr(HeaderAgentID, p.Agent) },
		func() error { return addID(HeaderConversationID, &p.Conversation) },
		func() error { return addUint(HeaderUsageInputTokens, p.InputTokens) },
		func() error { return addUint(HeaderUsageOutputTokens, p.OutputTokens) },
	} {
		if e := err(); e != nil {
			return h[:start], e
		}
	}
	if size := h[start:].Size(); size > HeaderSoftCap {
		return h[:start], fmt.Errorf("%w: %d bytes, cap %d", errProvenanceTooLarge, size, HeaderSoftCap)
	}
	return h, nil
}

func checkProvenanceValue(v string) error {
	switch {
	case v == "":
		return errors.New("empty")
	case len(v) > HeaderValueMax:
		return fmt.Errorf("%d bytes, max %d", len(v), HeaderValueMax)
	case !utf8.ValidString(v):
		return errors.New("not valid UTF-8")
	}
	for i := 0; i < len(v); i++ {
		if c := v[i]; c < 0x20 || c == 0x7f {
			return fmt.Errorf("control byte 0x%02x at %d", c, i)
		}
	}
	return nil
}

// DecodeProvenance reads the generic provenance headers, failing closed: a
// known key with a non-String value, an unparsable id or number, or a
// missing conversation id is an error, and so is a known key that appears
// twice. Unknown keys and typed headers under
// other names (agdx.ct, agdx.av) are ignored.
func DecodeProvenance(h EncodedHeaders) (Provenance, error) {
	var p Provenance
	if err := DecodeProvenanceInto(&p, h, nil); err != nil {
		return Provenance{}, err
	}
	return p, nil
}

// DecodeProvenanceInto is DecodeProvenance into *p, copying the values kept
// as text (agent, target, idempotency key, correlation) into room while
// they fit and into one allocation of their own beyond it: a caller that
// decodes many records gives each its own room (the runtime keeps it in the
// message) and allocates nothing more. The strings view room, which must
// not be written afterwards. On error *p is unspecified.
func DecodeProvenanceInto(p *Provenance, h EncodedHeaders, room []byte) error {
	if *p != (Provenance{}) {
		*p = Provenance{}
	}
	var haveConv bool
	// Values parsed into ids and numbers are read in place, never copied.
	text := room[:0:len(room)]
	// entry is the encoded entry being read and what follows it.
	var entry []byte
	keep := func(data []byte) string {
		if len(data) == 0 {
			return ""
		}
		if len(text)+len(data) > cap(text) {
			// Room for this value and every one after it (the bytes left
			// bound them), so the strings already made keep their bytes.
			text = make([]byte, 0, len(entry))
		}
		start := len(text)
		text = append(text, data...)
		return unsafe.String(&text[start], len(data))
	}
	var seen uint16
	for b := h.b; len(b) > 0; {
		entry = b
		keyBytes, value, rest := nextEntry(b)
		b = rest
		bit := provenanceKeyBit(unsafe.String(unsafe.SliceData(keyBytes), len(keyBytes)))
		if bit == 0 {
			continue
		}
		if seen&bit != 0 {
			// Which copy would the reference (a map) keep? Refuse rather than guess.
			return fmt.Errorf("%w: %s appears more than once", errProvenanceValue, provenanceKeyName(bit))
		}
		seen |= bit
		if err := value.want(HeaderKindString); err != nil {
			return fmt.Errorf("wire: provenance header %s: %w", provenanceKeyName(bit), err)
		}
		data := value.Data
		bad := func(err error) error {
			return fmt.Errorf("%w: %s=%q: %w", errProvenanceValue, provenanceKeyName(bit), data, err)
		}
		if bit&textKeys == 0 {
			// Parsed in place: the parsers accept ASCII only, so these need
			// no UTF-8 check.
			var err error
			switch bit {
			case bitConversation:
				p.Conversation, err = parseID(data)
				haveConv = true
			case bitCausalParent:
				// Parsed from the kept copy: the parser's error quotes its
				// input, which must not alias the caller's bytes.
				var m MessageID
				if m, err = ParseMessageID(keep(data)); err == nil {
					p.CausalParent = &m
				}
			case bitParentConversation, bitRootConversation:
				var id ID
				if id, err = parseID(data); err == nil {
					if bit == bitParentConversation {
						p.ParentConversation = &id
					} else {
						p.RootConversation = &id
					}
				}
			case bitCost:
				var f float64
				if f, err = parseCost(keep(data)); err == nil {
					p.Cost = &f
				}
			default: // fence, deadline, usage
				var v uint64
				if v, err = parseDecimal(string(data)); err == nil {
					switch bit {
					case bitFence:
						p.Fence = &v
					case bitDeadline:
						p.Deadline = &v
					case bitInputTokens:
						p.InputTokens = &v
					default:
						p.OutputTokens = &v
					}
				}
			}
			if err != nil {
				return bad(err)
			}
			continue
		}
		v := keep(data)
		if !validUTF8String(v) {
			return fmt.Errorf("%w: %s: not valid UTF-8", errProvenanceValue, provenanceKeyName(bit))
		}
		switch bit {
		case bitAgent, bitTarget:
			// An agent id follows the SDK's rules, as the reference's decoder
			// does: a record naming an impossible agent is undecodable.
			if err := checkSDKAgentID(v); err != nil {
				return bad(err)
			}
			if bit == bitAgent {
				p.Agent = v
			} else {
				p.Target = v
			}
		case bitIdempotencyKey:
			p.IdempotencyKey = v
		case bitCorrelation:
			p.Correlation = v
		}
	}
	if !haveConv {
		return errMissingConversation
	}
	return nil
}

// The bits provenanceKeyBit gives each provenance header key.
const (
	bitConversation uint16 = 1 << iota
	bitCausalParent
	bitParentConversation
	bitRootConversation
	bitAgent
	bitTarget
	bitIdempotencyKey
	bitCorrelation
	bitFence
	bitDeadline
	bitInputTokens
	bitOutputTokens
	bitCost

	// textKeys are the keys whose values are kept as text.
	textKeys = bitAgent | bitTarget | bitIdempotencyKey | bitCorrelation
)

// provenanceKeyBit returns a distinct bit for each provenance header key,
// and 0 for any other key.
// provenanceKeyName is the header name of a provenance key bit, so an
// error names the key without keeping the record's bytes alive.
func provenanceKeyName(bit uint16) string {
	for _, k := range provenanceKeys {
		if provenanceKeyBit(k) == bit {
			return k
		}
	}
	return ""
}

var provenanceKeys = [...]string{HeaderConversationID, HeaderCausalParent, HeaderParentConversation, HeaderRootConversation, HeaderAgentID, HeaderTarget, HeaderIdempotencyKey, HeaderCorrelationID, HeaderFence, HeaderDeadline, HeaderUsageInputTokens, HeaderUsageOutputTokens, HeaderCost}

func provenanceKeyBit(k string) uint16 {
	switch k {
	case HeaderConversationID:
		return bitConversation
	case HeaderCausalParent:
		return bitCausalParent
	case HeaderParentConversation:
		return bitParentConversation
	case HeaderRootConversation:
		return bitRootConversation
	case HeaderAgentID:
		return bitAgent
	case HeaderTarget:
		return bitTarget
	case HeaderIdempotencyKey:
		return bitIdempotencyKey
	case HeaderCorrelationID:
		return bitCorrelation
	case HeaderFence:
		return bitFence
	case HeaderDeadline:
		return bitDeadline
	case HeaderUsageInputTokens:
		return bitInputTokens
	case HeaderUsageOutputTokens:
		return bitOutputTokens
	case HeaderCost:
		return bitCost
	}
	return 0
}

// parseDecimal reads a u64 the way the reference's integer parser does: an
// optional '+' and at least one digit, leading zeros allowed.
func parseDecimal(s string) (uint64, error) {
	if len(s) > 1 && s[0] == '+' {
		s = s[1:]
	}
	if s == "" {
		return 0, strconv.ErrSyntax
	}
	var v uint64
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < '0' || c > '9' {
			return 0, strconv.ErrSyntax
		}
		d := uint64(c - '0')
		if v > (math.MaxUint64-d)/10 {
			return 0, strconv.ErrRange
		}
		v = v*10 + d
	}
	return v, nil
}

// parseCost reads a finite decimal float (no hex, no underscores, no
// infinities or NaN).
func parseCost(s string) (float64, error) {
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c >= '0' && c <= '9', c == '.', c == 'e', c == 'E', c == '+', c == '-':
		default:
			return 0, strconv.ErrSyntax
		}
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return 0, err
	}
	if math.IsInf(f, 0) || math.IsNaN(f) {
		return 0, errors.New("not finite")
	}
	return f, nil
}
