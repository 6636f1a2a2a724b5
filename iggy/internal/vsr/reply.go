package vsr

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// ErrMalformed reports a reply that breaks the protocol: a wrong frame
// kind, a size out of range or not matching, a reply to another request or
// operation, a truncated section. The connection is out of step after it.
var ErrMalformed = errors.New("vsr: malformed reply")

// ErrFrameTooLarge reports a frame header stating more than MaxFrameSize
// bytes; it comes wrapped with ErrMalformed, and CheckHeader then returns
// the stated body length, so a caller may read past the body to stay in
// step.
var ErrFrameTooLarge = errors.New("vsr: frame over the maximum size")

// Refused is a request the server refused with one of Iggy's error codes
// (the 0.8 protocol's code space).
type Refused struct{ Code uint32 }

func (e *Refused) Error() string { return fmt.Sprintf("vsr: refused with error code %d", e.Code) }

// EvictionReason says why the server evicted a client.
type EvictionReason uint8

// The eviction reasons the server sends.
const (
	EvictNoSession            EvictionReason = 1
	EvictReleaseTooLow        EvictionReason = 2
	EvictReleaseTooHigh       EvictionReason = 3
	EvictInvalidOperation     EvictionReason = 4
	EvictInvalidBody          EvictionReason = 5
	EvictInvalidBodySize      EvictionReason = 6
	EvictSessionTooLow        EvictionReason = 7
	EvictSessionMismatch      EvictionReason = 8
	EvictInvalidCredentials   EvictionReason = 9
	EvictInvalidToken         EvictionReason = 10
	EvictUserInactive         EvictionReason = 11
	EvictSessionError         EvictionReason = 12
	EvictStaleClient          EvictionReason = 13
	EvictIncompatibleProtocol EvictionReason = 14
	EvictMalformedLogin       EvictionReason = 15
)

var evictionText = map[EvictionReason]string{
	EvictNoSession:            "no session (log in first)",
	EvictReleaseTooLow:        "client release too low",
	EvictReleaseTooHigh:       "client release too high",
	EvictInvalidOperation:     "invalid request operation",
	EvictInvalidBody:          "invalid request body",
	EvictInvalidBodySize:      "invalid request body size",
	EvictSessionTooLow:        "session too low",
	EvictSessionMismatch:      "session and release do not match",
	EvictInvalidCredentials:   "invalid credentials",
	EvictInvalidToken:         "invalid personal access token",
	EvictUserInactive:         "user inactive",
	EvictSessionError:         "session error",
	EvictStaleClient:          "stale client",
	EvictIncompatibleProtocol: "incompatible protocol version",
	EvictMalformedLogin:       "malformed login",
}

// Evicted is an eviction frame: the server ended the session and closes
// the connection.
type Evicted struct {
	Reason EvictionReason
	// VersionMin and Version are the protocol versions the server speaks,
	// packed as major<<20 | minor<<10 | patch.
	VersionMin, Version uint32
}

func (e *Evicted) Error() string {
	what, ok := evictionText[e.Reason]
	if !ok {
		what = fmt.Sprintf("unknown reason %d", e.Reason)
	}
	if e.Reason == EvictIncompatibleProtocol {
		return fmt.Sprintf("vsr: evicted: %s (client speaks %s, server %s..%s)", what,
			VersionString(ProtocolVersion), VersionString(e.VersionMin), VersionString(e.Version))
	}
	return "vsr: evicted: " + what
}

// VersionString renders a packed protocol version.
func VersionString(v uint32) string {
	return fmt.Sprintf("%d.%d.%d", v>>20, v>>10&0x3ff, v&0x3ff)
}

// CheckHeader checks a frame header just read, before its body is: it must
// be a reply or an eviction, and state a size between HeaderSize and
// MaxFrameSize. It returns the body's length, also with ErrFrameTooLarge.
func CheckHeader(h *[HeaderSize]byte) (int, error) {
	switch c := Command(h[offCommand]); c {
	case CommandReply, CommandEviction:
	default:
		return 0, fmt.Errorf("%w: frame kind %d, want a reply (%d) or an eviction (%d)", ErrMalformed, c, CommandReply, CommandEviction)
	}
	size := FrameSize(h)
	if size > MaxFrameSize {
		return int(size) - HeaderSize, fmt.Errorf("%w: %w: a frame of %d bytes, want %d..%d", ErrMalformed, ErrFrameTooLarge, size, HeaderSize, MaxFrameSize)
	}
	if size < HeaderSize {
		return 0, fmt.Errorf("%w: a frame of %d bytes, want %d..%d", ErrMalformed, size, HeaderSize, MaxFrameSize)
	}
	return int(size) - HeaderSize, nil
}

// DecodeReply checks a whole frame (h and its body, as CheckHeader sized
// it) against the request it answers (request id and operation) and
// returns the reply's payload: the body without its result section. An
// eviction is *Evicted; a refusal, by status or by result, is *Refused;
// anything else wrong wraps ErrMalformed. The payload aliases body.
func DecodeReply(h *[HeaderSize]byte, body []byte, client ClientID, request uint64, op Operation) ([]byte, error) {
	n, err := CheckHeader(h)
	if err != nil {
		return nil, err
	}
	if n != len(body) {
		return nil, fmt.Errorf("%w: the header states a %d-byte body, %d came", ErrMalformed, n, len(body))
	}
	if err := CheckReplyTo(h, client, request, op); err != nil {
		return nil, err
	}
	if op == OpSendMessages && len(body) == 0 {
		// A committed send always confirms; an empty answer is what a
		// session the server no longer knows gets.
		return nil, fmt.Errorf("%w: a send answered without its confirmation (session lost?)", ErrMalformed)
	}
	if !resultFramed(op) && !(op == OpRegister && len(body) > 0) {
		return body, nil
	}
	return splitResult(body)
}

// CheckReplyTo checks a frame header CheckHeader passed against the
// request it should answer, before or without reading its body: an
// eviction is *Evicted, a status is *Refused, a reply to another client,
// request or operation wraps ErrMalformed.
func CheckReplyTo(h *[HeaderSize]byte, client ClientID, request uint64, op Operation) error {
	// A frame for another client is one this connection must not act on,
	// an eviction least of all. The Iggy server (0.9) names its own
	// routing id, not the client's, in the reply to a partition operation,
	// which the request id and operation then identify alone.
	evicted := Command(h[offCommand]) == CommandEviction
	if evicted || !op.Partition() {
		at := offReplyClient
		if evicted {
			at = offClient
		}
		if got := (ClientID{Lo: binary.LittleEndian.Uint64(h[at:]), Hi: binary.LittleEndian.Uint64(h[at+8:])}); got != client {
			return fmt.Errorf("%w: it is for client %s, want %s", ErrMalformed, got, client)
		}
	}
	if evicted {
		return &Evicted{
			Reason:     EvictionReason(h[offEvictReason]),
			Version:    binary.LittleEndian.Uint32(h[offEvictVersion:]),
			VersionMin: binary.LittleEndian.Uint32(h[offEvictVersionMin:]),
		}
	}
	if got := binary.LittleEndian.Uint64(h[offReplyRequest:]); got != request {
		return fmt.Errorf("%w: it answers request %d, want %d", ErrMalformed, got, request)
	}
	if got := Operation(h[offReplyOperation]); !answers(got, op) {
		return fmt.Errorf("%w: it answers operation %d, want %d", ErrMalformed, got, op)
	}
	if status := binary.LittleEndian.Uint32(h[offReplyStatus:]); status != 0 {
		return &Refused{Code: status}
	}
	return nil
}

// answers reports whether a reply of operation got answers a request of
// op: the same operation, or for a metadata change one of the internal
// operations (64..127) the server may commit it as (a topic is created as
// CreateTopicWithAssignments, 64).
func answers(got, op Operation) bool {
	return got == op || got >= opInternalFirst && got < OpCreateStream && op >= OpCreateStream && op < OpSendMessages
}

// splitResult strips the result section (u32 count, then per entry u32
// index and u32 result code) from a committed reply, failing with the
// first entry's code when it is not 0.
func splitResult(body []byte) ([]byte, error) {
	if len(body) < 4 {
		return nil, fmt.Errorf("%w: a result section of %d bytes", ErrMalformed, len(body))
	}
	count := uint64(binary.LittleEndian.Uint32(body))
	end := 4 + 8*count
	if end > uint64(len(body)) {
		return nil, fmt.Errorf("%w: %d results in %d bytes", ErrMalformed, count, len(body))
	}
	if count > 0 {
		if code := binary.LittleEndian.Uint32(body[8:]); code != 0 {
			return nil, &Refused{Code: code}
		}
	}
	return body[end:], nil
}
