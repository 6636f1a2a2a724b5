package gen_test

import (
	"go/ast"
	"go/constant"
	"go/token"
	"go/types"
	"path/filepath"
	"strconv"
	"testing"

	"golang.org/x/tools/go/packages"

	"github.com/lasergo/laser/gen"
)

// generatedFiles type-checks the committed generated files of the module
// (the examples and the generator's end-to-end agent).
func generatedFiles(t *testing.T) []generatedFile {
	t.Helper()
	root := repoRoot(t)
	cfg := &packages.Config{
		Dir:  root,
		Mode: packages.NeedName | packages.NeedFiles | packages.NeedSyntax | packages.NeedTypes | packages.NeedTypesInfo,
	}
	pkgs, err := packages.Load(cfg, "./examples/...", "./gen/internal/e2eagent")
	if err != nil {
		t.Fatal(err)
	}
	var files []generatedFile
	for _, p := range pkgs {
		for _, e := range p.Errors {
			t.Fatalf("%s: %v", p.PkgPath, e)
		}
		for _, f := range p.Syntax {
			name := p.Fset.Position(f.Pos()).Filename
			if filepath.Base(name) == gen.DefaultOutput {
				files = append(files, generatedFile{name: name, file: f, info: p.TypesInfo, fset: p.Fset})
			}
		}
	}
	if len(files) < 3 {
		t.Fatalf("found %d generated files, want the examples' and e2eagent's", len(files))
	}
	return files
}

type generatedFile struct {
	name string
	file *ast.File
	info *types.Info
	fset *token.FileSet
}

// eachFuncBody calls fn with every function of the file.
func (g generatedFile) eachFuncBody(fn func(ast.Node)) {
	for _, d := range g.file.Decls {
		if fd, ok := d.(*ast.FuncDecl); ok {
			fn(fd.Body)
		}
	}
}

// TestGeneratedLiteralsInDeclarationOrder checks that every keyed struct
// literal the generator writes lists its fields in the struct's declaration
// order, as a person would write them.
func TestGeneratedLiteralsInDeclarationOrder(t *testing.T) {
	checked := 0
	for _, g := range generatedFiles(t) {
		g.eachFuncBody(func(body ast.Node) {
			ast.Inspect(body, func(n ast.Node) bool {
				lit, ok := n.(*ast.CompositeLit)
				if !ok {
					return true
				}
				st, ok := g.info.TypeOf(lit).Underlying().(*types.Struct)
				if !ok {
					return true
				}
				index := make(map[string]int)
				for i := range st.NumFields() {
					index[st.Field(i).Name()] = i
				}
				last := -1
				for _, el := range lit.Elts {
					kv, ok := el.(*ast.KeyValueExpr)
					if !ok {
						continue
					}
					name := kv.Key.(*ast.Ident).Name
					if index[name] < last {
						t.Errorf("%s: field %s of %s is out of declaration order", g.fset.Position(kv.Pos()), name, g.info.TypeOf(lit))
					}
					last = index[name]
				}
				checked++
				return true
			})
		})
	}
	if checked == 0 {
		t.Fatal("no struct literal checked")
	}
}

// TestGeneratedNamesAreConstants checks that the dispatcher, the clients and
// the cards spell agent ids, topics and operation names by the generated
// constants, never by repeating the string.
func TestGeneratedNamesAreConstants(t *testing.T) {
	for _, g := range generatedFiles(t) {
		names := make(map[string]string) // value -> constant
		for _, d := range g.file.Decls {
			gd, ok := d.(*ast.GenDecl)
			if !ok || gd.Tok != token.CONST {
				continue
			}
			for _, spec := range gd.Specs {
				for _, id := range spec.(*ast.ValueSpec).Names {
					if c, ok := g.info.Defs[id].(*types.Const); ok && c.Val().Kind() == constant.String {
						names[constant.StringVal(c.Val())] = id.Name
					}
				}
			}
		}
		if len(names) == 0 {
			t.Fatalf("%s declares no name constants", g.name)
		}
		g.eachFuncBody(func(body ast.Node) {
			ast.Inspect(body, func(n ast.Node) bool {
				if lit, ok := n.(*ast.BasicLit); ok && lit.Kind == token.STRING {
					s, _ := strconv.Unquote(lit.Value)
					if c, ok := names[s]; ok {
						t.Errorf("%s: literal %s repeats constant %s", g.fset.Position(lit.Pos()), lit.Value, c)
					}
				}
				return true
			})
		})
	}
}
