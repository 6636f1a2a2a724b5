package main

import (
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/lasergo/laser/wire"
)

// streamView is one chunk channel assembled in sequence order.
type streamView struct {
	Channel string
	// Text is the chunks joined: text and JSON strings as they are, other
	// JSON one value a line, binary as a byte count; a missing chunk as …
	Text string
	// Format is text, json, or mixed when the chunks differ.
	Format string
	// Chunks counts the distinct sequences read.
	Chunks int
	// Redelivered counts chunks read again under a sequence already
	// shown (a redelivery), left out of Text.
	Redelivered int
	// Missing counts the sequences before the last one read that never
	// came.
	Missing int
	Ended   bool
}

// assembleStreams joins each channel's chunks in sequence order, each
// sequence once: a chunk delivered twice is not shown twice.
func assembleStreams(rows []recordRow) []streamView {
	byChannel := map[string][]recordRow{}
	var order []string
	for _, r := range rows {
		if r.Channel == "" {
			continue
		}
		if _, ok := byChannel[r.Channel]; !ok {
			order = append(order, r.Channel)
		}
		byChannel[r.Channel] = append(byChannel[r.Channel], r)
	}
	out := make([]streamView, 0, len(order))
	for _, ch := range order {
		out = append(out, assembleChannel(ch, byChannel[ch]))
	}
	return out
}

// assembleChannel joins one channel's chunks.
func assembleChannel(channel string, chunks []recordRow) streamView {
	slices.SortStableFunc(chunks, func(a, b recordRow) int { return cmp.Compare(a.Sequence, b.Sequence) })
	v := streamView{Channel: channel}
	var text strings.Builder
	formats := map[string]bool{}
	for i, c := range chunks {
		v.Ended = v.Ended || c.Last || c.Kind == string(wire.KindError)
		if i > 0 && c.Sequence == chunks[i-1].Sequence {
			v.Redelivered++
			continue
		}
		if gap := c.Sequence - firstSeq(chunks, i); i > 0 && gap > 1 {
			v.Missing += int(gap - 1)
			text.WriteString("…")
		}
		v.Chunks++
		piece, format, line := chunkText(c)
		formats[format] = true
		if line && text.Len() > 0 && !strings.HasSuffix(text.String(), "\n") {
			text.WriteByte('\n')
		}
		text.WriteString(piece)
	}
	v.Text = text.String()
	switch len(formats) {
	case 0:
	case 1:
		for f := range formats {
			v.Format = f
		}
	default:
		v.Format = "mixed"
	}
	return v
}

// firstSeq is the sequence of the chunk before chunks[i], or chunks[i]'s
// own at the start.
func firstSeq(chunks []recordRow, i int) uint64 {
	if i == 0 {
		return chunks[0].Sequence
	}
	return chunks[i-1].Sequence
}

// chunkText is one chunk's part of its stream, its format, and whether it
// stands on a line of its own (a JSON value that is not a string).
func chunkText(c recordRow) (string, string, bool) {
	switch c.BodyFormat {
	case "json", "cbor as json":
		var s string
		if json.Unmarshal([]byte(c.Body), &s) == nil {
			return s, "json", false
		}
		var compact bytes.Buffer
		if json.Compact(&compact, []byte(c.Body)) == nil {
			return compact.String(), "json", true
		}
		return c.Body, "json", true
	case "hex":
		return fmt.Sprintf("[%d bytes]", len(c.Body)/2), "binary", false
	case "error":
		return "error: " + c.Body, "text", true
	default:
		return c.Body, "text", false
	}
}
