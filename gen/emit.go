package gen

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
	pkgs := map[string]string{runtimePath: "runtime", wirePath: "wire", contextPath: "context"}
	if wantsContext(e.m) {
		pkgs[conversationPath] = "conversation"
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
	line := ""
	for _, w := range strings.Fields(fmt.Sprintf(format, args...)) {
		if line != "" && len(line)+1+len(w) > docWidth-3 {
			e.f.Comment(line)
			line = ""
		}
		if line != "" {
			line += " "
		}
		line += w
	}
	if line != "" {
		e.f.Comment(line)
	}
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
	id := jen.Lit(a.ID)

	// Constructor.
	e.doc("New%sAgent returns agent %q serving impl. It listens on %q%s; opts such as runtime.WithTuning and runtime.WithCardPublished adjust the agent.",
		x, a.ID, a.Listen, respondPhrase(a))
	f.Func().Id("New"+x+"Agent").Params(
		jen.Id("client").Op("*").Add(rt("Client")),
		jen.Id("impl").Op("*").Id(a.Name),
		jen.Id("opts").Op("...").Add(rt("AgentOption")),
	).Params(jen.Op("*").Add(rt("Agent")), jen.Error()).Block(
		jen.If(jen.Id("impl").Op("==").Nil()).Block(
			jen.Return(jen.Nil(), jen.Op("&").Add(rt("Error")).Values(jen.Dict{
				jen.Id("Code"): rt("CodeConfig"),
				jen.Id("Msg"):  jen.Lit("agent " + a.ID + " needs an implementation"),
			})),
		),
		jen.Return(jen.Id("client").Dot("NewAgent").Call(rt("AgentConfig").Values(jen.DictFunc(func(d jen.Dict) {
			d[jen.Id("ID")] = id
			d[jen.Id("Listen")] = jen.Lit(a.Listen)
			if a.Respond != "" {
				d[jen.Id("Respond")] = jen.Lit(a.Respond)
			}
			if a.Group != "" {
				d[jen.Id("Group")] = jen.Lit(a.Group)
			}
			d[jen.Id("Handler")] = jen.Id(x + "Handler").Call(jen.Id("impl"))
			d[jen.Id("Card")] = jen.Id(x + "Card").Call()
		})), jen.Id("opts").Op("..."))),
	)
	f.Line()

	// Handler and dispatcher.
	e.doc("%sHandler routes the messages of agent %q to impl's annotated methods by kind and operation; an unknown operation or an undecodable body is rejected (and answered, when the caller waits for a reply).", x, a.ID)
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
							g.Case(jen.Lit(op.Op)).Block(jen.Return(jen.Id("h").Dot(opFunc(op)).Call(jen.Id("c"), jen.Id("m"))))
						}
					}),
				)
			}
		}),
		jen.Return(rt("RejectUnknownOperation").Call(jen.Id("c"), id)),
	)
	for _, op := range a.Ops {
		f.Line()
		e.opFunc(a, dispatcher, op)
	}
	f.Line()
	e.client(a, x)
	f.Line()
	e.card(a, x)
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
	// gets a *RemoteError now instead of waiting for its timeout.
	decodeFailed := jen.Return(jen.Err())
	if op.Kind == OpRequest || op.Kind == OpStream {
		decodeFailed = jen.Return(rt("FailRequest").Call(jen.Id("c"), jen.Err()))
	}
	body := []jen.Code{
		decl,
		jen.If(jen.Err().Op(":=").Add(rt("DecodeInput")).Call(jen.Id("m"), jen.Lit(op.Op), arg, ctCode(op.CT)), jen.Err().Op("!=").Nil()).Block(
			decodeFailed,
		),
	}
	body = append(body, assembleContext(op)...)
	args := []jen.Code{jen.Id("c"), jen.Id("in")}
	if op.Context {
		args = append(args, jen.Id(historyLocal))
	}
	call := jen.Id("h").Dot("impl").Dot(op.Method).Call(args...)
	switch op.Kind {
	case OpStream:
		body = append(body, e.streamBody(op, args)...)
	case OpRequest:
		body = append(body,
			jen.List(jen.Id("out"), jen.Err()).Op(":=").Add(call),
			jen.If(jen.Err().Op("!=").Nil()).Block(jen.Return(rt("FailRequest").Call(jen.Id("c"), jen.Err()))),
			jen.Return(rt("RespondValue").Call(jen.Id("c"), jen.Id("out"), ctCode(op.CT))),
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

// client emits the typed client.
func (e *emitter) client(a *Agent, x string) {
	f := e.f
	name := x + "Client"
	e.doc("%s calls agent %q with typed messages.", name, a.ID)
	f.Type().Id(name).Struct(
		jen.Id("client").Op("*").Add(rt("Client")),
		jen.Id("from").String(),
		jen.Id("opts").Index().Add(rt("SendOption")),
	)
	f.Line()
	if a.Respond != "" {
		e.doc("New%s returns a client that sends as agent from; opts apply to every call, before the call's own, and replies are read on %q unless a request's options say otherwise.", name, a.Respond)
	} else {
		e.doc("New%s returns a client that sends as agent from; opts apply to every call, before the call's own.", name)
	}
	var opts jen.Code = jen.Id("opts")
	f.Func().Id("New"+name).Params(
		jen.Id("client").Op("*").Add(rt("Client")),
		jen.Id("from").String(),
		jen.Id("opts").Op("...").Add(rt("SendOption")),
	).Op("*").Id(name).Block(
		jen.Return(jen.Op("&").Id(name).Values(jen.Dict{
			jen.Id("client"): jen.Id("client"),
			jen.Id("from"):   jen.Id("from"),
			jen.Id("opts"):   opts,
		})),
	)
	recv := jen.Id("c").Op("*").Id(name)
	command := rt("Command").Values(jen.Dict{
		jen.Id("Topic"):  jen.Lit(a.Listen),
		jen.Id("From"):   jen.Id("c").Dot("from"),
		jen.Id("Target"): jen.Lit(a.ID),
	})
	for _, op := range a.Ops {
		f.Line()
		// Each method takes the options its kind honours: a request's
		// RequestOptions (a timeout, a reply topic), a command's
		// CommandOptions (a deadline), an event's SendOptions.
		optType := rt("SendOption")
		merged := rt("MergeSendOptions").Call(jen.Id("c").Dot("opts"), jen.Id("opts")).Op("...")
		switch op.Kind {
		case OpRequest, OpStream:
			optType = rt("RequestOption")
			merged = rt("MergeRequestOptions").Call(jen.Id("c").Dot("opts"), jen.Lit(a.Respond), jen.Id("opts")).Op("...")
		case OpCommand:
			optType = rt("CommandOption")
			merged = rt("MergeCommandOptions").Call(jen.Id("c").Dot("opts"), jen.Id("opts")).Op("...")
		}
		params := []jen.Code{
			jen.Id("ctx").Qual(contextPath, "Context"),
			jen.Id("in").Add(e.typ(op.In)),
			jen.Id("opts").Op("...").Add(optType),
		}
		switch op.Kind {
		case OpRequest:
			e.doc("%s sends operation %q and waits for the typed reply; a failure the agent answers with comes back as a *runtime.RemoteError.", op.Method, op.Op)
			f.Func().Params(recv).Id(op.Method).Params(params...).Params(e.typ(op.Out), jen.Error()).Block(
				jen.Return(rt("Call").Types(e.typ(op.Out)).Call(jen.Id("ctx"), jen.Id("c").Dot("client"), command,
					jen.Lit(op.Op), ctCode(op.CT), jen.Id("in"), merged)),
			)
		case OpCommand:
			e.doc("%s sends operation %q without waiting for it to be handled.", op.Method, op.Op)
			f.Func().Params(recv).Id(op.Method).Params(params...).Error().Block(
				jen.Return(rt("Tell").Call(jen.Id("ctx"), jen.Id("c").Dot("client"), command,
					jen.Lit(op.Op), ctCode(op.CT), jen.Id("in"), merged)),
			)
		case OpStream:
			e.streamClientMethod(recv, op, params, command, merged)
		case OpEvent:
			e.doc("%s publishes event %q on %q from the client's agent.", op.Method, op.Op, a.Listen)
			f.Func().Params(recv).Id(op.Method).Params(params...).Error().Block(
				jen.Return(rt("EmitEvent").Call(jen.Id("ctx"), jen.Id("c").Dot("client"), jen.Lit(a.Listen), jen.Id("c").Dot("from"),
					jen.Lit(op.Op), ctCode(op.CT), jen.Id("in"), merged)),
			)
		}
	}
}

// card emits the agent card: one capability per //laser:handle operation.
// Event handlers are subscriptions, not skills a caller can ask for.
func (e *emitter) card(a *Agent, x string) {
	caps := jen.Index().Qual(wirePath, "CapabilityDescriptor").ValuesFunc(func(g *jen.Group) {
		for _, op := range a.Ops {
			if op.Kind == OpEvent {
				continue
			}
			g.Values(jen.DictFunc(func(d jen.Dict) {
				d[jen.Id("SkillID")] = jen.Lit(op.Op)
				d[jen.Id("Input")] = jen.Qual(wirePath, "ContentByType").Call(ctCode(op.CT))
				if op.Out != nil {
					d[jen.Id("Output")] = jen.Qual(wirePath, "ContentByType").Call(ctCode(op.CT))
				}
			}))
		}
	})
	e.doc("%sCard describes agent %q: one capability per operation it answers, with the content type of its input and output.", x, a.ID)
	e.f.Func().Id(x+"Card").Params().Op("*").Qual(wirePath, "AgentCard").Block(
		jen.Return(jen.Op("&").Qual(wirePath, "AgentCard").Values(jen.DictFunc(func(d jen.Dict) {
			d[jen.Id("Name")] = jen.Lit(a.ID)
			d[jen.Id("Capabilities")] = caps
		}))),
	)
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
			params := append([]jen.Code{jen.Op("*").Add(rt("Ctx")), e.typ(op.In)}, historyParam(op)...)
			if op.Kind == OpStream {
				params = append(params, e.streamParamType(op))
			}
			g.Id(op.Method).Params(params...).Add(results)
		}
	})
	e.f.Line()
	e.f.Var().Id("_").Id(iface).Op("=").Parens(jen.Op("*").Id(a.Name)).Parens(jen.Nil())
}
