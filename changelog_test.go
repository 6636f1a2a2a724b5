package laser_test

import (
	"bufio"
	"fmt"
	"go/types"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"golang.org/x/tools/go/packages"
)

// renameSections picks the CHANGELOG sections whose rename lists
// TestChangelogRenamesHold checks.
const renameSections = "(issue 39)"

// renameLine is one entry of a rename list: "- `pkg.Old` → `pkg.New`" (any
// text may follow) or "- `pkg.Old` → removed: how to replace it".
var renameLine = regexp.MustCompile("^- `([^`]+)` → (?:`([^`]+)`|removed: .+)")

// rename is one parsed entry: new is empty for a removal.
type rename struct {
	line     int
	old, new string
}

// TestChangelogRenamesHold reads every rename line of the CHANGELOG
// sections whose heading contains renameSections and checks the API
// against it: each old name (a package-level object, or a field or method
// of one: `runtime.Tuning.Verifier`) no longer exists, and each new one
// does. A rename that was listed but not made, or made but left half
// undone, fails here.
func TestChangelogRenamesHold(t *testing.T) {
	renames := changelogRenames(t, "CHANGELOG.md")
	if len(renames) == 0 {
		t.Fatalf("no rename lines in the CHANGELOG sections headed %q", renameSections)
	}
	pkgs := loadNamed(t, renames)
	for _, r := range renames {
		if exists(t, pkgs, r.old) {
			t.Errorf("CHANGELOG.md:%d: %s still exists", r.line, r.old)
		}
		if r.new != "" && !exists(t, pkgs, r.new) {
			t.Errorf("CHANGELOG.md:%d: %s does not exist", r.line, r.new)
		}
	}
}

// changelogRenames parses the rename lines of the sections (### headings)
// whose heading contains renameSections.
func changelogRenames(t *testing.T, path string) []rename {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []rename
	in := false
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		if strings.HasPrefix(line, "#") {
			in = strings.HasPrefix(line, "### ") && strings.Contains(line, renameSections)
			continue
		}
		if !in {
			continue
		}
		if m := renameLine.FindStringSubmatch(line); m != nil {
			out = append(out, rename{line: n, old: bare(m[1]), new: bare(m[2])})
		} else if strings.HasPrefix(line, "- `") && strings.Contains(line, "→") {
			t.Errorf("%s:%d: not a rename line (\"- `pkg.Old` → `pkg.New`\" or \"→ removed: ...\"): %s", path, n, line)
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// bare strips what a name may carry beyond its identifiers: a pointer
// star, call parentheses, type parameters.
func bare(name string) string {
	name = strings.TrimPrefix(name, "*")
	if i := strings.IndexAny(name, "[("); i >= 0 {
		name = name[:i]
	}
	return name
}

// loadNamed type-checks the packages the renames name (by package name:
// `runtime`, `govern`), found among this module's directories.
func loadNamed(t *testing.T, renames []rename) map[string]*types.Package {
	t.Helper()
	want := map[string]bool{}
	for _, r := range renames {
		for _, n := range []string{r.old, r.new} {
			if pkg, _, ok := strings.Cut(n, "."); ok {
				want[pkg] = true
			}
		}
	}
	dirs := packageDirs(t, want)
	var patterns []string
	for name := range want {
		d, ok := dirs[name]
		if !ok {
			t.Fatalf("no package %s in this module", name)
		}
		patterns = append(patterns, "./"+filepath.ToSlash(d))
	}
	sort.Strings(patterns)
	loaded, err := packages.Load(&packages.Config{Mode: packages.NeedName | packages.NeedTypes}, patterns...)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]*types.Package{}
	for _, p := range loaded {
		for _, e := range p.Errors {
			t.Fatalf("load %s: %v", p.PkgPath, e)
		}
		out[p.Name] = p.Types
	}
	return out
}

// packageDirs finds, for each wanted package name, the directory of this
// module that holds it: the shallowest one outside internal/ and testdata/.
func packageDirs(t *testing.T, want map[string]bool) map[string]string {
	t.Helper()
	clause := regexp.MustCompile(`(?m)^package (\w+)\s*$`)
	dirs := map[string]string{}
	err := filepath.WalkDir(".", func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			base := d.Name()
			if path != "." && (base == "internal" || base == "testdata" || strings.HasPrefix(base, ".")) {
				return filepath.SkipDir
			}
			if _, err := os.Stat(filepath.Join(path, "go.mod")); err == nil && path != "." {
				return filepath.SkipDir // another module
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		m := clause.FindSubmatch(src)
		if m == nil || !want[string(m[1])] {
			return nil
		}
		dir := filepath.Dir(path)
		if old, ok := dirs[string(m[1])]; !ok || strings.Count(dir, string(filepath.Separator)) < strings.Count(old, string(filepath.Separator)) {
			dirs[string(m[1])] = dir
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return dirs
}

// exists reports whether name (pkg.Object, or pkg.Type.FieldOrMethod)
// names an exported object of the loaded packages.
func exists(t *testing.T, pkgs map[string]*types.Package, name string) bool {
	t.Helper()
	parts := strings.Split(name, ".")
	if len(parts) < 2 || len(parts) > 3 {
		t.Fatalf("%s: want pkg.Name or pkg.Type.Member", name)
	}
	pkg := pkgs[parts[0]]
	if pkg == nil {
		t.Fatalf("%s: package %s not loaded", name, parts[0])
	}
	obj := pkg.Scope().Lookup(parts[1])
	if obj == nil || !obj.Exported() {
		return false
	}
	if len(parts) == 2 {
		return true
	}
	tn, ok := obj.(*types.TypeName)
	if !ok {
		t.Fatalf("%s: %s is a %s, not a type", name, parts[1], kind(obj))
	}
	member, _, _ := types.LookupFieldOrMethod(types.NewPointer(tn.Type()), true, pkg, parts[2])
	return member != nil && member.Exported()
}

func kind(obj types.Object) string {
	return strings.TrimPrefix(fmt.Sprintf("%T", obj), "*types.")
}
