package figures_test

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/lasergo/laser/internal/figures"
)

func TestRowsRoundTripThroughTheReportFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "report.jsonl")
	rows := []figures.Row{
		{Section: "crash", Case: "devserver/serial", Values: []figures.Value{figures.V("published", 300), figures.V("lost", 0)}},
		{Section: "memory", Case: "dedup window", Values: []figures.Value{figures.V("entries", 10000)}},
	}
	for _, r := range rows {
		if err := figures.Append(path, r); err != nil {
			t.Fatal(err)
		}
	}
	got, err := figures.Read(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0].Get("published") != "300" || got[1].Case != "dedup window" {
		t.Errorf("read back %+v", got)
	}
	if none, err := figures.Read(filepath.Join(t.TempDir(), "missing")); err != nil || none != nil {
		t.Errorf("a missing report reads as %v, %v", none, err)
	}
}

func TestTablePrintsOneAlignedTablePerSection(t *testing.T) {
	var b strings.Builder
	err := figures.Table(&b, []figures.Row{
		{Section: "crash", Case: "a", Values: []figures.Value{figures.V("published", 5000), figures.V("lost", 0)}},
		{Section: "fuzz", Case: "wire.FuzzX", Values: []figures.Value{figures.V("execs", 12)}},
		{Section: "crash", Case: "longer case", Values: []figures.Value{figures.V("lost", 0), figures.V("kills", 6)}},
	})
	if err != nil {
		t.Fatal(err)
	}
	want := `== crash ==
case         published  lost  kills
-----------  ---------  ----  -----
a                 5000     0      -
longer case          -     0      6

== fuzz ==
case        execs
----------  -----
wire.FuzzX     12
`
	if b.String() != want {
		t.Errorf("table:\n%s\nwant:\n%s", b.String(), want)
	}
}
