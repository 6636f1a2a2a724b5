package generator

import (
	"fmt"
	"go/ast"
	"go/token"
	"go/types"
	"path/filepath"
	"sort"
	"strings"
)

// OpKind is how an operation is called.
type OpKind uint8

// Operation kinds.
const (
	// OpRequest is a //laser:handle method with an output: the caller waits
	// for the typed reply.
	OpRequest OpKind = iota + 1
	// OpCommand is a //laser:handle method without an output: fire and forget.
	OpCommand
	// OpEvent is a //laser:event method: it handles AGDX events.
	OpEvent
	// OpStream is a //laser:handle method with a *runtime.Stream parameter:
	// it answers with a chunk stream the caller ranges over (stream.go).
	OpStream
)

func (k OpKind) String() string {
	switch k {
	case OpRequest:
		return "request"
	case OpCommand:
		return "command"
	case OpEvent:
		return "event"
	case OpStream:
		return "stream"
	}
	return fmt.Sprintf("OpKind(%d)", uint8(k))
}

// ContentType is a body encoding the generator supports.
type ContentType string

// Supported content types; CBOR is the default.
const (
	CBOR ContentType = "cbor"
	JSON ContentType = "json"
)

// Model is what the generator understood of a package.
type Model struct {
	PkgName string
	PkgPath string
	Agents  []*Agent
	// Files are the names of the files holding the agents' directives,
	// relative to the package directory, sorted.
	Files []string

	// docs are the doc comments of the package's types and fields, which
	// the generated JSON Schemas carry as descriptions.
	docs docs
}

// Agent is a struct type annotated with //laser:agent.
type Agent struct {
	// Name is the Go type name.
	Name    string
	Obj     *types.TypeName
	Pos     token.Pos // the type name
	DirPos  token.Pos // the directive's name
	ID      string
	Listen  string
	Respond string
	Group   string
	CT      ContentType
	Ops     []*Operation
	// Default is the operation a command without one is routed to: the
	// one default= names, else the agent's only //laser:handle operation;
	// nil when neither exists (such a command is then rejected).
	Default *Operation

	fields map[string]directiveField
}

// Operation is an annotated method of an agent.
type Operation struct {
	Kind OpKind
	// Op is the operation name messages carry.
	Op string
	CT ContentType
	// Method is the Go method name.
	Method string
	// In is the input parameter's type as written (possibly a pointer).
	In types.Type
	// Out is the output type of a request, or the item type of a stream;
	// nil otherwise.
	Out types.Type
	// PointerRecv is set when the method has a pointer receiver.
	PointerRecv bool
	Pos         token.Pos // the method name
	InPos       token.Pos
	OutPos      token.Pos
	OpPos       token.Pos // the op value in the directive
	DirPos      token.Pos

	ctPos token.Pos // the ct value, when the directive has one

	// Context is set when the method takes a conversation.History, which
	// the dispatch assembles under ContextPolicy (see context.go).
	Context       bool
	ContextPolicy ContextPolicy
	contextValue  string
	contextPos    token.Pos // the context value, when the directive has one

	// Effect and Data are the classes the handler declares for its
	// effects (effect= and data=, see claims.go).
	Effect, Data claim
	// Memory is set when the method takes a memory.Recalled, which the
	// dispatch recalls under MemoryQuery (see memory.go).
	Memory      bool
	MemoryQuery MemoryQuery
	memoryValue string
	memoryPos   token.Pos // the memory value, when the directive has one

	sig  *types.Signature
	decl *ast.FuncDecl
	name string // directive name: handle or event
}

// directiveField is a directive field with absolute positions.
type directiveField struct {
	Value    string
	KeyPos   token.Pos
	ValuePos token.Pos
}

// located is a parsed directive with absolute positions.
type located struct {
	Directive
	comment *ast.Comment
	fields  map[string]directiveField
}

func (d *located) pos(off int) token.Pos { return d.comment.Slash + token.Pos(off) }

// collector walks a package's syntax and builds the model, reporting every
// problem it meets.
type collector struct {
	l      *loaded
	diags  []Diagnostic
	agents map[*types.TypeName]*Agent
	// rejected are types whose //laser:agent was reported as unusable;
	// their methods' directives are not reported again.
	rejected map[*types.TypeName]bool
	model    *Model
	// pending are method directives, resolved once every agent is known.
	pending []pendingOp
}

type pendingOp struct {
	d    *located
	decl *ast.FuncDecl
	fn   *types.Func
}

func (c *collector) report(pos token.Pos, p *Problem, format string, args ...any) {
	c.diags = append(c.diags, Diagnostic{
		Pos:     relativePosition(c.l.fset.Position(pos), c.l.dir),
		Problem: p,
		Detail:  fmt.Sprintf(format, args...),
	})
}

func newCollector(l *loaded) *collector {
	return &collector{
		l:        l,
		agents:   make(map[*types.TypeName]*Agent),
		rejected: make(map[*types.TypeName]bool),
		model:    &Model{PkgName: l.pkg.Types.Name(), PkgPath: l.pkg.Types.Path()},
	}
}

// collect builds the model of the package from its directives.
func (c *collector) collect() {
	l := c.l
	files := append([]*ast.File(nil), l.pkg.Syntax...)
	sort.Slice(files, func(i, j int) bool {
		return l.fset.Position(files[i].Pos()).Filename < l.fset.Position(files[j].Pos()).Filename
	})
	for _, f := range files {
		c.file(f)
		if why := c.l.constrained(f); why != "" {
			c.eachDirective(f, func(pos token.Pos, name string) {
				c.report(pos, ErrConstrainedFile, "//laser:%s is in %s", name, why)
			})
		}
	}
	for _, f := range c.l.unread() {
		c.eachDirective(f, func(pos token.Pos, name string) {
			c.report(pos, ErrUnreadFile, "//laser:%s is in %s, a test file or one excluded from this build", name, filepath.Base(c.l.fset.Position(pos).Filename))
		})
	}
	for _, p := range c.pending {
		c.method(p)
	}
	for _, a := range c.model.Agents {
		sort.SliceStable(a.Ops, func(i, j int) bool { return c.less(a.Ops[i].Pos, a.Ops[j].Pos) })
	}
	sort.SliceStable(c.model.Agents, func(i, j int) bool { return c.less(c.model.Agents[i].Pos, c.model.Agents[j].Pos) })
	c.model.Files = c.sourceFiles()
}

// sourceFiles lists the files holding the model's directives.
func (c *collector) sourceFiles() []string {
	seen := make(map[string]bool)
	add := func(pos token.Pos) { seen[filepath.Base(c.l.fset.Position(pos).Filename)] = true }
	for _, a := range c.model.Agents {
		add(a.DirPos)
		for _, op := range a.Ops {
			add(op.DirPos)
		}
	}
	files := make([]string, 0, len(seen))
	for f := range seen {
		files = append(files, f)
	}
	sort.Strings(files)
	return files
}

// eachDirective calls fn for every //laser: comment of f.
func (c *collector) eachDirective(f *ast.File, fn func(pos token.Pos, name string)) {
	for _, g := range f.Comments {
		for _, cm := range g.List {
			if d, _, ok := ParseDirective(cm.Text); ok {
				fn(cm.Slash, d.Name)
			}
		}
	}
}

// less orders positions by file name, then offset, so output does not depend
// on how the loader ordered files.
func (c *collector) less(a, b token.Pos) bool {
	pa, pb := c.l.fset.Position(a), c.l.fset.Position(b)
	if pa.Filename != pb.Filename {
		return pa.Filename < pb.Filename
	}
	return pa.Offset < pb.Offset
}

// file visits the declarations of f and then reports every directive that
// sat anywhere else.
func (c *collector) file(f *ast.File) {
	used := make(map[*ast.CommentGroup]bool)
	for _, decl := range f.Decls {
		switch decl := decl.(type) {
		case *ast.GenDecl:
			if decl.Tok != token.TYPE {
				used[decl.Doc] = true
				c.misplaced(decl.Doc, fmt.Sprintf("a %s declaration", decl.Tok))
				for _, s := range decl.Specs {
					if vs, ok := s.(*ast.ValueSpec); ok {
						used[vs.Doc] = true
						c.misplaced(vs.Doc, fmt.Sprintf("a %s declaration", decl.Tok))
					}
				}
				continue
			}
			if decl.Lparen.IsValid() {
				used[decl.Doc] = true
				c.misplaced(decl.Doc, "the doc comment of a grouped type declaration; put it on the type inside the group")
			}
			for _, s := range decl.Specs {
				ts := s.(*ast.TypeSpec)
				doc := ts.Doc
				if doc == nil && !decl.Lparen.IsValid() {
					doc = decl.Doc
				}
				used[ts.Doc], used[decl.Doc] = true, true
				c.typeSpec(ts, doc)
			}
		case *ast.FuncDecl:
			used[decl.Doc] = true
			c.funcDecl(decl)
		}
	}
	for _, g := range f.Comments {
		if !used[g] {
			c.misplaced(g, "a comment that documents no declaration")
		}
		for _, cm := range g.List {
			if name := spacedDirective(cm.Text); name != "" {
				c.report(cm.Slash, ErrSpacedDirective, "%q is an ordinary comment, so it generates nothing; did you mean //laser:%s?",
					strings.Fields(cm.Text)[0]+" "+strings.Fields(cm.Text)[1], name)
			}
		}
	}
}

// hasSpacedDirective reports whether doc holds a near miss of //laser:name.
func hasSpacedDirective(doc *ast.CommentGroup, name string) bool {
	if doc == nil {
		return false
	}
	for _, cm := range doc.List {
		if spacedDirective(cm.Text) == name {
			return true
		}
	}
	return false
}

// directives parses the laser directives of a doc comment.
func (c *collector) directives(doc *ast.CommentGroup) []*located {
	if doc == nil {
		return nil
	}
	var out []*located
	for _, cm := range doc.List {
		d, errs, ok := ParseDirective(cm.Text)
		if !ok {
			continue
		}
		ld := &located{Directive: d, comment: cm, fields: make(map[string]directiveField, len(d.Fields))}
		for _, e := range errs {
			c.report(ld.pos(e.Off), e.Problem, "%s", e.Detail)
		}
		for _, f := range d.Fields {
			ld.fields[f.Key] = directiveField{Value: f.Value, KeyPos: ld.pos(f.KeyOff), ValuePos: ld.pos(f.ValueOff)}
		}
		if _, known := directiveSchemas[d.Name]; known {
			out = append(out, ld)
		}
	}
	return out
}

func (c *collector) misplaced(doc *ast.CommentGroup, where string) {
	for _, d := range c.directives(doc) {
		c.report(d.pos(d.NameOff), ErrMisplaced, "//laser:%s is in %s", d.Name, where)
	}
}

func (c *collector) typeSpec(ts *ast.TypeSpec, doc *ast.CommentGroup) {
	var agentDir *located
	for _, d := range c.directives(doc) {
		switch d.Name {
		case "agent":
			if agentDir != nil {
				c.report(d.pos(d.NameOff), ErrRepeatedDirective, "type %s already has a //laser:agent", ts.Name.Name)
				continue
			}
			agentDir = d
		default:
			c.report(d.pos(d.NameOff), ErrMisplaced, "//laser:%s is on type %s; put it on a method of an agent type", d.Name, ts.Name.Name)
		}
	}
	obj, _ := c.l.pkg.TypesInfo.Defs[ts.Name].(*types.TypeName)
	if agentDir == nil {
		if obj != nil && hasSpacedDirective(doc, "agent") {
			// Reported as a near miss; its methods' directives are not
			// reported again as belonging to no agent.
			c.rejected[obj] = true
		}
		return
	}
	if obj == nil {
		return
	}
	_, isStruct := obj.Type().Underlying().(*types.Struct)
	switch {
	case ts.Assign.IsValid():
		c.report(agentDir.pos(agentDir.NameOff), ErrMisplaced, "//laser:agent is on alias %s; put it on a struct type declaration", ts.Name.Name)
		return
	case ts.TypeParams != nil && ts.TypeParams.NumFields() > 0:
		c.report(ts.Name.Pos(), ErrGenericAgent, "type %s has type parameters", ts.Name.Name)
		c.rejected[obj] = true
		return
	case !isStruct:
		c.report(agentDir.pos(agentDir.NameOff), ErrMisplaced, "//laser:agent is on type %s, which is not a struct", ts.Name.Name)
		c.rejected[obj] = true
		return
	}
	a := &Agent{Name: ts.Name.Name, Obj: obj, Pos: ts.Name.Pos(), DirPos: agentDir.pos(agentDir.NameOff), CT: CBOR, fields: agentDir.fields}
	a.ID = agentDir.fields["id"].Value
	a.Listen = agentDir.fields["listen"].Value
	a.Respond = agentDir.fields["respond"].Value
	a.Group = agentDir.fields["group"].Value
	c.agents[obj] = a
	c.model.Agents = append(c.model.Agents, a)
}

func (c *collector) funcDecl(fd *ast.FuncDecl) {
	var opDir *located
	for _, d := range c.directives(fd.Doc) {
		switch {
		case d.Name == "agent":
			c.report(d.pos(d.NameOff), ErrMisplaced, "//laser:agent is on func %s; put it on a struct type", fd.Name.Name)
		case fd.Recv == nil || len(fd.Recv.List) != 1:
			c.report(d.pos(d.NameOff), ErrMisplaced, "//laser:%s is on func %s, which is not a method", d.Name, fd.Name.Name)
		case fd.Name.Name == "_":
			c.report(d.pos(d.NameOff), ErrMisplaced, "//laser:%s is on a blank method, which cannot be called; give it a name", d.Name)
		case opDir != nil:
			c.report(d.pos(d.NameOff), ErrRepeatedDirective, "method %s already has a //laser:%s", fd.Name.Name, opDir.Name)
		default:
			opDir = d
		}
	}
	if opDir == nil {
		return
	}
	fn, _ := c.l.pkg.TypesInfo.Defs[fd.Name].(*types.Func)
	if fn == nil {
		return
	}
	c.pending = append(c.pending, pendingOp{d: opDir, decl: fd, fn: fn})
}

// method attaches an annotated method to its agent; its shape is checked later.
func (c *collector) method(p pendingOp) {
	sig := p.fn.Type().(*types.Signature)
	if sig.Recv() == nil {
		return // no receiver; funcDecl reported it
	}
	recv := sig.Recv().Type()
	ptr := false
	if pt, ok := recv.(*types.Pointer); ok {
		recv, ptr = pt.Elem(), true
	}
	named, ok := types.Unalias(recv).(*types.Named)
	if !ok {
		return // an invalid receiver; the load reports it
	}
	a := c.agents[named.Origin().Obj()]
	if a == nil && c.rejected[named.Origin().Obj()] {
		return
	}
	if a == nil {
		c.report(p.d.pos(p.d.NameOff), ErrNoAgent, "method %s.%s has //laser:%s but type %s has no //laser:agent",
			named.Obj().Name(), p.fn.Name(), p.d.Name, named.Obj().Name())
		return
	}
	op := &Operation{
		Kind:        OpCommand,
		Op:          p.d.fields["op"].Value,
		Method:      p.fn.Name(),
		PointerRecv: ptr,
		Pos:         p.decl.Name.Pos(),
		OpPos:       p.d.fields["op"].ValuePos,
		DirPos:      p.d.pos(p.d.NameOff),
		sig:         sig,
		decl:        p.decl,
		name:        p.d.Name,
	}
	if p.d.Name == "event" {
		op.Kind = OpEvent
	}
	if _, ok := p.d.fields["op"]; !ok {
		op.OpPos = op.DirPos
	}
	if f, ok := p.d.fields["ct"]; ok {
		op.CT, op.ctPos = ContentType(f.Value), f.ValuePos
	}
	if f, ok := p.d.fields["context"]; ok {
		op.contextValue, op.contextPos = f.Value, f.ValuePos
	}
	if f, ok := p.d.fields["effect"]; ok {
		op.Effect = claim{f.Value, f.ValuePos}
	}
	if f, ok := p.d.fields["data"]; ok {
		op.Data = claim{f.Value, f.ValuePos}
	}
	if f, ok := p.d.fields["memory"]; ok {
		op.memoryValue, op.memoryPos = f.Value, f.ValuePos
	}
	a.Ops = append(a.Ops, op)
}
