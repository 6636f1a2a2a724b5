package generator

import (
	"fmt"
	"go/token"
	"path/filepath"
	"sort"
	"strings"
)

// Problem is one entry of the generator's error catalogue: what went wrong,
// in one line, and a sentence showing the form the generator accepts.
type Problem struct {
	// Title says what is wrong in a few words.
	Title string
	// Help shows the valid form.
	Help string
}

// The catalogue. Diagnostics carry one of these, so tests and tools branch on
// the pointer and users read the same wording for the same mistake.
var (
	ErrLoad = &Problem{
		Title: "package does not load",
		Help:  "Run lasergen in a directory holding one Go package that parses and whose imports resolve.",
	}
	ErrSyntax = &Problem{
		Title: "malformed directive",
		Help:  "A directive is //laser:<name> followed by space-separated key=value fields; quote values with spaces as key=\"a value\".",
	}
	ErrUnknownDirective = &Problem{
		Title: "unknown directive",
		Help:  "Use //laser:agent on a struct type and //laser:handle or //laser:event on its methods.",
	}
	ErrUnknownKey = &Problem{
		Title: "unknown key",
		Help:  validForms(),
	}
	ErrDuplicateKey = &Problem{
		Title: "duplicate key",
		Help:  "Give each key at most once per directive.",
	}
	ErrMissingKey = &Problem{
		Title: "missing key",
		Help:  validForms(),
	}
	ErrBadValue = &Problem{
		Title: "invalid value",
		Help:  "An id, topic or group is 1..255 bytes of UTF-8 without control characters, an op 1..256 such bytes, and ct is cbor or json.",
	}
	ErrMisplaced = &Problem{
		Title: "misplaced directive",
		Help:  "Put //laser:agent in the doc comment of a struct type declaration and //laser:handle or //laser:event in the doc comment of one of its methods.",
	}
	ErrConstrainedFile = &Problem{
		Title: "directive in a file with build constraints",
		Help:  "Declare agents and their annotated methods in files without //go:build lines or _GOOS/_GOARCH name suffixes: the generated file has no constraints and must build wherever the package does.",
	}
	ErrUnreadFile = &Problem{
		Title: "directive in a file lasergen does not read",
		Help:  "lasergen reads the package's non-test files for the current build; move the directive to one of them.",
	}
	ErrRepeatedDirective = &Problem{
		Title: "repeated directive",
		Help:  "Give a type one //laser:agent and a method one //laser:handle or //laser:event.",
	}
	ErrNoAgent = &Problem{
		Title: "method of a type without //laser:agent",
		Help:  "Annotate the receiver's struct type with //laser:agent id=<agent id> listen=<topic>.",
	}
	ErrGenericAgent = &Problem{
		Title: "generic agent type",
		Help:  "An agent is a struct type without type parameters, such as type Billing struct{...}.",
	}
	ErrDuplicateAgent = &Problem{
		Title: "duplicate agent id",
		Help:  "Give every //laser:agent of a package its own id.",
	}
	ErrNoOperations = &Problem{
		Title: "agent without operations",
		Help:  "Annotate at least one method of the agent with //laser:handle op=<operation> or //laser:event op=<operation>.",
	}
	ErrTooManyOperations = &Problem{
		Title: "too many operations",
		Help:  "An agent card lists at most 64 //laser:handle operations; split the agent.",
	}
	ErrDuplicateOperation = &Problem{
		Title: "duplicate operation",
		Help:  "Route each operation of an agent to one method: one //laser:handle and one //laser:event per op at most.",
	}
	ErrBadDefault = &Problem{
		Title: "default operation the agent does not handle",
		Help:  "default=<operation> on //laser:agent names one of the agent's //laser:handle operations; a command without an operation (such as the reference SDK's contract) is routed to it. An agent with a single //laser:handle method needs no default.",
	}
	ErrHandleShape = &Problem{
		Title: "unsupported handler signature",
		Help:  shapeHelp("handle"),
	}
	ErrEventShape = &Problem{
		Title: "unsupported event handler signature",
		Help:  shapeHelp("event"),
	}
	ErrUnencodable = &Problem{
		Title: "type cannot be encoded",
		Help:  "Inputs and outputs are made of booleans, numbers, strings, slices, arrays, maps, structs, pointers and any, or implement their own marshalling; channels, functions, complex numbers and non-empty interfaces are not encodable.",
	}
	ErrUnnameable = &Problem{
		Title: "type cannot be named by generated code",
		Help:  "Use a named type declared in this package or an exported type of another package (or a pointer, slice or map of one) as input and output.",
	}
	ErrNoRespond = &Problem{
		Title: "request/response operation on an agent without a respond topic",
		Help:  "Add respond=<topic> to the //laser:agent directive, or drop the output so the method is a command: func(ctx *runtime.Ctx, in In) error.",
	}
	ErrNameCollision = &Problem{
		Title: "name collision",
		Help:  "Rename the declaration or method; generated code declares New<Agent>Agent, <Agent>Handler, <Agent>Client and its implementation <agent>Client (with fields client, from and opts), New<Agent>Client, <Agent>Card, <Agent>Operations, <agent>Dispatcher, laserGenIsStale_RunGoGenerate_<Agent> and the constants <Agent>AgentID, <Agent>ListenTopic, <Agent>RespondTopic and <Agent>Op<Method> per agent.",
	}
	ErrNotGenerated = &Problem{
		Title: "output file is not generated",
		Help:  "lasergen overwrites only files starting with \"// Code generated by lasergen. DO NOT EDIT.\"; move the file or choose another -out.",
	}
	ErrTypeCheck = &Problem{
		Title: "package does not type-check",
		Help:  "Fix this Go error first: lasergen reads the package's types (the names it generates are known to it and not reported).",
	}
	ErrSpacedDirective = &Problem{
		Title: "comment that looks like a directive",
		Help:  "Like //go: directives, a laser directive has no space after the slashes: //laser:agent, //laser:handle, //laser:event.",
	}
	ErrUnexportedInput = &Problem{
		Title: "unexported input type in an exported client method",
		Help:  "Export the type, or unexport the method: code outside the package calls the generated client's method and cannot name or build a value of an unexported type.",
	}
	ErrNoExportedFields = &Problem{
		Title: "struct without exported fields",
		Help:  "CBOR and JSON encode only exported fields: export the fields that carry data, or give the type its own marshalling methods (MarshalCBOR/UnmarshalCBOR or MarshalJSON/UnmarshalJSON).",
	}
	ErrNoAgents = &Problem{
		Title: "nothing to generate",
		Help:  "Annotate a struct type with " + directiveForm("agent") + ".",
	}
)

// Diagnostic is one problem found in the input, at a source position.
type Diagnostic struct {
	// Pos is where the problem is: the offending directive key or value, or
	// the declaration whose shape is wrong.
	Pos token.Position
	// Problem is the catalogue entry.
	Problem *Problem
	// Detail says what exactly is wrong here.
	Detail string
}

// Message returns the diagnostic without its position.
func (d Diagnostic) Message() string {
	sep := ". "
	if strings.HasSuffix(d.Detail, "?") || strings.HasSuffix(d.Detail, ".") {
		sep = " " // a hint ("did you mean listen?") ends its own sentence
	}
	return d.Problem.Title + ": " + d.Detail + sep + d.Problem.Help
}

// String returns file:line:col: message.
func (d Diagnostic) String() string {
	return fmt.Sprintf("%s: %s", positionString(d.Pos), d.Message())
}

func positionString(p token.Position) string {
	switch {
	case p.Filename == "":
		return "-"
	case p.Line == 0:
		return p.Filename
	}
	return fmt.Sprintf("%s:%d:%d", p.Filename, p.Line, p.Column)
}

// DiagnosticsError reports every problem the generator found; nothing was
// generated.
type DiagnosticsError struct {
	Diagnostics []Diagnostic
}

func (e *DiagnosticsError) Error() string {
	lines := make([]string, len(e.Diagnostics))
	for i, d := range e.Diagnostics {
		lines[i] = d.String()
	}
	return strings.Join(lines, "\n")
}

// sortDiagnostics orders diagnostics by file, line, column and message and
// drops exact repeats, so output is stable whatever order checks ran in.
func sortDiagnostics(ds []Diagnostic) []Diagnostic {
	sort.SliceStable(ds, func(i, j int) bool {
		a, b := ds[i].Pos, ds[j].Pos
		if a.Filename != b.Filename {
			return a.Filename < b.Filename
		}
		if a.Line != b.Line {
			return a.Line < b.Line
		}
		if a.Column != b.Column {
			return a.Column < b.Column
		}
		return ds[i].Message() < ds[j].Message()
	})
	out := ds[:0]
	for _, d := range ds {
		if len(out) > 0 && d.String() == out[len(out)-1].String() {
			continue
		}
		out = append(out, d)
	}
	return out
}

// relativePosition makes p's file name relative to dir when it lies inside
// it, so diagnostics read the same on every machine.
func relativePosition(p token.Position, dir string) token.Position {
	if p.Filename == "" || dir == "" {
		return p
	}
	if rel, err := filepath.Rel(dir, p.Filename); err == nil && !strings.HasPrefix(rel, "..") {
		p.Filename = filepath.ToSlash(rel)
	}
	return p
}
