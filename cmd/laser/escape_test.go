package main

import (
	"strings"
	"testing"
)

func TestShownEscapesWhatATerminalWouldObey(t *testing.T) {
	for in, want := range map[string]string{
		"plain text, ünïcode":          "plain text, ünïcode",
		"\x1b]0;pwned\x07":             `\x1b]0;pwned\a`,
		"erase\x1b[2K\rline":           `erase\x1b[2K\rline`,
		"\x1b]52;c;aGVsbG8=\x07":       `\x1b]52;c;aGVsbG8=\a`,
		"csi\u009b2J":                  `csi\u009b2J`,
		"two\nlines\tand a tab":        `two\nlines\tand a tab`,
		"bidi \u202egnp.exe":           `bidi \u202egnp.exe`,
		"bad utf-8 \xff\xfe":           `bad utf-8 \xff\xfe`,
		"del\x7f":                      `del\x7f`,
		"approve?\x1b[8mhidden\x1b[0m": `approve?\x1b[8mhidden\x1b[0m`,
	} {
		if got := shown(in); got != want {
			t.Errorf("shown(%q) = %q, want %q", in, got, want)
		}
	}
	if got := shownText("a\nb\tc\x1b"); got != "a\nb\tc\\x1b" {
		t.Errorf("shownText kept or escaped the wrong runes: %q", got)
	}
}

// controlFree fails t when out holds a byte or rune a terminal acts on,
// other than the newlines and tabs of the output's own layout.
func controlFree(t *testing.T, what, out string) {
	t.Helper()
	if i := strings.IndexFunc(out, func(r rune) bool {
		return (r < 0x20 && r != '\n' && r != '\t') || (r >= 0x7f && r < 0xa0) || r == '\u202e'
	}); i >= 0 {
		t.Fatalf("%s printed a raw control character at byte %d:\n%q", what, i, out)
	}
}
