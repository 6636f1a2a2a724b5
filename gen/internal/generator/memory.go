package generator

import (
	"fmt"
	"go/types"
	"slices"
	"strconv"
	"strings"

	"github.com/dave/jennifer/jen"
)

// A handler asks for what its agent remembers by taking a last parameter
// of type memory.Recalled, after the history when it takes one too; the
// generated dispatch recalls it (memory.RecallFor) from the agent's memory,
// which the agent returns from a method Memory() *memory.Store, under the
// query of the directive's memory= key, strategy[:limit]:
//
//	//laser:handle op=chat context=last:20 memory=hybrid:5
//	func (b *Bot) Chat(ctx *runtime.Ctx, in Question, history conversation.History, recalled memory.Recalled) (Answer, error)
//
// The strategies are auto, recent, keyword, semantic and hybrid; without
// memory= the dispatch recalls auto:10, and the input (its String method,
// or the message body) is the query text.

// ErrBadMemory is a memory= key or a Recalled parameter the generator
// cannot honour.
var ErrBadMemory = &Problem{
	Title: "invalid memory recall",
	Help:  "A handler that recalls memory takes a last parameter recalled memory.Recalled, its agent has a method Memory() *memory.Store, and it may declare memory=<strategy>[:limit], the strategies auto, recent, keyword, semantic and hybrid, such as memory=hybrid:5.",
}

// memoryPath is the package of the memory types.
const memoryPath = "github.com/lasergo/laser/memory"

// recalledLocal is the local variable the dispatch recalls into.
const recalledLocal = "recalled"

// MemoryQuery is what a handler's memory= key declares.
type MemoryQuery struct {
	// Strategy is the memory package's constant name, such as "Hybrid".
	Strategy string
	Limit    int
}

// memoryStrategies maps a memory= strategy word to its constant.
var memoryStrategies = map[string]string{"auto": "Auto", "recent": "Recent", "keyword": "Keyword", "semantic": "Semantic", "hybrid": "Hybrid"}

// isRecalled reports whether t is memory.Recalled.
func isRecalled(t types.Type) bool {
	n, ok := types.Unalias(t).(*types.Named)
	return ok && n.Obj().Pkg() != nil && n.Obj().Pkg().Path() == memoryPath && n.Obj().Name() == "Recalled"
}

// parseMemoryQuery parses a memory= value, or says why it is invalid.
func parseMemoryQuery(s string) (MemoryQuery, string) {
	word, arg, hasArg := strings.Cut(s, ":")
	q := MemoryQuery{Strategy: memoryStrategies[word], Limit: 10}
	if q.Strategy == "" {
		return q, fmt.Sprintf("has strategy %q; the strategies are auto, recent, keyword, semantic and hybrid", word)
	}
	if hasArg {
		n, err := strconv.Atoi(arg)
		if err != nil || n <= 0 || strings.HasPrefix(arg, "+") {
			return q, fmt.Sprintf("has limit %q; the limit is a positive count, as in %s:5", arg, word)
		}
		q.Limit = n
	}
	return q, ""
}

// checkMemory checks the memory= key and the agent's Memory method against
// the method's parameters.
func (c *collector) checkMemory(a *Agent, op *Operation) {
	if !op.Memory {
		if op.memoryPos.IsValid() {
			c.report(op.memoryPos, ErrBadMemory, "memory=%q is on method %s, which takes no memory.Recalled parameter to receive it", op.memoryValue, op.Method)
		}
		return
	}
	op.MemoryQuery = MemoryQuery{Strategy: "Auto", Limit: 10}
	if op.memoryPos.IsValid() {
		q, why := parseMemoryQuery(op.memoryValue)
		if why != "" {
			c.report(op.memoryPos, ErrBadMemory, "memory=%q %s", op.memoryValue, why)
			return
		}
		op.MemoryQuery = q
	}
	if !hasMemoryMethod(a.Obj) {
		c.report(op.Pos, ErrBadMemory, "method %s takes memory.Recalled but *%s has no method Memory() *memory.Store to recall from", op.Method, a.Name)
	}
}

// hasMemoryMethod reports whether *T has a method Memory() *memory.Store.
func hasMemoryMethod(obj *types.TypeName) bool {
	sel := types.NewMethodSet(types.NewPointer(obj.Type())).Lookup(obj.Pkg(), "Memory")
	if sel == nil {
		return false
	}
	sig, ok := sel.Type().(*types.Signature)
	if !ok || sig.Params().Len() != 0 || sig.Results().Len() != 1 {
		return false
	}
	p, ok := types.Unalias(sig.Results().At(0).Type()).(*types.Pointer)
	if !ok {
		return false
	}
	n, ok := types.Unalias(p.Elem()).(*types.Named)
	return ok && n.Obj().Pkg() != nil && n.Obj().Pkg().Path() == memoryPath && n.Obj().Name() == "Store"
}

// recalledParam is the last parameter of a handler that recalls memory.
func recalledParam(op *Operation) []jen.Code {
	if !op.Memory {
		return nil
	}
	return []jen.Code{jen.Qual(memoryPath, "Recalled")}
}

// recallMemory is the dispatch code that recalls a handler's memory; a
// failed recall is returned as is, so the message is retried.
func recallMemory(op *Operation) []jen.Code {
	if !op.Memory {
		return nil
	}
	q := jen.Qual(memoryPath, "Query").Values(jen.Dict{
		jen.Id("Strategy"): jen.Qual(memoryPath, op.MemoryQuery.Strategy),
		jen.Id("Limit"):    jen.Lit(op.MemoryQuery.Limit),
	})
	return []jen.Code{
		jen.List(jen.Id(recalledLocal), jen.Err()).Op(":=").Qual(memoryPath, "RecallFor").Call(jen.Id("c"), jen.Id("h").Dot("impl").Dot("Memory").Call(), jen.Id("in"), q),
		jen.If(jen.Err().Op("!=").Nil()).Block(jen.Return(jen.Err())),
	}
}

// wantsMemory reports whether any operation of the model recalls memory.
func wantsMemory(m *Model) bool { return anyOp(m, func(op *Operation) bool { return op.Memory }) }

// anyOp reports whether any operation of the model satisfies f.
func anyOp(m *Model, f func(*Operation) bool) bool {
	for _, a := range m.Agents {
		if slices.ContainsFunc(a.Ops, f) {
			return true
		}
	}
	return false
}
