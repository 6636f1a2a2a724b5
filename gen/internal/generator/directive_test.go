package generator

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/lasergo/laser/internal/fuzzcheck"
)

func TestParseDirectiveIgnoresOrdinaryComments(t *testing.T) {
	for _, text := range []string{"// laser:agent id=a", "//go:generate lasergen", "/*laser:agent*/", "//laser", "// Billing charges cards."} {
		if _, _, ok := ParseDirective(text); ok {
			t.Errorf("ParseDirective(%q) took an ordinary comment for a directive", text)
		}
	}
}

func TestParseDirectiveReadsFieldsWithOffsets(t *testing.T) {
	text := `//laser:agent id=billing listen=agent.commands	respond="agent responses\t2" ct=json`
	d, errs, ok := ParseDirective(text)
	if !ok || len(errs) != 0 {
		t.Fatalf("ParseDirective = ok %v, errors %v", ok, errs)
	}
	want := Directive{Name: "agent", NameOff: 8, Fields: []Field{
		{Key: "id", Value: "billing", KeyOff: 14, ValueOff: 17},
		{Key: "listen", Value: "agent.commands", KeyOff: 25, ValueOff: 32},
		{Key: "respond", Value: "agent responses\t2", KeyOff: 47, ValueOff: 55},
		{Key: "ct", Value: "json", KeyOff: 76, ValueOff: 79},
	}}
	if diff := cmp.Diff(want, d); diff != "" {
		t.Fatalf("directive mismatch (-want +got):\n%s", diff)
	}
	for _, f := range d.Fields {
		if !strings.HasPrefix(text[f.KeyOff:], f.Key+"=") {
			t.Errorf("key %q offset %d points at %q", f.Key, f.KeyOff, text[f.KeyOff:])
		}
	}
}

func TestParseDirectiveAcceptsEmptyQuotedValues(t *testing.T) {
	d, errs, _ := ParseDirective(`//laser:handle op=""`)
	if len(errs) != 0 {
		t.Fatalf("errors %v", errs)
	}
	if f, ok := d.Lookup("op"); !ok || f.Value != "" {
		t.Fatalf("op = %+v, %v; want an empty value (the checker rejects it, not the parser)", f, ok)
	}
}

func TestParseDirectiveReportsEachProblemAtItsOffset(t *testing.T) {
	tests := []struct {
		name    string
		text    string
		problem *Problem
		off     int
		detail  string
	}{
		{"no name", "//laser: id=a", ErrSyntax, 8, "no directive name"},
		{"unknown name", "//laser:agnet id=a", ErrUnknownDirective, 8, "//laser:agnet is not a directive"},
		{"bare word", "//laser:handle op=x json", ErrSyntax, 20, `expected key=value, found "json"`},
		{"no key", "//laser:handle op=x =json", ErrSyntax, 20, "missing key"},
		{"no value", "//laser:handle op=", ErrSyntax, 18, `missing value for key "op"`},
		{"no value before space", "//laser:handle op= ct=json", ErrSyntax, 18, `missing value for key "op"`},
		{"unterminated quote", `//laser:handle op="x`, ErrSyntax, 18, "unterminated"},
		{"escaped quote unterminated", `//laser:handle op="x\"`, ErrSyntax, 18, "unterminated"},
		{"bad escape", `//laser:handle op="\q"`, ErrSyntax, 18, "invalid quoted value"},
		{"junk after quote", `//laser:handle op="x"y`, ErrSyntax, 21, `unexpected 'y'`},
		{"quote in value", `//laser:handle op=a"b`, ErrSyntax, 19, "quote inside"},
		{"unknown key", "//laser:handle op=x respond=y", ErrUnknownKey, 20, `has no key "respond"`},
		{"duplicate key", "//laser:handle op=x op=y", ErrDuplicateKey, 20, `key "op" is given twice`},
		{"missing key", "//laser:agent listen=t", ErrMissingKey, 8, "needs id="},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, errs, ok := ParseDirective(tt.text)
			if !ok {
				t.Fatal("not recognised as a directive")
			}
			for _, e := range errs {
				if e.Problem == tt.problem && e.Off == tt.off && strings.Contains(e.Detail, tt.detail) {
					return
				}
			}
			t.Fatalf("errors %+v; want %q at %d containing %q", errs, tt.problem.Title, tt.off, tt.detail)
		})
	}
}

func TestParseDirectiveDoesNotReportABrokenValueAsMissing(t *testing.T) {
	_, errs, _ := ParseDirective(`//laser:handle op="unterminated`)
	for _, e := range errs {
		if e.Problem == ErrMissingKey {
			t.Fatalf("op reported missing after its value failed to parse: %+v", errs)
		}
	}
	if len(errs) != 1 {
		t.Fatalf("errors %+v; want exactly the syntax error", errs)
	}
}

func TestParseDirectiveKeepsParsingAfterAnError(t *testing.T) {
	d, errs, _ := ParseDirective("//laser:agent junk id=a listen=t")
	if len(errs) != 1 || errs[0].Problem != ErrSyntax {
		t.Fatalf("errors %+v; want one syntax error", errs)
	}
	if _, ok := d.Lookup("listen"); !ok {
		t.Fatal("fields after the bad one were dropped")
	}
}

// FuzzParseDirective checks that any comment text parses without panicking,
// that every offset lies within the text, and that keys and unquoted values
// are where their offsets say.
func FuzzParseDirective(f *testing.F) {
	for _, seed := range directiveSeeds {
		f.Add(seed)
	}
	f.Fuzz(checkParseDirective)
}

// directiveSeeds are directives of each form, broken ones among them.
var directiveSeeds = []string{
	"//laser:agent id=billing listen=agent.commands respond=agent.responses",
	`//laser:handle op="a b" ct=json`,
	`//laser:event op="\u00e9\"" ct=`,
	"//laser:",
	"//laser:agent =x y= \"",
	"//laser:handle op=x op=y zz=1",
	"// not a directive",
}

// checkParseDirective is FuzzParseDirective's harness.
func checkParseDirective(t *testing.T, text string) {
	d, errs, ok := ParseDirective(text)
	if !ok {
		if IsDirective(text) {
			t.Fatalf("IsDirective(%q) but ParseDirective says no", text)
		}
		return
	}
	in := func(what string, off int) {
		if off < 0 || off > len(text) {
			t.Fatalf("%s offset %d outside the %d-byte text %q", what, off, len(text), text)
		}
	}
	in("name", d.NameOff)
	if !strings.HasPrefix(text[d.NameOff:], d.Name) {
		t.Fatalf("name %q not at offset %d of %q", d.Name, d.NameOff, text)
	}
	for _, fl := range d.Fields {
		in("key", fl.KeyOff)
		in("value", fl.ValueOff)
		if !strings.HasPrefix(text[fl.KeyOff:], fl.Key+"=") {
			t.Fatalf("key %q not at offset %d of %q", fl.Key, fl.KeyOff, text)
		}
		if text[fl.ValueOff] != '"' && !strings.HasPrefix(text[fl.ValueOff:], fl.Value) {
			t.Fatalf("value %q not at offset %d of %q", fl.Value, fl.ValueOff, text)
		}
	}
	for _, e := range errs {
		in("error", e.Off)
		if e.Problem == nil || e.Detail == "" {
			t.Fatalf("error without problem or detail: %+v", e)
		}
	}
}

// TestFuzzHarnessTakesAnyInput runs FuzzParseDirective's harness over
// fuzzcheck's hostile inputs as a plain test, so a harness that cannot
// fuzz fails every go test run.
func TestFuzzHarnessTakesAnyInput(t *testing.T) {
	var seeds [][]byte
	for _, s := range directiveSeeds {
		seeds = append(seeds, []byte(s))
	}
	fuzzcheck.Run(t, fuzzcheck.Inputs(1, seeds...), func(t *testing.T, b []byte) {
		checkParseDirective(t, string(b))
		checkParseDirective(t, "//laser:"+string(b))
	})
}
