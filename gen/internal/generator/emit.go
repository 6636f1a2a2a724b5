package generator

import (
	"bytes"
	"fmt"
	"go/types"
	"path"
	"sort"
	"strconv"
	"strings"

	"github.com/dave/jennifer/jen"
	"golang.org/x/tools/imports"
)

// Import paths generated code uses.
const (
	wirePath    = "github.com/lasergo/laser/wire"
	contextPath = "context"
	reflectPath = "reflect"
)

// emitter renders the generated file of one package with jennifer.
type emitter struct {
	m     *Model
	scope *types.Scope
	f     *jen.File
}

// emit renders the model as gofmt'd Go source.
func emit(m *Model, scope *types.Scope) ([]byte, error) {
	e := &emitter{m: m, scope: scope, f: jen.NewFilePathName(m.PkgPath, m.PkgName)}
	e.f.HeaderComment(GeneratedHeader)
	e.f.HeaderComment("Source: " + strings.Join(m.Files, ", "))
	e.nameImports()
	e.doc("This reference fails to compile when the laser runtime is older than the generator that wrote this file: upgrade github.com/lasergo/laser.")
	e.f.Const().Id("_").Op("=").Qual(runtimePath, "IsAtLeastVersion0_1")
	// The signature assertions come first: the compiler lists errors by
	// line, so a stale file's first error is the one that says what to do.
	for _, a := range m.Agents {
		e.f.Line()
		e.assertions(a)
	}
	for _, a := range m.Agents {
		e.f.Line()
		e.agent(a)
	}
	var buf bytes.Buffer
	if err := e.f.Render(&buf); err != nil {
		return nil, fmt.Errorf("lasergen: render %s: %w", m.PkgPath, err)
	}
	// jennifer's Render is gofmt'd; this also splits the imports into the
	// standard library and the rest, as goimports would.
	src, err := imports.Process(DefaultOutput, buf.Bytes(), &imports.Options{Comments: true, TabIndent: true, TabWidth: 8, FormatOnly: true})
	if err != nil {
		return nil, fmt.Errorf("lasergen: format %s: %w", m.PkgPath, err)
	}
	return src, nil
}

// nameImports picks the name of every imported package: its own name unless
// that clashes with a package-level declaration or another import, so the
// generated file never shadows the user's identifiers.
func (e *emitter) nameImports() {
	pkgs := map[string]string{runtimePath: "runtime", wirePath: "wire", contextPath: "context", reflectPath: "reflect", operationPath: "operation", effectPath: "effect"}
	if wantsContext(e.m) {
		pkgs[conversationPath] = "conversation"
	}
	if wantsMemory(e.m) {
		pkgs[memoryPath] = "memory"
	}
	if wantsIter(e.m) {
		pkgs["iter"] = "iter"
	}
	for _, a := range e.m.Agents {
		for _, op := range a.Ops {
			collectPackages(op.In, pkgs)
			if op.Out != nil {
				collectPackages(op.Out, pkgs)
			}
		}
	}
	delete(pkgs, e.m.PkgPath)
	paths := make([]string, 0, len(pkgs))
	for p := range pkgs {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	taken := make(map[string]bool)
	for _, p := range paths {
		name := pkgs[p]
		alias := name
		// Generated bodies declare locals (c, m, in, opts, ...) that would
		// shadow an import of the same name.
		for i := 1; taken[alias] || localNames[alias] || e.scope.Lookup(alias) != nil || jen.IsReservedWord(alias); i++ {
			alias = name + strconv.Itoa(i)
		}
		taken[alias] = true
		if alias == name && name == path.Base(p) {
			e.f.ImportName(p, name)
		} else {
			e.f.ImportAlias(p, alias)
		}
	}
}

// collectPackages records the packages whose names spelling t needs.
func collectPackages(t types.Type, into map[string]string) {
	eachNamed(t, func(obj *types.TypeName) string {
		if obj.Pkg() != nil {
			into[obj.Pkg().Path()] = obj.Pkg().Name()
		}
		return ""
	}, func(types.Type) string { return "" })
}

// typ spells t; check has made sure it can be spelled.
func (e *emitter) typ(t types.Type) jen.Code {
	named := func(obj *types.TypeName, args *types.TypeList) jen.Code {
		var s *jen.Statement
		if obj.Pkg() == nil {
			s = jen.Id(obj.Name())
		} else {
			s = jen.Qual(obj.Pkg().Path(), obj.Name())
		}
		if args.Len() > 0 {
			codes := make([]jen.Code, args.Len())
			for i := range codes {
				codes[i] = e.typ(args.At(i))
			}
			s = s.Types(codes...)
		}
		return s
	}
	switch t := t.(type) {
	case *types.Alias:
		return named(t.Obj(), t.TypeArgs())
	case *types.Named:
		return named(t.Obj(), t.TypeArgs())
	case *types.Pointer:
		return jen.Op("*").Add(e.typ(t.Elem()))
	case *types.Slice:
		return jen.Index().Add(e.typ(t.Elem()))
	case *types.Array:
		return jen.Index(jen.Lit(int(t.Len()))).Add(e.typ(t.Elem()))
	case *types.Map:
		return jen.Map(e.typ(t.Key())).Add(e.typ(t.Elem()))
	case *types.Basic:
		return jen.Id(t.Name())
	case *types.Interface:
		return jen.Any()
	}
	return jen.Id(t.String())
}

// docWidth is where generated comments wrap.
const docWidth = 77

// doc emits a comment, wrapped at docWidth columns between words.
func (e *emitter) doc(format string, args ...any) {
	for _, line := range wrap(docWidth, format, args...) {
		e.f.Comment(line)
	}
}

// wrap splits a comment into lines of at most width columns once indented
// and prefixed with "// ", breaking between words.
func wrap(width int, format string, args ...any) []string {
	var lines []string
	line := ""
	for _, w := range strings.Fields(fmt.Sprintf(format, args...)) {
		if line != "" && len(line)+1+len(w) > width-3 {
			lines = append(lines, line)
			line = ""
		}
		if line != "" {
			line += " "
		}
		line += w
	}
	if line != "" {
		lines = append(lines, line)
	}
	return lines
}

// field is one element of a keyed composite literal.
func field(name string, value jen.Code) jen.Code { return jen.Id(name).Op(":").Add(value) }

// keyed spells the elements of a composite literal one per line, in the
// order given: the struct's declaration order, which jen.Dict would replace
// by the alphabetical one.
func keyed(fields ...jen.Code) *jen.Statement {
	return jen.Custom(jen.Options{Open: "{", Close: "}", Separator: ",", Multi: true}, fields...)
}

func ctCode(ct ContentType) jen.Code {
	if ct == JSON {
		return jen.Qual(wirePath, "ContentJSON")
	}
	return jen.Qual(wirePath, "ContentCBOR")
}

func rt(name string) *jen.Statement { return jen.Qual(runtimePath, name) }

// agent emits everything one agent needs.
func (e *emitter) agent(a *Agent) {
	x := exportedName(a.Name)
	dispatcher := unexportedName(a.Name) + "Dispatcher"
	f := e.f
	id := jen.Id(agentIDConst(a))
	e.constants(a)
	f.Line()

	// Config and constructor.
	e.doc("%sAgentConfig returns the configuration of agent %q serving impl, as its annotations give it: id, topics, handler and card. Set what they do not (Group, Tuning, CardTopic, Gate) before passing it to Client.NewAgent.",
		x, a.ID)
	f.Func().Id(x+"AgentConfig").Params(
		jen.Id("impl").Op("*").Id(a.Name),
	).Add(rt("AgentConfig")).Block(
		jen.Id("cfg").Op(":=").Add(rt("AgentConfig")).Add(keyed(agentConfigFields(a, x, id)...)),
		jen.If(jen.Id("impl").Op("!=").Nil()).Block(
			jen.Id("cfg").Dot("Handler").Op("=").Id(x+"Handler").Call(jen.Id("impl")),
		),
		jen.Return(jen.Id("cfg")),
	)
	f.Line()
	e.doc("New%sAgent returns agent %q serving impl. It listens on %q%s; to configure it further, change %sAgentConfig(impl) and pass it to client.NewAgent.",
		x, a.ID, a.Listen, respondPhrase(a), x)
	f.Func().Id("New"+x+"Agent").Params(
		jen.Id("client").Op("*").Add(rt("Client")),
		jen.Id("impl").Op("*").Id(a.Name),
	).Params(jen.Op("*").Add(rt("Agent")), jen.Error()).Block(
		jen.If(jen.Id("impl").Op("==").Nil()).Block(
			jen.Return(jen.Nil(), jen.Op("&").Add(rt("Error")).Add(keyed(
				field("Code", rt("CodeConfig")),
				field("Msg", jen.Lit("agent "+a.ID+" needs an implementation")),
			))),
		),
		jen.Return(jen.Id("client").Dot("NewAgent").Call(jen.Id(x+"AgentConfig").Call(jen.Id("impl")))),
	)
	f.Line()

	// Handler and dispatcher.
	defaultPhrase := ""
	if a.Default != nil {
		defaultPhrase = fmt.Sprintf(" A command without an operation goes to %s.%s.", a.Name, a.Default.Method)
	}
	e.doc("%sHandler routes the messages of agent %q to impl's annotated methods by kind and operation; an unknown operation or an undecodable body is rejected (and answered, when the caller waits for a reply).%s", x, a.ID, defaultPhrase)
	f.Func().Id(x + "Handler").Params(jen.Id("impl").Op("*").Id(a.Name)).Add(rt("Handler")).Block(
		jen.Return(jen.Id(dispatcher).Values(jen.Dict{jen.Id("impl"): jen.Id("impl")})),
	)
	f.Line()
	f.Type().Id(dispatcher).Struct(jen.Id("impl").Op("*").Id(a.Name))
	f.Line()
	e.doc("Handle implements runtime.Handler.")
	f.Func().Params(jen.Id("h").Id(dispatcher)).Id("Handle").Params(jen.Id("c").Op("*").Add(rt("Ctx"))).Error().Block(
		jen.Id("m").Op(":=").Id("c").Dot("Message").Call(),
		jen.Switch(jen.Id("m").Dot("Kind").Call()).BlockFunc(func(g *jen.Group) {
			for _, kind := range []struct {
				event bool
				name  string
			}{{false, "KindCommand"}, {true, "KindEvent"}} {
				var ops []*Operation
				for _, op := range a.Ops {
					if (op.Kind == OpEvent) == kind.event {
						ops = append(ops, op)
					}
				}
				if len(ops) == 0 {
					continue
				}
				g.Case(jen.Qual(wirePath, kind.name)).Block(
					jen.Switch(jen.Id("m").Dot("Operation").Call()).BlockFunc(func(g *jen.Group) {
						for _, op := range ops {
							names := []jen.Code{jen.Id(opConst(a, op))}
							if op == a.Default {
								// A command without an operation (the
								// reference's contract sends one) is this one's.
								names = append(names, jen.Lit(""))
							}
							g.Case(names...).Block(jen.Return(jen.Id("h").Dot(opFunc(op)).Call(jen.Id("c"), jen.Id("m"))))
						}
					}),
				)
			}
		}),
		jen.Return(jen.Id("c").Dot("RejectUnknownOperation").Call(id)),
	)
	for _, op := range a.Ops {
		f.Line()
		e.opFunc(a, dispatcher, op)
	}
	f.Line()
	e.client(a, x)
	f.Line()
	e.card(a, x)
	f.Line()
	e.operations(a, x)
}

// constants emits the names agent a is known by on the log, which the
// dispatcher, the client and the card spell by these constants only.
func (e *emitter) constants(a *Agent) {
	e.doc("Names agent %q is known by on the log.", a.ID)
	e.f.Const().DefsFunc(func(g *jen.Group) {
		def := func(name, value, format string, args ...any) {
			for _, line := range wrap(docWidth-1, format, args...) {
				g.Comment(line)
			}
			g.Id(name).Op("=").Lit(value)
		}
		def(agentIDConst(a), a.ID, "%s is the id of agent %q.", agentIDConst(a), a.ID)
		def(listenConst(a), a.Listen, "%s is the topic agent %q listens on.", listenConst(a), a.ID)
		if a.Respond != "" {
			def(respondConst(a), a.Respond, "%s is the topic agent %q answers on.", respondConst(a), a.ID)
		}
		for _, op := range a.Ops {
			def(opConst(a, op), op.Op, "%s names %s %q, handled by %s.%s.", opConst(a, op), opNoun(op.Kind), op.Op, a.Name, op.Method)
		}
	})
}

func respondPhrase(a *Agent) string {
	if a.Respond == "" {
		return ""
	}
	return " and answers on " + strconv.Quote(a.Respond)
}

// opFunc names the dispatcher method of an operation. The method name is
// kept as is, so methods differing only in the case of their first letter
// get different dispatcher methods.
func opFunc(op *Operation) string { return "handle" + op.Method }

// opFunc emits the dispatcher method that decodes, calls and answers.
func (e *emitter) opFunc(a *Agent, dispatcher string, op *Operation) {
	var decl, arg jen.Code
	if pt, ok := op.In.(*types.Pointer); ok {
		decl = jen.Id("in").Op(":=").New(e.typ(pt.Elem()))
		arg = jen.Id("in")
	} else {
		decl = jen.Var().Id("in").Add(e.typ(op.In))
		arg = jen.Op("&").Id("in")
	}
	// A request whose body does not decode is answered too, so its caller
	// gets a remote *Error now instead of waiting for its timeout.
	decodeFailed := jen.Return(jen.Err())
	if op.Kind == OpRequest || op.Kind == OpStream {
		decodeFailed = jen.Return(jen.Id("c").Dot("FailRequest").Call(jen.Err()))
	}
	body := []jen.Code{
		decl,
		jen.If(jen.Err().Op(":=").Id("m").Dot("DecodeInput").Call(jen.Id(opConst(a, op)), arg, ctCode(op.CT)), jen.Err().Op("!=").Nil()).Block(
			decodeFailed,
		),
	}
	body = append(body, withClaims(op)...)
	body = append(body, assembleContext(op)...)
	body = append(body, recallMemory(op)...)
	args := []jen.Code{jen.Id("c"), jen.Id("in")}
	if op.Context {
		args = append(args, jen.Id(historyLocal))
	}
	if op.Memory {
		args = append(args, jen.Id(recalledLocal))
	}
	call := jen.Id("h").Dot("impl").Dot(op.Method).Call(args...)
	switch op.Kind {
	case OpStream:
		body = append(body, e.streamBody(op, args)...)
	case OpRequest:
		body = append(body,
			jen.List(jen.Id("out"), jen.Err()).Op(":=").Add(call),
			jen.If(jen.Err().Op("!=").Nil()).Block(jen.Return(jen.Id("c").Dot("FailRequest").Call(jen.Err()))),
			jen.List(jen.Id("body"), jen.Err()).Op(":=").Add(rt("EncodeBody")).Call(jen.Id("out"), ctCode(op.CT)),
			jen.If(jen.Err().Op("!=").Nil()).Block(jen.Return(rt("Reject").Call(jen.Err()))),
			jen.Return(jen.Id("c").Dot("Respond").Call(jen.Id("body"), rt("WithContentType").Call(ctCode(op.CT)))),
		)
	default:
		body = append(body, jen.Return(call))
	}
	e.doc("%s handles %s %q with %s.%s.", opFunc(op), opNoun(op.Kind), op.Op, a.Name, op.Method)
	e.f.Func().Params(jen.Id("h").Id(dispatcher)).Id(opFunc(op)).Params(
		jen.Id("c").Op("*").Add(rt("Ctx")), jen.Id("m").Op("*").Add(rt("Message")),
	).Error().Block(body...)
}

func opNoun(k OpKind) string {
	if k == OpEvent {
		return "event"
	}
	return "operation"
}

// client emits the typed client: an interface, so that code holding a
// client can be given a fake in a test, and its unexported implementation,
// which sends on the log.
func (e *emitter) client(a *Agent, x string) {
	f := e.f
	name, impl := x+"Client", clientImpl(a)
	params := func(op *Operation) []jen.Code {
		return []jen.Code{
			jen.Id("ctx").Qual(contextPath, "Context"),
			jen.Id("in").Add(e.typ(op.In)),
			jen.Id("opts").Op("...").Add(rt("Option")),
		}
	}
	results := func(op *Operation) jen.Code {
		switch op.Kind {
		case OpRequest:
			return jen.Params(e.typ(op.Out), jen.Error())
		case OpStream:
			return jen.Qual("iter", "Seq2").Types(e.typ(op.Out), jen.Error())
		}
		return jen.Error()
	}
	e.doc("%s calls agent %q with typed messages. New%s returns the implementation that sends them on the log; a test can give code that holds one a fake.", name, a.ID, name)
	f.Type().Id(name).InterfaceFunc(func(g *jen.Group) {
		for _, op := range a.Ops {
			for _, line := range wrap(docWidth-1, "%s", clientMethodDoc(a, op)) {
				g.Comment(line)
			}
			g.Id(op.Method).Params(params(op)...).Add(results(op))
		}
	})
	f.Line()
	e.doc("%s is the %s that sends on the log.", impl, name)
	f.Type().Id(impl).Struct(
		jen.Id("client").Op("*").Add(rt("Client")),
		jen.Id("from").String(),
		jen.Id("opts").Index().Add(rt("Option")),
	)
	f.Line()
	if a.Respond != "" {
		e.doc("New%s returns a client that sends as agent from; opts apply to every call, before the call's own, and replies are read on %q unless a request's options say otherwise.", name, a.Respond)
	} else {
		e.doc("New%s returns a client that sends as agent from; opts apply to every call, before the call's own.", name)
	}
	opts := jen.Id("opts")
	f.Func().Id("New"+name).Params(
		jen.Id("client").Op("*").Add(rt("Client")),
		jen.Id("from").String(),
		jen.Id("opts").Op("...").Add(rt("Option")),
	).Id(name).Block(
		jen.Return(jen.Op("&").Id(impl).Add(keyed(
			field("client", jen.Id("client")),
			field("from", jen.Id("from")),
			field("opts", opts),
		))),
	)
	recv := jen.Id("c").Op("*").Id(impl)
	command := rt("Out").Add(keyed(
		field("Topic", jen.Id(listenConst(a))),
		field("From", jen.Id("c").Dot("from")),
		field("Target", jen.Id(agentIDConst(a))),
	))
	for _, op := range a.Ops {
		f.Line()
		opName := jen.Id(opConst(a, op))
		// Each method applies the call's options after the client's bundle
		// (and, for a request, the agent's respond topic), so the call's
		// own win.
		parts := []jen.Code{jen.Id("c").Dot("opts")}
		if (op.Kind == OpRequest || op.Kind == OpStream) && a.Respond != "" {
			parts = append(parts, jen.Index().Add(rt("Option")).Values(rt("WithReplyTopic").Call(jen.Id(respondConst(a)))))
		}
		merged := jen.Qual("slices", "Concat").Call(append(parts, jen.Id("opts"))...).Op("...")
		var body jen.Code
		switch op.Kind {
		case OpRequest:
			body = rt("Call").Types(e.typ(op.Out)).Call(jen.Id("ctx"), jen.Id("c").Dot("client"), command,
				opName, ctCode(op.CT), jen.Id("in"), merged)
		case OpCommand:
			body = rt("Tell").Call(jen.Id("ctx"), jen.Id("c").Dot("client"), command,
				opName, ctCode(op.CT), jen.Id("in"), merged)
		case OpStream:
			body = rt("CallStream").Types(e.typ(op.Out)).Call(jen.Id("ctx"), jen.Id("c").Dot("client"), command,
				opName, ctCode(op.CT), jen.Id("in"), merged)
		case OpEvent:
			event := rt("Out").Add(keyed(
				field("Kind", jen.Qual(wirePath, "KindEvent")),
				field("Topic", jen.Id(listenConst(a))),
				field("From", jen.Id("c").Dot("from")),
			))
			body = rt("Tell").Call(jen.Id("ctx"), jen.Id("c").Dot("client"), event,
				opName, ctCode(op.CT), jen.Id("in"), merged)
		}
		e.doc("%s implements %s.", op.Method, name)
		f.Func().Params(recv).Id(op.Method).Params(params(op)...).Add(results(op)).Block(jen.Return(body))
	}
}

// agentConfigFields are the fields of the generated constructor's
// runtime.AgentConfig, in the struct's declaration order.
func agentConfigFields(a *Agent, x string, id jen.Code) []jen.Code {
	fields := []jen.Code{field("ID", id), field("Listen", jen.Id(listenConst(a)))}
	if a.Respond != "" {
		fields = append(fields, field("Respond", jen.Id(respondConst(a))))
	}
	if a.Group != "" {
		fields = append(fields, field("Group", jen.Lit(a.Group)))
	}
	return append(fields, field("Card", jen.Id(x+"Card").Call()))
}

// clientMethodDoc documents the client method of op.
func clientMethodDoc(a *Agent, op *Operation) string {
	switch op.Kind {
	case OpRequest:
		return fmt.Sprintf("%s sends operation %q and waits for the typed reply; a failure the agent answers with comes back as a remote *runtime.Error.", op.Method, op.Op)
	case OpStream:
		return fmt.Sprintf("%s sends operation %q and yields the items of the streamed answer as they arrive, in order; a failure ends the iteration with its error (a broken stream's *runtime.Error, the agent's remote *runtime.Error, or the context's).", op.Method, op.Op)
	case OpEvent:
		return fmt.Sprintf("%s publishes event %q on %q from the client's agent.", op.Method, op.Op, a.Listen)
	}
	return fmt.Sprintf("%s sends operation %q without waiting for it to be handled.", op.Method, op.Op)
}

// card emits the agent card: one capability per //laser:handle operation.
// Event handlers are subscriptions, not skills a caller can ask for.
func (e *emitter) card(a *Agent, x string) {
	caps := jen.Index().Qual(wirePath, "CapabilityDescriptor").ValuesFunc(func(g *jen.Group) {
		for _, op := range a.Ops {
			if op.Kind == OpEvent {
				continue
			}
			fields := []jen.Code{
				field("SkillID", jen.Id(opConst(a, op))),
				field("Input", jen.Qual(wirePath, "ContentByType").Call(ctCode(op.CT))),
			}
			if op.Out != nil {
				fields = append(fields, field("Output", jen.Qual(wirePath, "ContentByType").Call(ctCode(op.CT))))
			}
			g.Add(keyed(fields...))
		}
	})
	e.doc("%sCard describes agent %q: one capability per operation it answers, with the content type of its input and output.", x, a.ID)
	e.f.Func().Id(x+"Card").Params().Op("*").Qual(wirePath, "AgentCard").Block(
		jen.Return(jen.Op("&").Qual(wirePath, "AgentCard").Add(keyed(
			field("Name", jen.Id(agentIDConst(a))),
			field("Capabilities", caps),
		))),
	)
}

// operations emits the agent's operation table: what a bridge needs to
// expose each operation elsewhere (an MCP tool, an A2A skill), the JSON
// Schemas of its input and output included (schema.go).
func (e *emitter) operations(a *Agent, x string) {
	kinds := map[OpKind]string{OpRequest: "Request", OpCommand: "Command", OpEvent: "Event", OpStream: "Stream"}
	ops := jen.Index().Add(jen.Qual(operationPath, "Info")).ValuesFunc(func(g *jen.Group) {
		for _, op := range a.Ops {
			fields := []jen.Code{
				field("Agent", jen.Id(agentIDConst(a))),
				field("Name", jen.Id(opConst(a, op))),
				field("Kind", jen.Qual(operationPath, kinds[op.Kind])),
			}
			if op.decl != nil && op.decl.Doc != nil {
				if doc := strings.Join(strings.Fields(op.decl.Doc.Text()), " "); doc != "" {
					fields = append(fields, field("Doc", jen.Lit(doc)))
				}
			}
			fields = append(fields, field("Topic", jen.Id(listenConst(a))))
			if a.Respond != "" {
				fields = append(fields, field("ReplyTopic", jen.Id(respondConst(a))))
			}
			fields = append(fields,
				field("ContentType", ctCode(op.CT)),
				field("Input", jen.Qual(reflectPath, "TypeFor").Types(e.typ(op.In)).Call()),
			)
			if op.Out != nil {
				fields = append(fields, field("Output", jen.Qual(reflectPath, "TypeFor").Types(e.typ(op.Out)).Call()))
			}
			fields = append(fields, field("InputSchema", rawString(schemaJSON(op.In, e.m.docs))))
			if op.Out != nil {
				fields = append(fields, field("OutputSchema", rawString(schemaJSON(op.Out, e.m.docs))))
			}
			g.Add(keyed(fields...))
		}
	})
	e.doc("%sOperations describes the operations of agent %q for bridges such as MCP and A2A: each one's kind, doc comment, topics, Go types and the JSON Schemas of its input and output.", x, a.ID)
	e.f.Func().Id(x + "Operations").Params().Index().Add(jen.Qual(operationPath, "Info")).Block(jen.Return(ops))
}

// rawString spells s as a raw string literal when it can, so a schema reads
// as JSON in the generated file.
func rawString(s string) jen.Code {
	if strings.ContainsAny(s, "`\r") {
		return jen.Lit(s)
	}
	return jen.Op("`" + s + "`")
}

// assertions pin every handler's signature in an interface the agent must
// implement, so adding, removing or editing a handler without regenerating
// fails the build at the top of the generated file with a message naming
// the fix, the method, and the signature it has and the one generated for.
func (e *emitter) assertions(a *Agent) {
	iface := staleName(a)
	e.doc("%s lists the handler signatures this file was generated for. If *%s does not implement it, %s is stale: run go generate.", iface, a.Name, DefaultOutput)
	e.f.Type().Id(iface).InterfaceFunc(func(g *jen.Group) {
		for _, op := range a.Ops {
			results := jen.Error()
			if op.Out != nil && op.Kind != OpStream {
				results = jen.Params(e.typ(op.Out), jen.Error())
			}
			params := append(append([]jen.Code{jen.Op("*").Add(rt("Ctx")), e.typ(op.In)}, historyParam(op)...), recalledParam(op)...)
			if op.Kind == OpStream {
				params = append(params, e.streamParamType(op))
			}
			g.Id(op.Method).Params(params...).Add(results)
		}
	})
	e.f.Line()
	e.f.Var().Id("_").Id(iface).Op("=").Parens(jen.Op("*").Id(a.Name)).Parens(jen.Nil())
}
