package wire

import (
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"
)

// Header names of the AGDX Iggy binding.
const (
	HeaderAgentVersion       = "agdx.av"
	HeaderContentType        = "agdx.ct"
	HeaderConversationID     = "gen_ai.conversation.id"
	HeaderTarget             = "agdx.to"
	HeaderAgentID            = "gen_ai.agent.id"
	HeaderCorrelationID      = "agdx.corr"
	HeaderIdempotencyKey     = "agdx.idem"
	HeaderDeadline           = "agdx.deadline"
	HeaderCausalParent       = "agdx.cause"
	HeaderParentConversation = "agdx.parent_conv"
	HeaderRootConversation   = "agdx.root_conv"
	HeaderFence              = "agdx.fence"
	HeaderUsageInputTokens   = "gen_ai.usage.input_tokens"
	HeaderUsageOutputTokens  = "gen_ai.usage.output_tokens"
	HeaderCost               = "agdx.cost"
	HeaderDelegatedBy        = "agdx.on_behalf_of"
)

// AgentOpVersion is the only envelope version, carried in the agdx.av header.
const AgentOpVersion uint32 = 1

// HeaderKind is the Iggy user-header value kind; the codes are Iggy's.
type HeaderKind uint8

// Iggy header kinds.
const (
	HeaderKindRaw     HeaderKind = 1
	HeaderKindString  HeaderKind = 2
	HeaderKindBool    HeaderKind = 3
	HeaderKindInt8    HeaderKind = 4
	HeaderKindInt16   HeaderKind = 5
	HeaderKindInt32   HeaderKind = 6
	HeaderKindInt64   HeaderKind = 7
	HeaderKindInt128  HeaderKind = 8
	HeaderKindUint8   HeaderKind = 9
	HeaderKindUint16  HeaderKind = 10
	HeaderKindUint32  HeaderKind = 11
	HeaderKindUint64  HeaderKind = 12
	HeaderKindUint128 HeaderKind = 13
	HeaderKindFloat   HeaderKind = 14
	HeaderKindDouble  HeaderKind = 15
)

var headerKindNames = [...]string{"", "raw", "string", "bool", "int8", "int16", "int32", "int64", "int128", "uint8", "uint16", "uint32", "uint64", "uint128", "float", "double"}

// String returns the lower-case kind name.
func (k HeaderKind) String() string {
	if int(k) < len(headerKindNames) && k != 0 {
		return headerKindNames[k]
	}
	return fmt.Sprintf("kind(%d)", uint8(k))
}

// FixedSize returns the value size a fixed-width kind requires, or 0 for raw
// and string values (1..255 bytes).
func (k HeaderKind) FixedSize() int {
	switch k {
	case HeaderKindBool, HeaderKindInt8, HeaderKindUint8:
		return 1
	case HeaderKindInt16, HeaderKindUint16:
		return 2
	case HeaderKindInt32, HeaderKindUint32, HeaderKindFloat:
		return 4
	case HeaderKindInt64, HeaderKindUint64, HeaderKindDouble:
		return 8
	case HeaderKindInt128, HeaderKindUint128:
		return 16
	}
	return 0
}

// ErrHeaderType reports a header whose value kind or size is not what its
// name requires.
var ErrHeaderType = errors.New("wire: header has the wrong type")

// HeaderValue is one typed user-header value; Data holds its little-endian
// bytes exactly as they travel.
type HeaderValue struct {
	Kind HeaderKind
	Data []byte
}

// Header is one user header: a string key and a typed value.
type Header struct {
	Key   string
	Value HeaderValue
}

// StringValue is a String-kind header value.
func StringValue(s string) HeaderValue { return HeaderValue{Kind: HeaderKindString, Data: []byte(s)} }

// Uint8Value is a Uint8-kind header value.
func Uint8Value(v uint8) HeaderValue { return HeaderValue{Kind: HeaderKindUint8, Data: []byte{v}} }

// Uint32Value is a little-endian Uint32-kind header value.
func Uint32Value(v uint32) HeaderValue {
	return HeaderValue{Kind: HeaderKindUint32, Data: binary.LittleEndian.AppendUint32(nil, v)}
}

// Uint128Value is a Uint128-kind header value: the id's bytes reversed into
// little-endian, as the conversation header travels.
func Uint128Value(id ID) HeaderValue {
	data := make([]byte, 16)
	for i := range id {
		data[15-i] = id[i]
	}
	return HeaderValue{Kind: HeaderKindUint128, Data: data}
}

func (v HeaderValue) want(kind HeaderKind) error {
	if v.Kind != kind {
		return fmt.Errorf("%w: %s, want %s", ErrHeaderType, v.Kind, kind)
	}
	if n := kind.FixedSize(); n != 0 && len(v.Data) != n {
		return fmt.Errorf("%w: %s value of %d bytes, want %d", ErrHeaderType, kind, len(v.Data), n)
	}
	return nil
}

// AsString returns a String-kind value's text.
func (v HeaderValue) AsString() (string, error) {
	if err := v.want(HeaderKindString); err != nil {
		return "", err
	}
	return string(v.Data), nil
}

// AsUint8 returns a Uint8-kind value.
func (v HeaderValue) AsUint8() (uint8, error) {
	if err := v.want(HeaderKindUint8); err != nil {
		return 0, err
	}
	return v.Data[0], nil
}

// AsUint32 returns a Uint32-kind value.
func (v HeaderValue) AsUint32() (uint32, error) {
	if err := v.want(HeaderKindUint32); err != nil {
		return 0, err
	}
	return binary.LittleEndian.Uint32(v.Data), nil
}

// AsUint128 returns a Uint128-kind value as an id (reversing the
// little-endian header bytes into the id's big-endian form).
func (v HeaderValue) AsUint128() (ID, error) {
	if err := v.want(HeaderKindUint128); err != nil {
		return ID{}, err
	}
	var id ID
	for i := range id {
		id[i] = v.Data[15-i]
	}
	return id, nil
}

// Headers is an ordered list of user headers.
type Headers []Header

// Get returns the value of the first header named key.
func (h Headers) Get(key string) (HeaderValue, bool) {
	for i := range h {
		if h[i].Key == key {
			return h[i].Value, true
		}
	}
	return HeaderValue{}, false
}

// Set replaces the value of the header named key, or appends it.
func (h *Headers) Set(key string, v HeaderValue) {
	for i := range *h {
		if (*h)[i].Key == key {
			(*h)[i].Value = v
			return
		}
	}
	*h = append(*h, Header{Key: key, Value: v})
}

// Del removes every header named key.
func (h *Headers) Del(key string) {
	out := (*h)[:0]
	for _, e := range *h {
		if e.Key != key {
			out = append(out, e)
		}
	}
	*h = out
}

// Clone returns a deep copy, so a republished record never aliases the original.
func (h Headers) Clone() Headers {
	if h == nil {
		return nil
	}
	out := make(Headers, len(h))
	for i, e := range h {
		out[i] = Header{Key: e.Key, Value: HeaderValue{Kind: e.Value.Kind, Data: append([]byte(nil), e.Value.Data...)}}
	}
	return out
}

// Size is the byte count the header caps measure: key, value and the Iggy
// framing of each entry.
func (h Headers) Size() int {
	n := 0
	for _, e := range h {
		n += len(e.Key) + len(e.Value.Data) + HeaderFramingBytes
	}
	return n
}

// Header caps of the AGDX binding.
const (
	HeaderSoftCap      = 1024
	HeaderFramingBytes = 9
	HeaderValueMax     = 255
)

// String renders the value for logs and tools: text quoted, unsigned
// integers of up to 64 bits in decimal, anything else as kind:hex.
func (v HeaderValue) String() string {
	if v.want(v.Kind) == nil {
		switch v.Kind {
		case HeaderKindString:
			return strconv.Quote(string(v.Data))
		case HeaderKindUint8:
			return strconv.FormatUint(uint64(v.Data[0]), 10)
		case HeaderKindUint16:
			return strconv.FormatUint(uint64(binary.LittleEndian.Uint16(v.Data)), 10)
		case HeaderKindUint32:
			return strconv.FormatUint(uint64(binary.LittleEndian.Uint32(v.Data)), 10)
		case HeaderKindUint64:
			return strconv.FormatUint(binary.LittleEndian.Uint64(v.Data), 10)
		}
	}
	return v.Kind.String() + ":" + hex.EncodeToString(v.Data)
}
