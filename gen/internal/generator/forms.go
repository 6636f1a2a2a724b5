package generator

import (
	"fmt"
	"slices"
	"strings"
)

// This file is the one description of what lasergen accepts: the
// directives with their keys (directiveSchemas, whose order is the order
// the forms print in) and the method shapes below. The diagnostics, the
// help of every Problem and the Directives section of package gen's
// documentation (DirectivesDoc, which a test keeps gen.go in step with)
// are all written from it.

// Shape is one method signature a directive accepts.
type Shape struct {
	// Directive is "handle" or "event".
	Directive string
	// Signature is the method's signature, with In and Out the encodable
	// input and output types and Item the type of a streamed item.
	Signature string
	// Means says what the generated code does with such a method, as the
	// end of "for ...".
	Means string
	// History says the method may take a third parameter
	// history conversation.History: the conversation, read before the call
	// under the directive's context= policy.
	History bool
}

// Shapes lists every accepted method shape, per directive.
var Shapes = []Shape{
	{"handle", "func(ctx *runtime.Ctx, in In) (Out, error)", "request/response", true},
	{"handle", "func(ctx *runtime.Ctx, in In) error", "a command", true},
	{"handle", "func(ctx *runtime.Ctx, in In, out *runtime.Stream[Item]) error", "a streamed answer", false},
	{"event", "func(ctx *runtime.Ctx, in In) error", "an AGDX event", true},
}

// historyShapeParam is the third parameter of a shape with History.
const historyShapeParam = "history conversation.History"

// directiveOrder is the order the directives are described in.
var directiveOrder = []string{"agent", "handle", "event"}

// keyValues is what each key's value looks like in a form.
var keyValues = map[string]string{
	"id": "<agent id>", "listen": "<topic>", "respond": "<topic>", "group": "<group>",
	"ct": "cbor|json", "op": "<operation>", "context": "<policy>",
	"memory": "<strategy>[:<limit>]", "effect": "<class>", "data": "<classification>",
	"default": "<operation>",
}

// directiveForm is the form of directive name: its required keys, then its
// optional ones in brackets.
func directiveForm(name string) string {
	s := directiveSchemas[name]
	var b strings.Builder
	b.WriteString("//laser:" + name)
	for _, k := range s.keys {
		field := k + "=" + keyValues[k]
		if !slices.Contains(s.required, k) {
			field = "[" + field + "]"
		}
		b.WriteString(" " + field)
	}
	return b.String()
}

// validForms is the help of a directive whose keys are wrong: every
// directive's form.
func validForms() string {
	forms := make([]string, len(directiveOrder))
	for i, name := range directiveOrder {
		forms[i] = directiveForm(name)
	}
	return "Valid forms: " + strings.Join(forms, ", ") + ". " + shapeHelp("handle") + " " + shapeHelp("event")
}

// shapesOf returns the shapes directive accepts.
func shapesOf(directive string) []Shape {
	var out []Shape
	for _, s := range Shapes {
		if s.Directive == directive {
			out = append(out, s)
		}
	}
	return out
}

// shapeHelp is the sentence listing the shapes of directive.
func shapeHelp(directive string) string {
	var sigs, without []string
	for _, s := range shapesOf(directive) {
		sigs = append(sigs, s.Signature+" for "+s.Means)
		if !s.History {
			without = append(without, "the one for "+s.Means)
		}
	}
	which := "it"
	if len(sigs) > 1 {
		which = "any"
		if len(without) > 0 {
			which += " but " + orList(without)
		}
	}
	return "A //laser:" + directive + " method is " + orList(sigs) + "; In may be a pointer, and " + which +
		" may take a third parameter " + historyShapeParam + " (the conversation, read first under context=)."
}

// streamingSignature is the signature of the streaming shape.
func streamingSignature() string {
	for _, s := range Shapes {
		if strings.Contains(s.Signature, "*runtime.Stream[") {
			return s.Signature
		}
	}
	return ""
}

// params splits a shape's parameter list.
func (s Shape) params() []string {
	open := strings.Index(s.Signature, "(")
	end := strings.Index(s.Signature, ")")
	return strings.Split(s.Signature[open+1:end], ", ")
}

// withHistory is s's signature with the history parameter.
func (s Shape) withHistory() string {
	end := strings.Index(s.Signature, ")")
	return s.Signature[:end] + ", " + historyShapeParam + s.Signature[end:]
}

// paramCounts says how many parameters directive's methods take: "2 or 3".
func paramCounts(directive string) string {
	var counts []string
	for _, s := range shapesOf(directive) {
		n := len(s.params())
		for _, c := range []int{n, n + 1} {
			if c == n+1 && !s.History {
				continue
			}
			if text := fmt.Sprint(c); !slices.Contains(counts, text) {
				counts = append(counts, text)
			}
		}
	}
	slices.Sort(counts)
	return orList(counts)
}

// thirdParams lists what may come third in directive's methods.
func thirdParams(directive string) string {
	var thirds []string
	for _, s := range shapesOf(directive) {
		third := ""
		if p := s.params(); len(p) == 3 {
			third = p[2]
		} else if s.History {
			third = historyShapeParam
		}
		if third != "" && !slices.Contains(thirds, third) {
			thirds = append(thirds, third)
		}
	}
	return orList(thirds)
}

// orList joins items as "a, b or c".
func orList(items []string) string {
	if len(items) <= 1 {
		return strings.Join(items, "")
	}
	return strings.Join(items[:len(items)-1], ", ") + " or " + items[len(items)-1]
}

// DirectivesDoc is the Directives section of package gen's documentation,
// as doc comment text (without the comment markers).
func DirectivesDoc() string {
	var b strings.Builder
	b.WriteString("# Directives\n\nOn a struct type:\n\n\t" + directiveForm("agent") + "\n\nOn a method of such a type:\n\n")
	for _, name := range directiveOrder[1:] {
		b.WriteString("\t" + directiveForm(name) + "\n")
	}
	b.WriteString(`
Fields are space-separated key=value pairs; a value holding spaces is
written as a Go double-quoted string (key="a b"). ct defaults to the
agent's ct, which defaults to cbor. group defaults to the agent id.
default= names the //laser:handle operation a command without an
operation (the reference SDK's contract) goes to; an agent with a single
//laser:handle method takes such commands without it.
context= applies to methods that take a conversation.History: steps such
as last:20, tokens:4000, agents:a,b or sub, joined by + (default last:50).

Accepted method shapes, where In and Out are encodable types, In may be a
pointer and Item is the type of a streamed item:

`)
	var lines [][2]string
	for _, s := range Shapes {
		lines = append(lines, [2]string{"//laser:" + s.Directive + ": " + s.Signature, s.Means})
		if s.History {
			lines = append(lines, [2]string{"//laser:" + s.Directive + ": " + s.withHistory(), s.Means + ", the conversation read first"})
		}
	}
	width := 0
	for _, l := range lines {
		width = max(width, len(l[0]))
	}
	for _, l := range lines {
		fmt.Fprintf(&b, "\t%-*s  %s\n", width, l[0], l[1])
	}
	return b.String()
}
