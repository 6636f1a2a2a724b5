package agui_test

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/lasergo/laser/bridge/agui"
)

func decode(t *testing.T, s string) any {
	t.Helper()
	var v any
	if err := json.Unmarshal([]byte(s), &v); err != nil {
		t.Fatal(err)
	}
	return v
}

func ops(t *testing.T, s string) []agui.PatchOp {
	t.Helper()
	var o []agui.PatchOp
	if err := json.Unmarshal([]byte(s), &o); err != nil {
		t.Fatal(err)
	}
	return o
}

func TestApplyPatchFollowsRFC6902(t *testing.T) {
	for _, c := range []struct{ name, doc, patch, want string }{
		{"add member", `{"a":1}`, `[{"op":"add","path":"/b","value":2}]`, `{"a":1,"b":2}`},
		{"add to array", `{"a":[1,3]}`, `[{"op":"add","path":"/a/1","value":2}]`, `{"a":[1,2,3]}`},
		{"append", `{"a":[1]}`, `[{"op":"add","path":"/a/-","value":2}]`, `{"a":[1,2]}`},
		{"remove", `{"a":1,"b":2}`, `[{"op":"remove","path":"/a"}]`, `{"b":2}`},
		{"remove from array", `[1,2,3]`, `[{"op":"remove","path":"/1"}]`, `[1,3]`},
		{"replace", `{"count":1}`, `[{"op":"replace","path":"/count","value":2}]`, `{"count":2}`},
		{"move", `{"a":{"x":1},"b":{}}`, `[{"op":"move","from":"/a/x","path":"/b/y"}]`, `{"a":{},"b":{"y":1}}`},
		{"copy", `{"a":[1]}`, `[{"op":"copy","from":"/a","path":"/b"}]`, `{"a":[1],"b":[1]}`},
		{"test passes", `{"a":2}`, `[{"op":"test","path":"/a","value":2}]`, `{"a":2}`},
		{"escaped keys", `{"a/b":1,"m~n":2}`, `[{"op":"replace","path":"/a~1b","value":3},{"op":"remove","path":"/m~0n"}]`, `{"a/b":3}`},
		{"whole document", `{"a":1}`, `[{"op":"replace","path":"","value":[1]}]`, `[1]`},
	} {
		t.Run(c.name, func(t *testing.T) {
			doc := decode(t, c.doc)
			got, err := agui.ApplyPatch(doc, ops(t, c.patch))
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(decode(t, c.want), got); diff != "" {
				t.Fatalf("(-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(decode(t, c.doc), doc); diff != "" {
				t.Fatalf("the input document changed (-was +now):\n%s", diff)
			}
		})
	}
}

func TestApplyPatchFailsWholeOnAnyBadOperation(t *testing.T) {
	for _, c := range []struct{ name, doc, patch string }{
		{"replace missing", `{}`, `[{"op":"replace","path":"/a","value":1}]`},
		{"remove missing", `{}`, `[{"op":"remove","path":"/a"}]`},
		{"index out of range", `[1]`, `[{"op":"add","path":"/5","value":1}]`},
		{"leading zero", `[1,2]`, `[{"op":"remove","path":"/01"}]`},
		{"test fails", `{"a":1}`, `[{"op":"add","path":"/b","value":1},{"op":"test","path":"/a","value":2}]`},
		{"unknown op", `{}`, `[{"op":"merge","path":"/a"}]`},
		{"bad pointer", `{}`, `[{"op":"add","path":"a","value":1}]`},
		{"into a scalar", `{"a":1}`, `[{"op":"add","path":"/a/b","value":1}]`},
	} {
		t.Run(c.name, func(t *testing.T) {
			if _, err := agui.ApplyPatch(decode(t, c.doc), ops(t, c.patch)); !errors.Is(err, agui.ErrPatch) {
				t.Fatalf("err = %v, want ErrPatch", err)
			}
		})
	}
}
