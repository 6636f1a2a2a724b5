package main

import (
	"slices"
	"strings"
	"testing"

	"github.com/lasergo/laser/wire"
)

func TestCausalTreeHangsAnAnswerWithoutACauseUnderItsCommand(t *testing.T) {
	rows := []recordRow{
		{Kind: string(wire.KindCommand), Record: "cmd-1", Correlation: "c1"},
		{Kind: string(wire.KindCommand), Record: "cmd-2", Correlation: "c2"},
		{Kind: string(wire.KindResponse), Record: "rep-2", Correlation: "c2"},
		{Kind: string(wire.KindError), Record: "err-1", Correlation: "c1"},
		{Kind: string(wire.KindEvent), Record: "ev", Correlation: "c1"}, // not an answer
	}
	var got []string
	for _, n := range causalTree(rows) {
		got = append(got, strings.Repeat(" ", n.Depth)+n.Row.Record)
	}
	if want := []string{"cmd-1", " err-1", "cmd-2", " rep-2", "ev"}; !slices.Equal(got, want) {
		t.Fatalf("tree %q, want %q", got, want)
	}
}
