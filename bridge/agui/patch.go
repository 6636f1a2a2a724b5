package agui

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"
)

// ErrPatch is matched by the error for a JSON Patch that does not apply.
var ErrPatch = errors.New("agui: JSON Patch does not apply")

// PatchOp is one RFC 6902 operation.
type PatchOp struct {
	Op    string `json:"op"`
	Path  string `json:"path"`
	From  string `json:"from,omitempty"`
	Value any    `json:"value,omitempty"`
}

// ApplyPatch applies the RFC 6902 patch ops to doc (decoded JSON: maps,
// slices, strings, float64, bool, nil) and returns the new document; doc is
// not modified. Any failing operation fails the whole patch.
func ApplyPatch(doc any, ops []PatchOp) (any, error) {
	doc = deepCopy(doc)
	for i, op := range ops {
		var err error
		doc, err = applyOp(doc, op)
		if err != nil {
			return nil, fmt.Errorf("%w: operation %d (%s %s): %v", ErrPatch, i, op.Op, op.Path, err)
		}
	}
	return doc, nil
}

func applyOp(doc any, op PatchOp) (any, error) {
	switch op.Op {
	case "add":
		return put(doc, op.Path, deepCopy(op.Value), true)
	case "replace":
		if _, err := get(doc, op.Path); err != nil {
			return nil, err
		}
		return put(doc, op.Path, deepCopy(op.Value), false)
	case "remove":
		return remove(doc, op.Path)
	case "move":
		v, err := get(doc, op.From)
		if err != nil {
			return nil, err
		}
		if doc, err = remove(doc, op.From); err != nil {
			return nil, err
		}
		return put(doc, op.Path, v, true)
	case "copy":
		v, err := get(doc, op.From)
		if err != nil {
			return nil, err
		}
		return put(doc, op.Path, deepCopy(v), true)
	case "test":
		v, err := get(doc, op.Path)
		if err != nil {
			return nil, err
		}
		if !reflect.DeepEqual(normalize(v), normalize(op.Value)) {
			return nil, fmt.Errorf("test failed: %v is not %v", v, op.Value)
		}
		return doc, nil
	}
	return nil, fmt.Errorf("unknown op %q", op.Op)
}

// pointer splits an RFC 6901 JSON Pointer into its unescaped tokens.
func pointer(p string) ([]string, error) {
	if p == "" {
		return nil, nil
	}
	if !strings.HasPrefix(p, "/") {
		return nil, fmt.Errorf("pointer %q does not start with /", p)
	}
	toks := strings.Split(p[1:], "/")
	for i, t := range toks {
		toks[i] = strings.ReplaceAll(strings.ReplaceAll(t, "~1", "/"), "~0", "~")
	}
	return toks, nil
}

func get(doc any, path string) (any, error) {
	toks, err := pointer(path)
	if err != nil {
		return nil, err
	}
	cur := doc
	for _, t := range toks {
		switch c := cur.(type) {
		case map[string]any:
			v, ok := c[t]
			if !ok {
				return nil, fmt.Errorf("no member %q", t)
			}
			cur = v
		case []any:
			i, err := index(t, len(c))
			if err != nil {
				return nil, err
			}
			cur = c[i]
		default:
			return nil, fmt.Errorf("%q is inside a scalar", t)
		}
	}
	return cur, nil
}

// put sets (insert: adds) v at path and returns the possibly new root.
func put(doc any, path string, v any, insert bool) (any, error) {
	toks, err := pointer(path)
	if err != nil {
		return nil, err
	}
	if len(toks) == 0 {
		return v, nil
	}
	parent, err := get(doc, joinPointer(toks[:len(toks)-1]))
	if err != nil {
		return nil, err
	}
	last := toks[len(toks)-1]
	switch c := parent.(type) {
	case map[string]any:
		c[last] = v
		return doc, nil
	case []any:
		var i int
		if insert {
			if last == "-" {
				i = len(c)
			} else if i, err = index(last, len(c)+1); err != nil {
				return nil, err
			}
			c = slices.Insert(c, i, v)
		} else {
			if i, err = index(last, len(c)); err != nil {
				return nil, err
			}
			c[i] = v
		}
		return put(doc, joinPointer(toks[:len(toks)-1]), c, false)
	}
	return nil, fmt.Errorf("%q is inside a scalar", last)
}

func remove(doc any, path string) (any, error) {
	toks, err := pointer(path)
	if err != nil {
		return nil, err
	}
	if len(toks) == 0 {
		return nil, fmt.Errorf("cannot remove the whole document")
	}
	parentPath := joinPointer(toks[:len(toks)-1])
	parent, err := get(doc, parentPath)
	if err != nil {
		return nil, err
	}
	last := toks[len(toks)-1]
	switch c := parent.(type) {
	case map[string]any:
		if _, ok := c[last]; !ok {
			return nil, fmt.Errorf("no member %q", last)
		}
		delete(c, last)
		return doc, nil
	case []any:
		i, err := index(last, len(c))
		if err != nil {
			return nil, err
		}
		return put(doc, parentPath, slices.Delete(c, i, i+1), false)
	}
	return nil, fmt.Errorf("%q is inside a scalar", last)
}

func index(t string, n int) (int, error) {
	i, err := strconv.Atoi(t)
	if err != nil || i < 0 || i >= n || (len(t) > 1 && t[0] == '0') {
		return 0, fmt.Errorf("bad array index %q", t)
	}
	return i, nil
}

func joinPointer(toks []string) string {
	var b strings.Builder
	for _, t := range toks {
		b.WriteByte('/')
		b.WriteString(strings.ReplaceAll(strings.ReplaceAll(t, "~", "~0"), "/", "~1"))
	}
	return b.String()
}

// deepCopy copies decoded JSON so a patch never writes through to its input.
func deepCopy(v any) any {
	switch c := v.(type) {
	case map[string]any:
		m := make(map[string]any, len(c))
		for k, x := range c {
			m[k] = deepCopy(x)
		}
		return m
	case []any:
		s := make([]any, len(c))
		for i, x := range c {
			s[i] = deepCopy(x)
		}
		return s
	}
	return v
}

// normalize round-trips v through JSON so a test compares 2 and 2.0 alike.
func normalize(v any) any {
	b, err := json.Marshal(v)
	if err != nil {
		return v
	}
	var out any
	if json.Unmarshal(b, &out) != nil {
		return v
	}
	return out
}
