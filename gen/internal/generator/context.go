package generator

import (
	"fmt"
	"go/types"
	"strconv"
	"strings"

	"github.com/dave/jennifer/jen"
)

// A handler asks for its conversation's context by taking a third
// parameter of type conversation.History; the generated dispatch assembles
// it (conversation.AssembleFor) before calling the method, under the policy
// of the directive's context= key:
//
//	//laser:handle op=chat context=agents:user,assistant+last:20+tokens:4000
//	func (b *Bot) Chat(ctx *runtime.Ctx, in Question, history conversation.History) (Answer, error)
//
// Steps are joined by "+" and applied in order: last:N keeps the N most
// recent records, tokens:N the recent ones within N estimated tokens (at
// least one), agents:a,b those sent by the listed agents, and sub also reads
// sub-conversations (records whose root or parent is the conversation).
// Without context= the runtime's default policy applies (the last 50).

// ErrBadContext is a context= key the generator cannot honour.
var ErrBadContext = &Problem{
	Title: "invalid context policy",
	Help:  "A handler that reads its conversation takes func(ctx *runtime.Ctx, in In, history conversation.History) and may declare context=<steps>, the steps last:N, tokens:N, agents:a,b and sub joined by +, such as context=agents:user,bot+last:20.",
}

// conversationPath is the package of the context types.
const conversationPath = "github.com/lasergo/laser/conversation"

// historyLocal is the local variable the dispatch assembles the context into.
const historyLocal = "history"

// ContextStep is one step of a declared context policy.
type ContextStep struct {
	// Kind is "last", "tokens" or "agents".
	Kind   string
	N      int
	Agents []string
}

// ContextPolicy is what a handler's context= key declares.
type ContextPolicy struct {
	Steps []ContextStep
	// Across also reads the conversation's sub-conversations.
	Across bool
}

// isHistory reports whether t is conversation.History.
func isHistory(t types.Type) bool {
	n, ok := types.Unalias(t).(*types.Named)
	return ok && n.Obj().Pkg() != nil && n.Obj().Pkg().Path() == conversationPath && n.Obj().Name() == "History"
}

// parseContextPolicy parses a context= value, or says why it is invalid.
func parseContextPolicy(s string) (ContextPolicy, string) {
	var p ContextPolicy
	if s == "" {
		return p, "is empty; use steps such as last:20, tokens:4000, agents:a,b or sub, joined by +"
	}
	for _, step := range strings.Split(s, "+") {
		kind, arg, hasArg := strings.Cut(step, ":")
		switch kind {
		case "sub":
			if hasArg || p.Across {
				return p, fmt.Sprintf("has step %q; sub takes no argument and is given once", step)
			}
			p.Across = true
		case "last", "tokens":
			n, err := strconv.Atoi(arg)
			if err != nil || n <= 0 || strings.HasPrefix(arg, "+") {
				return p, fmt.Sprintf("has step %q; %s takes a positive count, as in %s:20", step, kind, kind)
			}
			p.Steps = append(p.Steps, ContextStep{Kind: kind, N: n})
		case "agents":
			agents := strings.Split(arg, ",")
			for _, a := range agents {
				if a == "" {
					return p, fmt.Sprintf("has step %q; agents takes a comma-separated list of agent ids", step)
				}
			}
			p.Steps = append(p.Steps, ContextStep{Kind: kind, Agents: agents})
		default:
			return p, fmt.Sprintf("has step %q; the steps are last:N, tokens:N, agents:a,b and sub", step)
		}
	}
	return p, ""
}

// checkContext checks the context= key against the method's parameters.
func (c *collector) checkContext(op *Operation) {
	if !op.contextPos.IsValid() {
		return
	}
	if !op.Context {
		c.report(op.contextPos, ErrBadContext, "context=%q is on method %s, which takes no conversation.History parameter to receive it", op.contextValue, op.Method)
		return
	}
	p, why := parseContextPolicy(op.contextValue)
	if why != "" {
		c.report(op.contextPos, ErrBadContext, "context=%q %s", op.contextValue, why)
		return
	}
	op.ContextPolicy = p
}

// historyParam is the third parameter of a handler that takes its context.
func historyParam(op *Operation) []jen.Code {
	if !op.Context {
		return nil
	}
	return []jen.Code{jen.Qual(conversationPath, "History")}
}

// assembleContext is the dispatch code that assembles a handler's context;
// a failed read is returned as is, so the message is retried.
func assembleContext(op *Operation) []jen.Code {
	if !op.Context {
		return nil
	}
	opts := jen.Qual(conversationPath, "Options").Values(jen.DictFunc(func(d jen.Dict) {
		var steps []jen.Code
		for _, s := range op.ContextPolicy.Steps {
			switch s.Kind {
			case "last":
				steps = append(steps, jen.Qual(conversationPath, "LastN").Call(jen.Lit(s.N)))
			case "tokens":
				steps = append(steps, jen.Qual(conversationPath, "TokenBudget").Values(jen.Dict{jen.Id("Max"): jen.Lit(s.N)}))
			case "agents":
				lits := make([]jen.Code, len(s.Agents))
				for i, a := range s.Agents {
					lits[i] = jen.Lit(a)
				}
				steps = append(steps, jen.Qual(conversationPath, "ByAgent").Values(lits...))
			}
		}
		switch len(steps) {
		case 0:
		case 1:
			d[jen.Id("Policy")] = steps[0]
		default:
			d[jen.Id("Policy")] = jen.Qual(conversationPath, "Chain").Values(steps...)
		}
		if op.ContextPolicy.Across {
			d[jen.Id("AcrossSubconversations")] = jen.True()
		}
	}))
	return []jen.Code{
		jen.List(jen.Id(historyLocal), jen.Err()).Op(":=").Qual(conversationPath, "AssembleFor").Call(jen.Id("c"), opts),
		jen.If(jen.Err().Op("!=").Nil()).Block(jen.Return(jen.Err())),
	}
}

// wantsContext reports whether any operation of the model takes its context.
func wantsContext(m *Model) bool { return anyOp(m, func(op *Operation) bool { return op.Context }) }
