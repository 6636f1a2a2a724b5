package generator

import (
	"fmt"
	"go/token"
	"go/types"
	"reflect"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/lasergo/laser/wire"
)

// runtimePath is the import path generated code runs on.
const runtimePath = "github.com/lasergo/laser/runtime"

// effectPath is the import path of the package holding effect.Claims.
const effectPath = "github.com/lasergo/laser/effect"

// operationPath is the import path of the package describing operations.
const operationPath = "github.com/lasergo/laser/operation"

// Limits of the values a directive carries.
const (
	maxNameBytes = 255                   // topics and groups (Iggy's name limit)
	maxOpBytes   = wire.MaxCardTextBytes // an op is an agent card skill id
	maxCardOps   = wire.MaxCardCapabilities
)

// localNames are identifiers generated function bodies and signatures
// declare; a type of the package with one of these names cannot be spelled
// inside them.
var localNames = map[string]bool{
	"c": true, "m": true, "h": true, "in": true, "out": true, "err": true, "ctx": true,
	"opts": true, "client": true, "impl": true, "from": true,
	historyLocal: true,
}

// clientFields are the fields of a generated client; a client method of the
// same name would not compile.
var clientFields = map[string]bool{"client": true, "from": true, "opts": true}

// check validates the model: directive values, method shapes, encodable and
// nameable input and output types, duplicates and name collisions.
func (c *collector) check() {
	ids := make(map[string]*Agent)
	names := make(map[string]*Agent)
	for _, a := range c.model.Agents {
		c.checkAgentValues(a)
		if prev := ids[a.ID]; prev != nil && a.ID != "" {
			c.report(a.fields["id"].ValuePos, ErrDuplicateAgent, "agent id %q is also used by type %s", a.ID, prev.Name)
		} else {
			ids[a.ID] = a
		}
		for _, n := range generatedNames(a) {
			if prev := names[n]; prev != nil {
				c.report(a.Pos, ErrNameCollision, "agents %s and %s would both declare %s", prev.Name, a.Name, n)
			} else {
				names[n] = a
			}
			if obj := c.l.pkg.Types.Scope().Lookup(n); obj != nil {
				c.report(a.Pos, ErrNameCollision, "agent %s would declare %s, which is declared at %s",
					a.Name, n, positionString(relativePosition(c.l.fset.Position(obj.Pos()), c.l.dir)))
			}
		}
		if len(a.Ops) == 0 {
			c.report(a.Pos, ErrNoOperations, "type %s has //laser:agent but no //laser:handle or //laser:event method", a.Name)
		}
		c.checkOps(a)
		c.checkDefault(a)
	}
}

// checkDefault resolves the operation a command without one is routed to.
// The reference's contracts set no operation, so an agent with one command
// handler takes them without being told; one with several takes them only
// when default= names one of its //laser:handle operations.
func (c *collector) checkDefault(a *Agent) {
	var handles []*Operation
	for _, op := range a.Ops {
		if op.Kind != OpEvent {
			handles = append(handles, op)
		}
	}
	f, ok := a.fields["default"]
	if !ok {
		if len(handles) == 1 {
			a.Default = handles[0]
		}
		return
	}
	for _, op := range handles {
		if op.Op == f.Value {
			a.Default = op
			return
		}
	}
	names := make([]string, len(handles))
	for i, op := range handles {
		names[i] = strconv.Quote(op.Op)
	}
	detail := "agent " + a.Name + " has no //laser:handle op=" + strconv.Quote(f.Value)
	for _, op := range a.Ops {
		if op.Kind == OpEvent && op.Op == f.Value {
			detail += " (method " + op.Method + " takes it as an event, and a default takes commands)"
		}
	}
	if len(names) > 0 {
		detail += "; its command operations are " + strings.Join(names, ", ")
	}
	c.report(f.ValuePos, ErrBadDefault, "%s", detail)
}

// generatedNames are the package-level identifiers emitted for an agent.
func generatedNames(a *Agent) []string {
	e := exportedName(a.Name)
	names := []string{"New" + e + "Agent", e + "AgentConfig", e + "Handler", e + "Client", "New" + e + "Client", clientImpl(a), e + "Card", e + "Operations",
		unexportedName(a.Name) + "Dispatcher", staleName(a), agentIDConst(a), listenConst(a)}
	if a.Respond != "" {
		names = append(names, respondConst(a))
	}
	for _, op := range a.Ops {
		names = append(names, opConst(a, op))
	}
	return names
}

// clientImpl names the unexported implementation of an agent's client.
func clientImpl(a *Agent) string { return unexportedName(a.Name) + "Client" }

// agentIDConst, listenConst, respondConst and opConst name the constants
// holding an agent's id, topics and operation names. An operation's
// constant is named after its method, as written, so two methods differing
// only in the case of their first letter get different constants.
func agentIDConst(a *Agent) string           { return exportedName(a.Name) + "AgentID" }
func listenConst(a *Agent) string            { return exportedName(a.Name) + "ListenTopic" }
func respondConst(a *Agent) string           { return exportedName(a.Name) + "RespondTopic" }
func opConst(a *Agent, op *Operation) string { return exportedName(a.Name) + "Op" + op.Method }

// staleName names the interface of the handler signatures an agent was
// generated for; the compiler prints it when the file is stale, so it says
// what to do.
func staleName(a *Agent) string { return "laserGenIsStale_RunGoGenerate_" + a.Name }

func exportedName(s string) string {
	r, n := utf8.DecodeRuneInString(s)
	return strings.ToUpper(string(r)) + s[n:]
}

func unexportedName(s string) string {
	r, n := utf8.DecodeRuneInString(s)
	return strings.ToLower(string(r)) + s[n:]
}

func (c *collector) checkAgentValues(a *Agent) {
	if f, ok := a.fields["id"]; ok {
		if err := wire.CheckSDKAgentID(f.Value); err != nil {
			c.report(f.ValuePos, ErrBadValue, "id %q is not an agent id: %v", f.Value, err)
		}
	}
	for _, k := range []string{"listen", "respond", "group"} {
		if f, ok := a.fields[k]; ok {
			if err := checkName(f.Value, maxNameBytes); err != "" {
				c.report(f.ValuePos, ErrBadValue, "%s %q %s", k, f.Value, err)
			}
		}
	}
	if f, ok := a.fields["ct"]; ok {
		if ct, ok := parseCT(f.Value); ok {
			a.CT = ct
		} else {
			c.report(f.ValuePos, ErrBadValue, "ct %q is not cbor or json", f.Value)
		}
	}
}

func parseCT(s string) (ContentType, bool) {
	switch ContentType(s) {
	case CBOR, JSON:
		return ContentType(s), true
	}
	return "", false
}

// checkName returns why s is not a valid topic, group or operation name, or "".
func checkName(s string, max int) string {
	switch {
	case s == "":
		return "is empty"
	case len(s) > max:
		return fmt.Sprintf("is %d bytes, max %d", len(s), max)
	case !utf8.ValidString(s):
		return "is not valid UTF-8"
	}
	for _, r := range s {
		if r < 0x20 || (r >= 0x7f && r <= 0x9f) {
			return fmt.Sprintf("holds control character %U", r)
		}
	}
	return ""
}

func (c *collector) checkOps(a *Agent) {
	type key struct {
		kind bool // event or not
		op   string
	}
	seen := make(map[key]*Operation)
	handles := 0
	for _, op := range a.Ops {
		if op.ctPos.IsValid() {
			if ct, ok := parseCT(string(op.CT)); ok {
				op.CT = ct
			} else {
				c.report(op.ctPos, ErrBadValue, "ct %q is not cbor or json", op.CT)
				op.CT = a.CT
			}
		} else {
			op.CT = a.CT
		}
		if op.OpPos != op.DirPos {
			if err := checkName(op.Op, maxOpBytes); err != "" {
				c.report(op.OpPos, ErrBadValue, "op %q %s", op.Op, err)
			}
			k := key{op.Kind == OpEvent, op.Op}
			if prev := seen[k]; prev != nil {
				c.report(op.OpPos, ErrDuplicateOperation, "%s op %q is already handled by method %s", opWord(op.Kind), op.Op, prev.Method)
			} else {
				seen[k] = op
			}
		}
		if clientFields[op.Method] {
			c.report(op.Pos, ErrNameCollision, "method %s would become a method of %s, whose field has that name", op.Method, clientImpl(a))
		}
		if !c.checkShape(a, op) {
			continue
		}
		c.checkContext(op)
		c.checkClaims(op)
		c.checkMemory(a, op)
		if op.Kind != OpEvent {
			handles++
			if handles == maxCardOps+1 {
				c.report(op.DirPos, ErrTooManyOperations, "agent %s has more than %d //laser:handle operations", a.Name, maxCardOps)
			}
		}
		if op.Kind == OpRequest && a.Respond == "" {
			c.report(op.Pos, ErrNoRespond, "method %s returns %s but agent %s has no respond= topic to answer on", op.Method, c.typeString(op.Out), a.Name)
		}
		if op.Kind == OpStream && a.Respond == "" {
			c.report(op.Pos, ErrStreamNoRespond, "method %s streams %s but agent %s has no respond= topic to stream on", op.Method, c.typeString(op.Out), a.Name)
		}
		c.checkType(op, op.In, op.InPos, "input")
		if op.Kind == OpStream {
			c.checkType(op, op.Out, op.OutPos, "stream item")
		} else if op.Out != nil {
			c.checkType(op, op.Out, op.OutPos, "output")
		}
	}
}

func opWord(k OpKind) string {
	if k == OpEvent {
		return "event"
	}
	return "handle"
}

// typeString prints t as the package's own code would.
func (c *collector) typeString(t types.Type) string {
	return types.TypeString(t, c.qualifier)
}

// qualifier names other packages by their package name, as source does.
func (c *collector) qualifier(p *types.Package) string {
	if p == c.l.pkg.Types {
		return ""
	}
	return p.Name()
}

// checkShape checks the method signature and fills in In, Out and Kind.
func (c *collector) checkShape(a *Agent, op *Operation) bool {
	sig := op.sig
	p, directive := ErrHandleShape, "handle"
	if op.Kind == OpEvent {
		p, directive = ErrEventShape, "event"
	}
	bad := func(why string) bool {
		c.report(op.Pos, p, "method %s has signature %s: %s", op.Method, c.typeString(sig), why)
		return false
	}
	params, results := sig.Params(), sig.Results()
	nparams := params.Len()
	if nparams == 3 {
		if item, ok, pointer := streamParam(params.At(2).Type()); ok {
			return c.streamShape(op, item, pointer)
		}
	}
	if nparams >= 3 && isRecalled(params.At(nparams-1).Type()) {
		op.Memory, nparams = true, nparams-1 // recalled memory (memory.go)
	}
	if nparams == 3 {
		if !isHistory(params.At(2).Type()) {
			return bad(fmt.Sprintf("the third parameter of a //laser:%s method must be %s, not %s", directive, thirdParams(directive), c.typeString(params.At(2).Type())))
		}
		op.Context, nparams = true, 2 // the conversation's context (context.go)
	}
	switch {
	case sig.TypeParams().Len() > 0:
		return bad("type parameters are not supported")
	case sig.Variadic():
		return bad("variadic parameters are not supported")
	case nparams != 2:
		return bad(fmt.Sprintf("a //laser:%s method takes %s parameters, not %d", directive, paramCounts(directive), params.Len()))
	case !isRuntimeCtx(params.At(0).Type()):
		return bad("the first parameter must be *runtime.Ctx")
	}
	op.In, op.InPos = params.At(1).Type(), params.At(1).Pos()
	switch {
	case results.Len() == 1 && isError(results.At(0).Type()):
		if op.Kind != OpEvent {
			op.Kind = OpCommand
		}
		return true
	case op.Kind == OpEvent:
		return bad("an event handler returns only error")
	case results.Len() == 2 && isError(results.At(1).Type()):
		if isError(results.At(0).Type()) {
			return bad("the output cannot be an error")
		}
		op.Kind, op.Out, op.OutPos = OpRequest, results.At(0).Type(), results.At(0).Pos()
		return true
	}
	return bad("the results must be (Out, error) or error")
}

func isRuntimeCtx(t types.Type) bool {
	p, ok := types.Unalias(t).(*types.Pointer)
	if !ok {
		return false
	}
	n, ok := types.Unalias(p.Elem()).(*types.Named)
	return ok && n.Obj().Pkg() != nil && n.Obj().Pkg().Path() == runtimePath && n.Obj().Name() == "Ctx"
}

var errorType = types.Universe.Lookup("error").Type()

func isError(t types.Type) bool { return types.Identical(t, errorType) }

// checkType reports an input or output type that generated code cannot
// spell, or that its content type cannot encode and decode.
func (c *collector) checkType(op *Operation, t types.Type, pos token.Pos, role string) {
	if !pos.IsValid() {
		pos = op.Pos
	}
	ts := c.typeString(t)
	switch why := c.unnameable(t); why {
	case "":
	case unresolved:
		return // the type checker's error says why, once
	default:
		c.report(pos, ErrUnnameable, "%s %s of method %s: %s", role, ts, op.Method, why)
		return
	}
	w := encWalker{ct: op.CT, seen: make(map[types.Type]bool), qual: c.qualifier}
	if why := w.walk(t, ts); why != "" {
		p := ErrUnencodable
		if w.noFields {
			p = ErrNoExportedFields
		}
		c.report(pos, p, "%s %s of method %s: %s", role, ts, op.Method, why)
		return
	}
	if role == "input" && token.IsExported(op.Method) {
		if name := c.unexportedOwn(t); name != "" {
			c.report(pos, ErrUnexportedInput, "%s %s of method %s: the generated client method %s is exported, but type %s is not",
				role, ts, op.Method, op.Method, name)
		}
	}
}

// unresolved is unnameable's answer for a type that does not type-check.
const unresolved = "the type does not resolve"

// unexportedOwn returns the name of an unexported type of this package that
// spelling t needs, or "".
func (c *collector) unexportedOwn(t types.Type) string {
	return eachNamed(t, func(obj *types.TypeName) string {
		if obj.Pkg() == c.l.pkg.Types && !obj.Exported() {
			return obj.Name()
		}
		return ""
	}, func(types.Type) string { return "" })
}

// eachNamed walks the types spelling t needs: through pointers, slices,
// arrays, maps and type arguments, it calls named for every named type (or
// alias) and leaf for every other type. It returns the first non-empty answer.
func eachNamed(t types.Type, named func(*types.TypeName) string, leaf func(types.Type) string) string {
	walkNamed := func(obj *types.TypeName, args *types.TypeList) string {
		if s := named(obj); s != "" {
			return s
		}
		for i := 0; i < args.Len(); i++ {
			if s := eachNamed(args.At(i), named, leaf); s != "" {
				return s
			}
		}
		return ""
	}
	switch t := t.(type) {
	case *types.Alias:
		return walkNamed(t.Obj(), t.TypeArgs())
	case *types.Named:
		return walkNamed(t.Obj(), t.TypeArgs())
	case *types.Pointer:
		return eachNamed(t.Elem(), named, leaf)
	case *types.Slice:
		return eachNamed(t.Elem(), named, leaf)
	case *types.Array:
		return eachNamed(t.Elem(), named, leaf)
	case *types.Map:
		if s := eachNamed(t.Key(), named, leaf); s != "" {
			return s
		}
		return eachNamed(t.Elem(), named, leaf)
	}
	return leaf(t)
}

// unnameable says why generated code in this package cannot write t, or "".
func (c *collector) unnameable(t types.Type) string {
	own := c.l.pkg.Types
	return eachNamed(t, func(obj *types.TypeName) string {
		switch {
		case obj.Pkg() == nil:
			return "" // error, comparable
		case obj.Pkg() != own && !obj.Exported():
			return fmt.Sprintf("%s is not exported by package %s", obj.Name(), obj.Pkg().Path())
		case obj.Parent() != nil && obj.Parent() != obj.Pkg().Scope():
			return fmt.Sprintf("%s is declared inside a function", obj.Name())
		case obj.Pkg() == own && localNames[obj.Name()]:
			return fmt.Sprintf("type name %s is also a local name in generated code; rename the type", obj.Name())
		}
		return ""
	}, func(t types.Type) string {
		switch t := t.(type) {
		case *types.Basic:
			if t.Kind() == types.Invalid {
				return unresolved
			}
			return ""
		case *types.Interface:
			if t.Empty() {
				return ""
			}
			return "an interface literal; declare a named type"
		case *types.Struct:
			return "an anonymous struct; declare a named type"
		case *types.TypeParam:
			return "a type parameter"
		case *types.Chan, *types.Signature:
			return "" // named fine, but not encodable: reported by the encoding check
		}
		return fmt.Sprintf("%T types are not supported", t)
	})
}

// encWalker checks that a type encodes and decodes in a content type.
type encWalker struct {
	ct   ContentType
	seen map[types.Type]bool
	qual types.Qualifier
	// noFields is set when the walk stopped at a struct without exported
	// fields: it encodes, but as nothing.
	noFields bool
}

// marshalMethods are the methods through which a type encodes itself in
// each content type, as the runtime's codecs use them (fxamacker/cbor with
// its defaults, encoding/json); the walk trusts them. jsonKeyMethods are
// the ones encoding/json uses for a map key.
var (
	marshalMethods = map[ContentType][]string{
		CBOR: {"MarshalCBOR", "UnmarshalCBOR", "MarshalBinary", "UnmarshalBinary"},
		JSON: {"MarshalJSON", "UnmarshalJSON", "MarshalText", "UnmarshalText"},
	}
	jsonKeyMethods = []string{"MarshalText", "UnmarshalText"}
)

// hasMarshaller reports whether t (or *t) has one of methods.
func hasMarshaller(t types.Type, methods []string) bool {
	for _, recv := range []types.Type{t, types.NewPointer(t)} {
		ms := types.NewMethodSet(recv)
		for _, name := range methods {
			if ms.Lookup(nil, name) != nil {
				return true
			}
		}
	}
	return false
}

// walk returns why t (reached by path) cannot be encoded, or "".
func (w *encWalker) walk(t types.Type, path string) string {
	if w.seen[t] {
		return ""
	}
	switch types.Unalias(t).(type) {
	case *types.Named:
		w.seen[t] = true
		if hasMarshaller(t, marshalMethods[w.ct]) {
			return ""
		}
	}
	switch u := t.Underlying().(type) {
	case *types.Basic:
		switch {
		case u.Info()&types.IsComplex != 0:
			return fmt.Sprintf("%s is a complex number", path)
		case u.Kind() == types.UnsafePointer:
			return fmt.Sprintf("%s is an unsafe.Pointer", path)
		}
		return ""
	case *types.Pointer:
		return w.walk(u.Elem(), path)
	case *types.Slice:
		return w.walk(u.Elem(), path+"[]")
	case *types.Array:
		return w.walk(u.Elem(), path+"[]")
	case *types.Map:
		if why := w.mapKey(u.Key(), path); why != "" {
			return why
		}
		return w.walk(u.Elem(), path+"[]")
	case *types.Struct:
		if u.NumFields() > 0 && !hasExportedField(u) {
			w.noFields = true
			if name := types.TypeString(t, w.qual); name != path {
				return fmt.Sprintf("%s is struct %s, whose fields are all unexported, so its data is never sent", path, name)
			}
			return fmt.Sprintf("the fields of struct %s are all unexported, so its data is never sent", path)
		}
		for i := 0; i < u.NumFields(); i++ {
			f := u.Field(i)
			if !f.Exported() && !f.Embedded() || w.skipped(u.Tag(i)) {
				continue
			}
			if why := w.walk(f.Type(), path+"."+f.Name()); why != "" {
				return why
			}
		}
		return ""
	case *types.Interface:
		if u.Empty() {
			return ""
		}
		return fmt.Sprintf("%s is the interface %s, which cannot be decoded", path, types.TypeString(t, w.qual))
	case *types.Chan:
		return fmt.Sprintf("%s is a channel", path)
	case *types.Signature:
		return fmt.Sprintf("%s is a function", path)
	case *types.TypeParam:
		return fmt.Sprintf("%s is a type parameter", path)
	}
	return ""
}

// hasExportedField reports whether s has a field an encoder writes: an
// exported or an embedded one (whose exported fields are promoted).
func hasExportedField(s *types.Struct) bool {
	for i := 0; i < s.NumFields(); i++ {
		if f := s.Field(i); f.Exported() || f.Embedded() {
			return true
		}
	}
	return false
}

// skipped reports whether a struct tag leaves the field out in w.ct. CBOR
// reads the cbor tag and falls back to the json tag.
func (w *encWalker) skipped(tag string) bool {
	st := reflect.StructTag(tag)
	name, ok := "", false
	if w.ct == CBOR {
		name, ok = st.Lookup("cbor")
	}
	if !ok {
		name, ok = st.Lookup("json")
	}
	return ok && name == "-"
}

// mapKey checks a map key: JSON needs strings, integers or text marshalling;
// CBOR takes any key that encodes.
func (w *encWalker) mapKey(k types.Type, path string) string {
	if w.ct == JSON {
		if hasMarshaller(k, jsonKeyMethods) {
			return ""
		}
		if b, ok := k.Underlying().(*types.Basic); ok && b.Info()&(types.IsString|types.IsInteger) != 0 {
			return ""
		}
		return fmt.Sprintf("%s has key type %s, which JSON cannot encode", path, types.TypeString(k, w.qual))
	}
	return w.walk(k, path+" key")
}
