package generator

import (
	"fmt"
	"strconv"
	"strings"
)

// directivePrefix starts every laser directive. Like //go: directives it has
// no space after the slashes: "// laser:agent" is an ordinary comment.
const directivePrefix = "//laser:"

// Directive is one parsed //laser: line comment. Offsets are byte offsets
// into the comment text (which starts at its "//"), so a diagnostic can
// point at the exact field.
type Directive struct {
	// Name is the word after "//laser:", such as "agent".
	Name    string
	NameOff int
	Fields  []Field
}

// Field is one key=value of a directive.
type Field struct {
	Key string
	// Value is unquoted when the source quoted it.
	Value    string
	KeyOff   int
	ValueOff int
}

// Lookup returns the field with key k.
func (d *Directive) Lookup(k string) (Field, bool) {
	for _, f := range d.Fields {
		if f.Key == k {
			return f, true
		}
	}
	return Field{}, false
}

// DirectiveError is a problem with a directive at a byte offset of its comment.
type DirectiveError struct {
	Off     int
	Problem *Problem
	Detail  string
}

// directiveSchema says which keys a directive takes and which it needs.
type directiveSchema struct {
	keys     []string
	required []string
}

var directiveSchemas = map[string]directiveSchema{
	"agent":  {keys: []string{"id", "listen", "respond", "group", "ct", "default"}, required: []string{"id", "listen"}},
	"handle": {keys: []string{"op", "ct", "context", "memory", "effect", "data"}, required: []string{"op"}},
	"event":  {keys: []string{"op", "ct", "context", "memory", "effect", "data"}, required: []string{"op"}},
}

// IsDirective reports whether a comment's text is a laser directive.
func IsDirective(text string) bool { return strings.HasPrefix(text, directivePrefix) }

// ParseDirective parses the text of one line comment (starting with "//").
// ok is false when the text is not a laser directive. Every syntax problem
// and every schema problem (unknown directive or key, repeated key, missing
// required key) is returned, each at the offset of the offending token; the
// fields that did parse are returned too.
func ParseDirective(text string) (d Directive, errs []DirectiveError, ok bool) {
	if !IsDirective(text) {
		return Directive{}, nil, false
	}
	p := directiveParser{text: text, i: len(directivePrefix)}
	d = p.parse()
	errs = append(p.errs, checkSchema(&d, p.broken)...)
	return d, errs, true
}

type directiveParser struct {
	text string
	i    int
	errs []DirectiveError
	// broken holds keys whose value did not parse, so they are not also
	// reported as missing.
	broken map[string]bool
}

func isSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\v' || c == '\f'
}

func (p *directiveParser) breakKey(k string) {
	if p.broken == nil {
		p.broken = make(map[string]bool)
	}
	p.broken[k] = true
}

func (p *directiveParser) fail(off int, format string, args ...any) {
	p.errs = append(p.errs, DirectiveError{Off: off, Problem: ErrSyntax, Detail: fmt.Sprintf(format, args...)})
}

// word returns the run of non-space bytes starting at p.i.
func (p *directiveParser) word() string {
	start := p.i
	for p.i < len(p.text) && !isSpace(p.text[p.i]) {
		p.i++
	}
	return p.text[start:p.i]
}

func (p *directiveParser) skipSpace() {
	for p.i < len(p.text) && isSpace(p.text[p.i]) {
		p.i++
	}
}

func (p *directiveParser) parse() Directive {
	d := Directive{NameOff: p.i}
	d.Name = p.word()
	if d.Name == "" {
		p.fail(d.NameOff, "no directive name after //laser:")
	}
	for {
		p.skipSpace()
		if p.i >= len(p.text) {
			return d
		}
		if f, ok := p.field(); ok {
			d.Fields = append(d.Fields, f)
		}
	}
}

// field parses key=value at p.i, which is not a space; on a syntax error it
// skips to the next space and reports ok=false.
func (p *directiveParser) field() (Field, bool) {
	f := Field{KeyOff: p.i}
	eq := p.i
	for eq < len(p.text) && p.text[eq] != '=' && !isSpace(p.text[eq]) {
		eq++
	}
	if eq >= len(p.text) || p.text[eq] != '=' {
		p.fail(f.KeyOff, "expected key=value, found %q", p.text[f.KeyOff:eq])
		p.i = eq
		return f, false
	}
	f.Key = p.text[f.KeyOff:eq]
	p.i = eq + 1
	f.ValueOff = p.i
	if f.Key == "" {
		p.fail(f.KeyOff, "missing key before '='")
		p.skipValue()
		return f, false
	}
	p.breakKey(f.Key)
	if p.i >= len(p.text) || isSpace(p.text[p.i]) {
		p.fail(f.ValueOff, "missing value for key %q", f.Key)
		return f, false
	}
	if p.text[p.i] != '"' {
		v := p.word()
		if q := strings.IndexByte(v, '"'); q >= 0 {
			p.fail(f.ValueOff+q, "quote inside the unquoted value of key %q; quote the whole value", f.Key)
			return f, false
		}
		f.Value = v
		delete(p.broken, f.Key)
		return f, true
	}
	end, closed := p.quotedEnd()
	if !closed {
		p.fail(f.ValueOff, "unterminated quoted value for key %q", f.Key)
		p.i = len(p.text)
		return f, false
	}
	v, err := strconv.Unquote(p.text[f.ValueOff:end])
	p.i = end
	if err != nil {
		p.fail(f.ValueOff, "invalid quoted value for key %q", f.Key)
		p.skipValue()
		return f, false
	}
	if p.i < len(p.text) && !isSpace(p.text[p.i]) {
		p.fail(p.i, "unexpected %q after the quoted value of key %q", p.text[p.i], f.Key)
		p.skipValue()
		return f, false
	}
	f.Value = v
	delete(p.broken, f.Key)
	return f, true
}

// quotedEnd returns the offset just past the closing quote of the string
// starting at p.i, honouring backslash escapes.
func (p *directiveParser) quotedEnd() (int, bool) {
	for j := p.i + 1; j < len(p.text); j++ {
		switch p.text[j] {
		case '\\':
			j++
		case '"':
			return j + 1, true
		}
	}
	return 0, false
}

func (p *directiveParser) skipValue() { p.word() }

// checkSchema reports an unknown directive, unknown and repeated keys and
// missing required keys (at the directive's name). Keys in broken had a
// value that did not parse and count as present.
func checkSchema(d *Directive, broken map[string]bool) []DirectiveError {
	if d.Name == "" {
		return nil
	}
	s, ok := directiveSchemas[d.Name]
	if !ok {
		names := make([]string, 0, len(directiveSchemas))
		for n := range directiveSchemas {
			names = append(names, n)
		}
		hint := ""
		if meant := closest(d.Name, names); meant != "" {
			hint = "; did you mean //laser:" + meant + "?"
		}
		return []DirectiveError{{Off: d.NameOff, Problem: ErrUnknownDirective,
			Detail: fmt.Sprintf("//laser:%s is not a directive%s", d.Name, hint)}}
	}
	var errs []DirectiveError
	seen := make(map[string]bool, len(d.Fields))
	meantKeys := make(map[string]bool)
	kept := d.Fields[:0]
	for _, f := range d.Fields {
		switch {
		case !contains(s.keys, f.Key):
			hint := ""
			if meant := closest(f.Key, s.keys); meant != "" {
				hint = "; did you mean " + meant + "?"
				// The misspelt key stands for the one meant: it is not
				// also reported as missing.
				meantKeys[meant] = true
			}
			errs = append(errs, DirectiveError{Off: f.KeyOff, Problem: ErrUnknownKey,
				Detail: fmt.Sprintf("//laser:%s has no key %q%s", d.Name, f.Key, hint)})
		case seen[f.Key]:
			detail := fmt.Sprintf("key %q is given twice", f.Key)
			if f.Key == "default" {
				detail += ", so a command without an operation would be ambiguous"
			}
			errs = append(errs, DirectiveError{Off: f.KeyOff, Problem: ErrDuplicateKey, Detail: detail})
		default:
			seen[f.Key] = true
			kept = append(kept, f)
		}
	}
	d.Fields = kept
	for _, k := range s.required {
		if !seen[k] && !broken[k] && !meantKeys[k] {
			errs = append(errs, DirectiveError{Off: d.NameOff, Problem: ErrMissingKey,
				Detail: fmt.Sprintf("//laser:%s needs %s=", d.Name, k)})
		}
	}
	return errs
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}
