package main

import (
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// shown returns s as it is safe to print on an operator's terminal: every
// rune that is not printable (C0 and C1 controls, DEL, bidirectional
// overrides, invalid UTF-8) is written as a Go escape such as \x1b. Fields
// from records are written by whoever can append to a topic, and a raw one
// could retitle the window, erase a line, write the clipboard (OSC 52) or
// fake a line of output.
func shown(s string) string { return escapeFor(s, false) }

// shownText is shown for a multi-line body: newlines and tabs stay.
func shownText(s string) string { return escapeFor(s, true) }

func escapeFor(s string, keepLines bool) string {
	safe := func(r rune) bool { return unicode.IsPrint(r) || (keepLines && (r == '\n' || r == '\t')) }
	clean := true
	for _, r := range s {
		if r == utf8.RuneError || !safe(r) {
			clean = false
			break
		}
	}
	if clean {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && n <= 1:
			b.WriteString(`\x`)
			b.WriteString(strconv.FormatUint(uint64(s[i])|0x100, 16)[1:])
		case safe(r):
			b.WriteString(s[i : i+n])
		default:
			q := strconv.QuoteRuneToASCII(r)
			b.WriteString(q[1 : len(q)-1])
		}
		i += n
	}
	return b.String()
}
