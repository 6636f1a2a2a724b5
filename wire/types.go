package wire

import (
	"encoding/binary"
	"errors"
	"fmt"
	"strconv"
	"unicode/utf8"
)

// Kind is the envelope kind; the set is closed and an unknown kind fails decode.
type Kind string

// Envelope kinds.
const (
	KindCommand  Kind = "command"
	KindResponse Kind = "response"
	KindEvent    Kind = "event"
	KindChunk    Kind = "chunk"
	KindStatus   Kind = "status"
	KindError    Kind = "error"
)

// errUnknownKind reports an envelope kind outside the six defined ones.
var errUnknownKind = errors.New("wire: unknown envelope kind")

// Known reports whether k is one of the six envelope kinds.
func (k Kind) Known() bool {
	switch k {
	case KindCommand, KindResponse, KindEvent, KindChunk, KindStatus, KindError:
		return true
	}
	return false
}

// ParseKind returns the kind named s, without allocating for known names.
func ParseKind(s string) (Kind, error) {
	if k, ok := kindOf([]byte(s)); ok {
		return k, nil
	}
	return "", fmt.Errorf("%w %q", errUnknownKind, s)
}

func kindOf(b []byte) (Kind, bool) {
	switch string(b) {
	case "command":
		return KindCommand, true
	case "response":
		return KindResponse, true
	case "event":
		return KindEvent, true
	case "chunk":
		return KindChunk, true
	case "status":
		return KindStatus, true
	case "error":
		return KindError, true
	}
	return "", false
}

// MaxAgentIDBytes caps an agent id (source, target) on the wire.
const MaxAgentIDBytes = 256

// MaxSDKAgentIDBytes caps an agent id as the reference SDK's AgentId type
// does, one byte under the wire's limit: agents, consumer groups and the
// agent ids of provenance headers keep to it.
const MaxSDKAgentIDBytes = 255

// CheckSDKAgentID reports whether s is a valid agent id under the SDK's
// limit (MaxSDKAgentIDBytes); the runtime checks agent ids and consumer
// group names with it.
func CheckSDKAgentID(s string) error { return checkSDKAgentID(s) }

func checkSDKAgentID(s string) error {
	if len(s) > MaxSDKAgentIDBytes {
		return fmt.Errorf("%w: %d bytes, max %d", errBadAgentID, len(s), MaxSDKAgentIDBytes)
	}
	return checkAgentID(s)
}

// AgentID names an agent (an envelope's source or target): non-empty UTF-8 of
// at most 256 bytes with no Unicode control characters (category Cc).
type AgentID string

// errBadAgentID reports an agent id that breaks the AgentID rules.
var errBadAgentID = errors.New("wire: invalid agent id")

// ParseAgentID validates s as an agent id.
func ParseAgentID(s string) (AgentID, error) {
	if err := checkAgentID(s); err != nil {
		return "", err
	}
	return AgentID(s), nil
}

// Validate reports whether the id obeys the AgentID rules.
func (a AgentID) Validate() error { return checkAgentID(string(a)) }

func checkAgentID(s string) error {
	switch {
	case s == "":
		return fmt.Errorf("%w: empty", errBadAgentID)
	case len(s) > MaxAgentIDBytes:
		return fmt.Errorf("%w: %d bytes, max %d", errBadAgentID, len(s), MaxAgentIDBytes)
	}
	if printableASCII(s) {
		return nil // the common case, without decoding runes
	}
	for i, r := range s {
		if r == utf8.RuneError {
			if _, n := utf8.DecodeRuneInString(s[i:]); n == 1 {
				return fmt.Errorf("%w: not valid UTF-8", errBadAgentID)
			}
		}
		// Unicode Cc is exactly C0, DEL and C1; the reference rejects all three.
		if r < 0x20 || (r >= 0x7f && r <= 0x9f) {
			return fmt.Errorf("%w: control character %U at byte %d", errBadAgentID, r, i)
		}
	}
	return nil
}

// printableASCII reports whether s is all bytes 0x20..0x7e, which pass
// checkAgentID's rune checks.
func printableASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x7f {
			return false
		}
	}
	return true
}

// MaxIdempotencyKeyBytes caps an idempotency key.
const MaxIdempotencyKeyBytes = 64

// IdempotencyKey deduplicates retried effects: 1..64 bytes of UTF-8.
type IdempotencyKey string

// errBadIdempotencyKey reports an empty or over-long idempotency key.
var errBadIdempotencyKey = errors.New("wire: invalid idempotency key")

// ParseIdempotencyKey validates s as an idempotency key.
func ParseIdempotencyKey(s string) (IdempotencyKey, error) {
	if err := checkIdempotencyKey(s); err != nil {
		return "", err
	}
	return IdempotencyKey(s), nil
}

// Validate reports whether the key obeys the IdempotencyKey rules.
func (k IdempotencyKey) Validate() error { return checkIdempotencyKey(string(k)) }

func checkIdempotencyKey(s string) error {
	switch {
	case s == "":
		return fmt.Errorf("%w: empty", errBadIdempotencyKey)
	case len(s) > MaxIdempotencyKeyBytes:
		return fmt.Errorf("%w: %d bytes, max %d", errBadIdempotencyKey, len(s), MaxIdempotencyKeyBytes)
	case !validUTF8String(s):
		return fmt.Errorf("%w: not valid UTF-8", errBadIdempotencyKey)
	}
	return nil
}

// TaskState is the A2A task lifecycle code; unknown codes pass through.
type TaskState uint8

// Task states.
const (
	TaskSubmitted     TaskState = 1
	TaskWorking       TaskState = 2
	TaskInputRequired TaskState = 3
	TaskCompleted     TaskState = 4
	TaskCanceled      TaskState = 5
	TaskFailed        TaskState = 6
	TaskRejected      TaskState = 7
	TaskAuthRequired  TaskState = 8
	TaskUnknown       TaskState = 9
)

var taskStateNames = [...]string{"", "submitted", "working", "input-required", "completed", "canceled", "failed", "rejected", "auth-required", "unknown"}

// String returns the A2A name, or "unrecognized-N" for other codes.
func (s TaskState) String() string {
	if s != 0 && int(s) < len(taskStateNames) {
		return taskStateNames[s]
	}
	return "unrecognized-" + strconv.Itoa(int(s))
}

// Terminal reports whether no further state can follow (completed, canceled,
// failed, rejected); unrecognized codes are never terminal.
func (s TaskState) Terminal() bool {
	switch s {
	case TaskCompleted, TaskCanceled, TaskFailed, TaskRejected:
		return true
	}
	return false
}

// ContentType is the agdx.ct code of a payload or body; unknown codes must be
// carried through, never rejected.
type ContentType uint8

// Content type codes.
const (
	ContentRaw      ContentType = 0
	ContentJSON     ContentType = 1
	ContentMsgpack  ContentType = 2
	ContentCBOR     ContentType = 3
	ContentBSON     ContentType = 4
	ContentAvro     ContentType = 5
	ContentProtobuf ContentType = 6
	ContentArrow    ContentType = 7
	ContentRef      ContentType = 8
	ContentAny      ContentType = 255
)

var contentTypeNames = [...]string{"raw", "json", "msgpack", "cbor", "bson", "avro", "protobuf", "arrow", "ref"}

// errUnknownContentType reports a content-type name outside the defined set.
var errUnknownContentType = errors.New("wire: unknown content type")

// Known reports whether c is a defined code.
func (c ContentType) Known() bool { return int(c) < len(contentTypeNames) || c == ContentAny }

// String returns the snake_case name, or "unknown-N" for undefined codes.
func (c ContentType) String() string {
	switch {
	case int(c) < len(contentTypeNames):
		return contentTypeNames[c]
	case c == ContentAny:
		return "any"
	}
	return "unknown-" + strconv.Itoa(int(c))
}

// ParseContentType returns the code of a content-type name (as agent cards
// carry it).
func ParseContentType(name string) (ContentType, error) {
	for i, n := range contentTypeNames {
		if n == name {
			return ContentType(i), nil
		}
	}
	if name == "any" {
		return ContentAny, nil
	}
	return 0, fmt.Errorf("%w %q", errUnknownContentType, name)
}

// LogPositionLen is the byte length of an encoded LogPosition.
const LogPositionLen = 20

// LogPosition locates one record in Iggy by numeric ids; on the wire it is a
// 20-byte big-endian byte string.
type LogPosition struct {
	StreamID    uint32
	TopicID     uint32
	PartitionID uint32
	Offset      uint64
}

// String renders "stream/topic/partition@offset" for logs.
func (p LogPosition) String() string {
	return fmt.Sprintf("%d/%d/%d@%d", p.StreamID, p.TopicID, p.PartitionID, p.Offset)
}

// Bytes returns the 20-byte wire form.
func (p LogPosition) Bytes() [LogPositionLen]byte {
	var b [LogPositionLen]byte
	binary.BigEndian.PutUint32(b[0:], p.StreamID)
	binary.BigEndian.PutUint32(b[4:], p.TopicID)
	binary.BigEndian.PutUint32(b[8:], p.PartitionID)
	binary.BigEndian.PutUint64(b[12:], p.Offset)
	return b
}

// LogPositionFromBytes parses the 20-byte wire form.
func LogPositionFromBytes(b []byte) (LogPosition, error) {
	if len(b) != LogPositionLen {
		return LogPosition{}, fmt.Errorf("%w: log position is %d bytes, want %d", errMalformed, len(b), LogPositionLen)
	}
	return LogPosition{
		StreamID:    binary.BigEndian.Uint32(b[0:]),
		TopicID:     binary.BigEndian.Uint32(b[4:]),
		PartitionID: binary.BigEndian.Uint32(b[8:]),
		Offset:      binary.BigEndian.Uint64(b[12:]),
	}, nil
}

func appendLogPosition(b []byte, p LogPosition) []byte {
	b = append(b, majorBytes|LogPositionLen)
	b = binary.BigEndian.AppendUint32(b, p.StreamID)
	b = binary.BigEndian.AppendUint32(b, p.TopicID)
	b = binary.BigEndian.AppendUint32(b, p.PartitionID)
	return binary.BigEndian.AppendUint64(b, p.Offset)
}

func (r *reader) logPosition() (LogPosition, error) {
	p, err := r.definite(majorBytes)
	if err != nil {
		return LogPosition{}, err
	}
	return LogPositionFromBytes(p)
}

func appendID(b []byte, id *ID) []byte {
	b = append(b, majorBytes|16)
	return append(b, id[:]...)
}

// TokenUsage is advisory model-usage accounting.
type TokenUsage struct {
	InputTokens              uint64
	OutputTokens             uint64
	ReasoningOutputTokens    *uint64
	CacheReadInputTokens     *uint64
	CacheCreationInputTokens *uint64
}

func (u *TokenUsage) appendCBOR(b []byte) []byte {
	n := uint64(2)
	for _, p := range [...]*uint64{u.ReasoningOutputTokens, u.CacheReadInputTokens, u.CacheCreationInputTokens} {
		if p != nil {
			n++
		}
	}
	b = appendHead(b, majorMap, n)
	b = appendText(b, "input_tokens")
	b = appendHead(b, majorUint, u.InputTokens)
	b = appendText(b, "output_tokens")
	b = appendHead(b, majorUint, u.OutputTokens)
	if u.ReasoningOutputTokens != nil {
		b = appendText(b, "reasoning_output_tokens")
		b = appendHead(b, majorUint, *u.ReasoningOutputTokens)
	}
	if u.CacheReadInputTokens != nil {
		b = appendText(b, "cache_read_input_tokens")
		b = appendHead(b, majorUint, *u.CacheReadInputTokens)
	}
	if u.CacheCreationInputTokens != nil {
		b = appendText(b, "cache_creation_input_tokens")
		b = appendHead(b, majorUint, *u.CacheCreationInputTokens)
	}
	return b
}

// usageFields are TokenUsage's fields in wire order.
var usageFields = recordFields[TokenUsage]{
	{"input_tokens", required, readUsageInputTokens},
	{"output_tokens", required, readUsageOutputTokens},
	{"reasoning_output_tokens", optional, readUsageReasoningOutputTokens},
	{"cache_read_input_tokens", optional, readUsageCacheReadInputTokens},
	{"cache_creation_input_tokens", optional, readUsageCacheCreationInputTokens},
}

func readUsageInputTokens(r *reader, u *TokenUsage) (err error) {
	u.InputTokens, err = r.uint(maxUint64)
	return err
}

func readUsageOutputTokens(r *reader, u *TokenUsage) (err error) {
	u.OutputTokens, err = r.uint(maxUint64)
	return err
}

func readUsageReasoningOutputTokens(r *reader, u *TokenUsage) (err error) {
	u.ReasoningOutputTokens, err = r.uintPtr(maxUint64)
	return err
}

func readUsageCacheReadInputTokens(r *reader, u *TokenUsage) (err error) {
	u.CacheReadInputTokens, err = r.uintPtr(maxUint64)
	return err
}

func readUsageCacheCreationInputTokens(r *reader, u *TokenUsage) (err error) {
	u.CacheCreationInputTokens, err = r.uintPtr(maxUint64)
	return err
}

// uintPtr reads an unsigned integer no larger than max into a variable of
// its own.
func (r *reader) uintPtr(max uint64) (*uint64, error) {
	v, err := r.uint(max)
	if err != nil {
		return nil, err
	}
	return &v, nil
}

const maxUint64 = ^uint64(0)
