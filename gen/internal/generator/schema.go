package generator

import (
	"encoding/json"
	"go/ast"
	"go/constant"
	"go/types"
	"reflect"
	"sort"
	"strconv"
	"strings"

	"golang.org/x/tools/go/packages"
)

// The JSON Schema of every operation's input and output is generated here
// from the Go types, the way encoding/json reads and writes them, so a
// bridge (MCP tools, A2A skills) advertises exactly what the agent decodes:
// json tag names, required unless omitempty, omitzero or a pointer, nested
// structs inline, slices, maps and pointers nullable (nil encodes as null),
// time.Time as a date-time string, a named type with constants of its own
// as an enum, and doc comments of the package's types and fields as
// descriptions.

// schemaDialect is the JSON Schema draft the generated schemas declare.
const schemaDialect = "https://json-schema.org/draft/2020-12/schema"

// jsonSchema is one schema node; field order is the generated key order.
type jsonSchema struct {
	Dialect              string                 `json:"$schema,omitempty"`
	Type                 any                    `json:"type,omitempty"`
	Format               string                 `json:"format,omitempty"`
	ContentEncoding      string                 `json:"contentEncoding,omitempty"`
	Description          string                 `json:"description,omitempty"`
	Enum                 []any                  `json:"enum,omitempty"`
	Minimum              *int                   `json:"minimum,omitempty"`
	Items                *jsonSchema            `json:"items,omitempty"`
	MinItems             *int64                 `json:"minItems,omitempty"`
	MaxItems             *int64                 `json:"maxItems,omitempty"`
	Properties           map[string]*jsonSchema `json:"properties,omitempty"`
	Required             []string               `json:"required,omitempty"`
	AdditionalProperties *jsonSchema            `json:"additionalProperties,omitempty"`
}

// docs maps the package's type names and struct fields to their doc
// comments, one line each.
type docs map[types.Object]string

// collectDocs reads the doc comments of every type and struct field the
// package declares.
func collectDocs(pkg *packages.Package) docs {
	d := make(docs)
	text := func(groups ...*ast.CommentGroup) string {
		for _, g := range groups {
			if s := strings.Join(strings.Fields(g.Text()), " "); s != "" {
				return s
			}
		}
		return ""
	}
	for _, f := range pkg.Syntax {
		ast.Inspect(f, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.GenDecl:
				for _, s := range n.Specs {
					ts, ok := s.(*ast.TypeSpec)
					if !ok {
						continue
					}
					groups := []*ast.CommentGroup{ts.Doc}
					if len(n.Specs) == 1 {
						groups = append(groups, n.Doc)
					}
					if obj := pkg.TypesInfo.Defs[ts.Name]; obj != nil {
						if s := text(nonNil(groups)...); s != "" {
							d[obj] = s
						}
					}
				}
			case *ast.Field:
				s := text(nonNil([]*ast.CommentGroup{n.Doc, n.Comment})...)
				for _, name := range n.Names {
					if obj := pkg.TypesInfo.Defs[name]; obj != nil && s != "" {
						d[obj] = s
					}
				}
			}
			return true
		})
	}
	return d
}

func nonNil(gs []*ast.CommentGroup) []*ast.CommentGroup {
	out := gs[:0:0]
	for _, g := range gs {
		if g != nil {
			out = append(out, g)
		}
	}
	return out
}

// schemaJSON is the JSON Schema of t as compact JSON. A pointer at the top
// is its element: the dispatcher decodes into the value either way, and a
// tool's input must be an object, not null.
func schemaJSON(t types.Type, d docs) string {
	if p, ok := types.Unalias(t).(*types.Pointer); ok {
		t = p.Elem()
	}
	s := (&schemaBuilder{docs: d, open: map[*types.TypeName]bool{}}).of(t)
	s.Dialect = schemaDialect
	b, err := json.Marshal(s)
	if err != nil {
		panic("lasergen: a generated schema does not encode: " + err.Error()) // only strings, ints and nodes
	}
	return string(b)
}

type schemaBuilder struct {
	docs docs
	// open are the named types being expanded: a type met again inside
	// itself is recursive and described, not expanded forever.
	open map[*types.TypeName]bool
}

func (b *schemaBuilder) of(t types.Type) *jsonSchema {
	switch t := t.(type) {
	case *types.Alias:
		return b.of(types.Unalias(t))
	case *types.Named:
		return b.named(t)
	case *types.Pointer:
		return nullable(b.of(t.Elem()))
	case *types.Slice:
		if isByte(t.Elem()) {
			return nullable(&jsonSchema{Type: "string", ContentEncoding: "base64"})
		}
		return nullable(&jsonSchema{Type: "array", Items: b.of(t.Elem())})
	case *types.Array:
		n := t.Len()
		return &jsonSchema{Type: "array", Items: b.of(t.Elem()), MinItems: &n, MaxItems: &n}
	case *types.Map:
		return nullable(&jsonSchema{Type: "object", AdditionalProperties: b.of(t.Elem())})
	case *types.Basic:
		return basic(t)
	case *types.Struct:
		return b.structOf(t)
	}
	return &jsonSchema{} // interfaces and the like: any JSON value
}

// named is the schema of a named type: the well-known ones by their JSON
// form, the others by their underlying type, with the type's doc and enum.
func (b *schemaBuilder) named(t *types.Named) *jsonSchema {
	obj := t.Obj()
	if obj.Pkg() != nil {
		switch obj.Pkg().Path() + "." + obj.Name() {
		case "time.Time":
			return &jsonSchema{Type: "string", Format: "date-time"}
		case "time.Duration":
			return &jsonSchema{Type: "integer", Description: "a duration in nanoseconds"}
		case "encoding/json.RawMessage":
			return &jsonSchema{}
		}
	}
	switch {
	case hasMethod(t, "MarshalJSON"):
		return &jsonSchema{Description: b.docs[obj]} // its own JSON form: any value
	case hasMethod(t, "MarshalText"):
		return &jsonSchema{Type: "string", Description: b.docs[obj]}
	}
	if b.open[obj] {
		return &jsonSchema{Description: "a " + obj.Name() + " (recursive)"}
	}
	b.open[obj] = true
	defer delete(b.open, obj)
	s := b.of(t.Underlying())
	if doc := b.docs[obj]; doc != "" && s.Description == "" {
		s.Description = doc
	}
	s.Enum = enumOf(t)
	return s
}

// structOf is an object with one property per field encoding/json writes.
func (b *schemaBuilder) structOf(st *types.Struct) *jsonSchema {
	s := &jsonSchema{Type: "object", Properties: map[string]*jsonSchema{}}
	b.fields(st, s)
	sort.Strings(s.Required)
	return s
}

func (b *schemaBuilder) fields(st *types.Struct, s *jsonSchema) {
	for i := range st.NumFields() {
		f := st.Field(i)
		name, opts, _ := strings.Cut(reflect.StructTag(st.Tag(i)).Get("json"), ",")
		if name == "-" && opts == "" {
			continue
		}
		if f.Embedded() && name == "" {
			if inner, ok := embeddedStruct(f.Type()); ok {
				if f.Exported() || !isNamed(f.Type()) {
					b.fields(inner, s)
				}
				continue
			}
		}
		if !f.Exported() {
			continue
		}
		if name == "" {
			name = f.Name()
		}
		fs := b.of(f.Type())
		if hasOpt(opts, "string") {
			fs = &jsonSchema{Type: "string", Description: fs.Description}
		}
		if doc := b.docs[f]; doc != "" {
			fs.Description = doc
		}
		s.Properties[name] = fs
		_, pointer := f.Type().Underlying().(*types.Pointer)
		if !pointer && !hasOpt(opts, "omitempty") && !hasOpt(opts, "omitzero") {
			s.Required = append(s.Required, name)
		}
	}
}

func embeddedStruct(t types.Type) (*types.Struct, bool) {
	if p, ok := t.Underlying().(*types.Pointer); ok {
		t = p.Elem()
	}
	st, ok := t.Underlying().(*types.Struct)
	return st, ok
}

func isNamed(t types.Type) bool {
	if p, ok := t.(*types.Pointer); ok {
		t = p.Elem()
	}
	_, ok := types.Unalias(t).(*types.Named)
	return ok
}

func hasOpt(opts, want string) bool {
	for o := range strings.SplitSeq(opts, ",") {
		if o == want {
			return true
		}
	}
	return false
}

func hasMethod(t *types.Named, name string) bool {
	for _, typ := range []types.Type{t, types.NewPointer(t)} {
		if obj, _, _ := types.LookupFieldOrMethod(typ, true, t.Obj().Pkg(), name); obj != nil {
			if _, ok := obj.(*types.Func); ok {
				return true
			}
		}
	}
	return false
}

func isByte(t types.Type) bool {
	b, ok := types.Unalias(t).Underlying().(*types.Basic)
	return ok && b.Kind() == types.Byte
}

func basic(t *types.Basic) *jsonSchema {
	info := t.Info()
	switch {
	case info&types.IsBoolean != 0:
		return &jsonSchema{Type: "boolean"}
	case info&types.IsUnsigned != 0:
		zero := 0
		return &jsonSchema{Type: "integer", Minimum: &zero}
	case info&types.IsInteger != 0:
		return &jsonSchema{Type: "integer"}
	case info&types.IsFloat != 0:
		return &jsonSchema{Type: "number"}
	case info&types.IsString != 0:
		return &jsonSchema{Type: "string"}
	}
	return &jsonSchema{}
}

// nullable lets s also be null: encoding/json writes a nil pointer, slice
// or map so.
func nullable(s *jsonSchema) *jsonSchema {
	switch typ := s.Type.(type) {
	case string:
		s.Type = []string{typ, "null"}
	}
	if s.Enum != nil {
		s.Enum = append(s.Enum, nil)
	}
	return s
}

// enumOf lists the constants of type t its package declares, in source
// order: a named type with a fixed set of values. Nil when there are none.
func enumOf(t *types.Named) []any {
	pkg := t.Obj().Pkg()
	if pkg == nil {
		return nil
	}
	if _, ok := t.Underlying().(*types.Basic); !ok {
		return nil
	}
	var consts []*types.Const
	scope := pkg.Scope()
	for _, name := range scope.Names() {
		if c, ok := scope.Lookup(name).(*types.Const); ok && types.Identical(c.Type(), t) {
			consts = append(consts, c)
		}
	}
	sort.Slice(consts, func(i, j int) bool { return consts[i].Pos() < consts[j].Pos() })
	var out []any
	for _, c := range consts {
		v := c.Val()
		switch v.Kind() {
		case constant.String:
			out = append(out, constant.StringVal(v))
		case constant.Int:
			if n, ok := constant.Int64Val(v); ok {
				out = append(out, n)
			} else {
				out = append(out, json.Number(v.ExactString()))
			}
		case constant.Float:
			f, _ := constant.Float64Val(v)
			out = append(out, json.Number(strconv.FormatFloat(f, 'g', -1, 64)))
		case constant.Bool:
			out = append(out, constant.BoolVal(v))
		}
	}
	if len(out) == 0 {
		return nil
	}
	return dedupe(out)
}

// dedupe drops repeated values (two constants may share one), keeping the
// first.
func dedupe(vs []any) []any {
	seen := map[any]bool{}
	out := vs[:0]
	for _, v := range vs {
		if !seen[v] {
			seen[v] = true
			out = append(out, v)
		}
	}
	return out
}
