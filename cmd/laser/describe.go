package main

import (
	"encoding/hex"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"

	"github.com/lasergo/laser/runtime"
	"github.com/lasergo/laser/wire"
)

// recordView is a record decoded for people (and for --json).
type recordView struct {
	Position     string            `json:"position"`
	Timestamp    uint64            `json:"timestamp_micros"`
	Shape        string            `json:"shape"` // "agdx", "plain" or "undecodable"
	Error        string            `json:"error,omitempty"`
	Kind         string            `json:"kind,omitempty"`
	Operation    string            `json:"operation,omitempty"`
	Conversation string            `json:"conversation,omitempty"`
	From         string            `json:"from,omitempty"`
	To           string            `json:"to,omitempty"`
	Correlation  string            `json:"correlation,omitempty"`
	Idempotency  string            `json:"idempotency_key,omitempty"`
	TaskState    string            `json:"task_state,omitempty"`
	ContentType  string            `json:"content_type,omitempty"`
	Headers      map[string]string `json:"headers,omitempty"`
	Body         string            `json:"body"`
	BodyEncoding string            `json:"body_encoding"` // "text", "hex", or "error" for a decoded AGDX error body
}

// describe decodes a record the way the consumer would, without failing.
func describe(topic string, rec *runtime.Incoming) recordView {
	v := recordView{Position: rec.Position.String(), Timestamp: rec.Timestamp, Headers: map[string]string{}}
	for key, value := range rec.Headers.All() {
		v.Headers[strings.Clone(key)] = headerText(value)
	}
	m, err := runtime.DecodeRecord(topic, rec, ^uint64(0))
	if err != nil {
		v.Shape, v.Error = "undecodable", err.Error()
		v.Body, v.BodyEncoding = bodyText(rec.Payload)
		return v
	}
	v.Shape = "plain"
	if m.Envelope != nil {
		v.Shape = "agdx"
		v.Kind = string(m.Envelope.Kind)
		v.Operation = m.Operation()
		if ts := m.Envelope.TaskState; ts != nil {
			v.TaskState = ts.String()
		}
	}
	p := m.Provenance
	v.Conversation, v.From, v.To, v.Correlation, v.Idempotency = p.Conversation.String(), p.Agent, p.Target, p.Correlation, p.IdempotencyKey
	if m.HasContentType {
		v.ContentType = m.ContentType.String()
	}
	v.Body, v.BodyEncoding = bodyText(m.Body())
	if m.Envelope != nil && m.Envelope.Kind == wire.KindError {
		if text, ok := errorText(m.Body()); ok {
			v.Body, v.BodyEncoding = text, "error"
		}
	}
	return v
}

// errorText renders an AGDX error body as its code, message and whether
// the sender may retry, or reports that b is not one.
func errorText(b []byte) (string, bool) {
	eb, err := wire.DecodeErrorBody(b)
	if err != nil {
		return "", false
	}
	text := eb.Code.String()
	if eb.Message != nil {
		text += ": " + *eb.Message
	}
	if eb.Retryable {
		text += " (retryable)"
	}
	return text, true
}

// headerText renders a typed header value.
func headerText(v wire.HeaderValue) string {
	switch v.Kind {
	case wire.HeaderKindString:
		return string(v.Data)
	case wire.HeaderKindUint8:
		if n, err := v.AsUint8(); err == nil {
			return fmt.Sprint(n)
		}
	case wire.HeaderKindUint32:
		if n, err := v.AsUint32(); err == nil {
			return fmt.Sprint(n)
		}
	case wire.HeaderKindUint128:
		if id, err := v.AsUint128(); err == nil {
			return id.String()
		}
	}
	return v.Kind.String() + ":" + hex.EncodeToString(v.Data)
}

// bodyText returns printable UTF-8 as text and anything else as hex.
func bodyText(b []byte) (string, string) {
	if utf8.Valid(b) && !strings.ContainsFunc(string(b), func(r rune) bool { return r < 0x20 && r != '\n' && r != '\t' }) {
		return string(b), "text"
	}
	return hex.EncodeToString(b), "hex"
}

// printRecord writes one record as a line (or a few) for people.
func printRecord(w io.Writer, topic string, v recordView) {
	switch v.Shape {
	case "undecodable":
		fmt.Fprintf(w, "%s %s  UNDECODABLE: %s\n", topic, v.Position, shown(v.Error))
	case "agdx":
		what := v.Kind
		if v.Operation != "" {
			what += " " + v.Operation
		}
		if v.TaskState != "" {
			what += " (" + v.TaskState + ")"
		}
		fmt.Fprintf(w, "%s %s  %s  %s -> %s  conv %s", topic, v.Position, shown(what), shown(v.From), shown(orAny(v.To)), v.Conversation)
		printTail(w, v)
	default:
		fmt.Fprintf(w, "%s %s  plain  %s -> %s  conv %s", topic, v.Position, shown(orAny(v.From)), shown(orAny(v.To)), shown(v.Conversation))
		printTail(w, v)
	}
	fmt.Fprintf(w, "    %s: %s\n", v.BodyEncoding, shown(truncate(v.Body, 200)))
}

func printTail(w io.Writer, v recordView) {
	if v.Correlation != "" {
		fmt.Fprintf(w, "  corr %s", shown(v.Correlation))
	}
	if v.Idempotency != "" {
		fmt.Fprintf(w, "  idem %s", shown(v.Idempotency))
	}
	if v.ContentType != "" {
		fmt.Fprintf(w, "  ct %s", shown(v.ContentType))
	}
	fmt.Fprintln(w)
}

func orAny(s string) string {
	if s == "" {
		return "*"
	}
	return s
}

// truncate cuts s to at most n bytes, at a rune boundary.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}
