package generator

import (
	"go/token"
	"strconv"

	"github.com/dave/jennifer/jen"
)

// A handler may declare what its effects are, for the governance gate:
// effect=<class> (payment, delete, notify, ...) and data=<classification>
// (public, internal, pii, ...). The dispatch hands them to the handler's
// Ctx (Ctx.WithClaims), so every effect the handler performs carries
// them into the action a governor sees.

// ErrBadClaim is an effect= or data= value the generator refuses.
var ErrBadClaim = &Problem{
	Title: "invalid effect or data class",
	Help:  "effect=<class> and data=<classification> are 1..64 bytes of lower-case letters, digits and . _ : -, such as effect=payment data=pii.",
}

// maxClaimBytes bounds an effect or data class.
const maxClaimBytes = 64

// claim is one declared class and where the directive gave it.
type claim struct {
	Value string
	pos   token.Pos
}

// checkClaims checks an operation's effect= and data= values.
func (c *collector) checkClaims(op *Operation) {
	for _, cl := range []struct {
		key string
		claim
	}{{"effect", op.Effect}, {"data", op.Data}} {
		if !cl.pos.IsValid() {
			continue
		}
		if why := claimProblem(cl.Value); why != "" {
			c.report(cl.pos, ErrBadClaim, "%s=%q %s", cl.key, cl.Value, why)
		}
	}
}

// claimProblem says what is wrong with a class, or "".
func claimProblem(v string) string {
	switch {
	case v == "":
		return "is empty"
	case len(v) > maxClaimBytes:
		return "is longer than 64 bytes"
	}
	for _, r := range v {
		if !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '.' || r == '_' || r == ':' || r == '-') {
			return "holds " + strconv.QuoteRune(r) + ", which is not a lower-case letter, a digit or . _ : -"
		}
	}
	return ""
}

// withClaims is the dispatch code that hands an operation's declared
// classes to its handler's Ctx; none when it declares none.
func withClaims(op *Operation) []jen.Code {
	if op.Effect.Value == "" && op.Data.Value == "" {
		return nil
	}
	fields := jen.Dict{}
	if op.Effect.Value != "" {
		fields[jen.Id("EffectClass")] = jen.Lit(op.Effect.Value)
	}
	if op.Data.Value != "" {
		fields[jen.Id("DataClassification")] = jen.Lit(op.Data.Value)
	}
	return []jen.Code{jen.Id("c").Op("=").Id("c").Dot("WithClaims").Call(jen.Qual(effectPath, "Claims").Values(fields))}
}
