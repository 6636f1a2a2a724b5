package main

import (
	"testing"

	"github.com/fxamacker/cbor/v2"

	"github.com/lasergo/laser/wire"
)

// chunkRows are the rows of one channel's chunks with the given bodies, in
// sequence order from 0, each rendered as a page renders it.
func chunkRows(channel string, ct wire.ContentType, bodies ...string) []recordRow {
	rows := make([]recordRow, len(bodies))
	for i, b := range bodies {
		rows[i] = recordRow{Kind: string(wire.KindChunk), Channel: channel, Sequence: uint64(i), Last: i == len(bodies)-1}
		rows[i].Body, rows[i].BodyFormat = showBody([]byte(b), ct)
	}
	return rows
}

func TestAssembleStreamsJoinsTextChunks(t *testing.T) {
	got := assembleStreams(chunkRows("c", wire.ContentRaw, "the total ", "is 12.50 ", "EUR"))
	if len(got) != 1 || got[0].Text != "the total is 12.50 EUR" || got[0].Chunks != 3 || !got[0].Ended {
		t.Fatalf("assembled %+v", got)
	}
}

func TestAssembleStreamsJoinsJSONStringChunksAsText(t *testing.T) {
	got := assembleStreams(chunkRows("c", wire.ContentJSON, `"the total "`, `"is 12.50"`))
	if len(got) != 1 || got[0].Text != "the total is 12.50" {
		t.Fatalf("assembled %+v", got)
	}
}

func TestAssembleStreamsShowsJSONObjectChunksOneALine(t *testing.T) {
	got := assembleStreams(chunkRows("c", wire.ContentJSON, `{"delta": "a"}`, `{"delta":"b", "n": 2}`))
	if len(got) != 1 || got[0].Text != "{\"delta\":\"a\"}\n{\"delta\":\"b\",\"n\":2}" || got[0].Format != "json" {
		t.Fatalf("assembled %q (%+v)", got[0].Text, got)
	}
}

func TestAssembleStreamsShowsCBORChunksAsJSON(t *testing.T) {
	body, err := cbor.Marshal(map[string]int{"step": 1})
	if err != nil {
		t.Fatal(err)
	}
	got := assembleStreams(chunkRows("c", wire.ContentCBOR, string(body)))
	if len(got) != 1 || got[0].Text != `{"step":1}` {
		t.Fatalf("assembled %q", got[0].Text)
	}
}

func TestAssembleStreamsDoesNotDoubleARedeliveredChunk(t *testing.T) {
	rows := chunkRows("c", wire.ContentRaw, "a", "b", "c")
	rows = append(rows, rows[1]) // chunk 1 delivered again
	got := assembleStreams(rows)
	if len(got) != 1 || got[0].Text != "abc" || got[0].Chunks != 3 || got[0].Redelivered != 1 {
		t.Fatalf("assembled %+v", got)
	}
}

func TestAssembleStreamsMarksAMissingChunk(t *testing.T) {
	rows := chunkRows("c", wire.ContentRaw, "a", "b", "c")
	got := assembleStreams([]recordRow{rows[0], rows[2]})
	if len(got) != 1 || got[0].Text != "a…c" || got[0].Missing != 1 {
		t.Fatalf("assembled %+v", got)
	}
}

func TestAssembleStreamsShowsBinaryChunksAsByteCounts(t *testing.T) {
	got := assembleStreams(chunkRows("c", wire.ContentRaw, "\x00\x01\x02"))
	if len(got) != 1 || got[0].Text != "[3 bytes]" {
		t.Fatalf("assembled %q", got[0].Text)
	}
}
