package generator

import (
	"go/types"

	"github.com/dave/jennifer/jen"
)

// A streaming operation is declared as
//
//	//laser:handle op=draft
//	func (w *Writer) Draft(ctx *runtime.Ctx, in Prompt, out *runtime.Stream[Token]) error
//
// The method sends items with out.Send as it produces them and returns when
// it is done; the generated handler opens the stream before the call and
// ends it after: a terminal chunk when the method returns nil, an AGDX
// error when it fails. This shape was chosen over a method returning
// iter.Seq2[Token, error] because a handler is the producer: with a stream
// parameter it writes items from whatever loop or callback the model client
// gives it, sees a failed send at the send, and its context (ctx) stays the
// one it handles the request with. The generated client method returns
// iter.Seq2[Token, error], what a consumer of items ranges over.

// Streaming diagnostics.
var (
	ErrStreamShape = &Problem{
		Title: "unsupported streaming handler signature",
		Help:  "A streaming //laser:handle method is " + streamingSignature() + "; In may be a pointer.",
	}
	ErrStreamOnEvent = &Problem{
		Title: "stream on an event handler",
		Help:  "Events have no caller to stream to: stream from a //laser:handle method, or drop the *runtime.Stream parameter.",
	}
	ErrStreamNoRespond = &Problem{
		Title: "streaming operation on an agent without a respond topic",
		Help:  "Add respond=<topic> to the //laser:agent directive: the stream's chunks are published there.",
	}
)

// streamParam returns the item type of a *runtime.Stream[Item] (or
// runtime.Stream[Item]) parameter, whether it is one, and whether it is a
// pointer.
func streamParam(t types.Type) (item types.Type, ok, pointer bool) {
	if p, isPtr := types.Unalias(t).(*types.Pointer); isPtr {
		t, pointer = p.Elem(), true
	}
	n, isNamed := types.Unalias(t).(*types.Named)
	if !isNamed || n.Obj().Pkg() == nil || n.Obj().Pkg().Path() != runtimePath || n.Obj().Name() != "Stream" || n.TypeArgs().Len() != 1 {
		return nil, false, false
	}
	return n.TypeArgs().At(0), true, pointer
}

// streamShape checks a method whose third parameter is a runtime.Stream and
// makes it a streaming operation.
func (c *collector) streamShape(op *Operation, item types.Type, pointer bool) bool {
	sig := op.sig
	if op.Kind == OpEvent {
		c.report(op.Pos, ErrStreamOnEvent, "event method %s takes a %s", op.Method, c.typeString(sig.Params().At(2).Type()))
		return false
	}
	bad := func(why string) bool {
		c.report(op.Pos, ErrStreamShape, "method %s has signature %s: %s", op.Method, c.typeString(sig), why)
		return false
	}
	params, results := sig.Params(), sig.Results()
	switch {
	case !pointer:
		return bad("the stream parameter must be a pointer, *runtime.Stream[" + c.typeString(item) + "]")
	case !isRuntimeCtx(params.At(0).Type()):
		return bad("the first parameter must be *runtime.Ctx")
	case results.Len() != 1 || !isError(results.At(0).Type()):
		return bad("a streaming method returns only error; its items go to the stream")
	}
	op.Kind = OpStream
	op.In, op.InPos = params.At(1).Type(), params.At(1).Pos()
	op.Out, op.OutPos = item, params.At(2).Pos()
	return true
}

// wantsIter reports whether generated code names iter.Seq2.
func wantsIter(m *Model) bool {
	for _, a := range m.Agents {
		for _, op := range a.Ops {
			if op.Kind == OpStream {
				return true
			}
		}
	}
	return false
}

// streamParamType spells *runtime.Stream[Item].
func (e *emitter) streamParamType(op *Operation) jen.Code {
	return jen.Op("*").Add(rt("Stream")).Types(e.typ(op.Out))
}

// streamBody is the dispatcher of a streaming operation after decoding:
// open the typed stream, call the method, end the stream by its result.
func (e *emitter) streamBody(op *Operation, args []jen.Code) []jen.Code {
	args = append(args, jen.Id("out"))
	return []jen.Code{
		jen.List(jen.Id("out"), jen.Err()).Op(":=").Add(rt("OpenTypedStream")).Types(e.typ(op.Out)).Call(jen.Id("c"), ctCode(op.CT)),
		jen.If(jen.Err().Op("!=").Nil()).Block(jen.Return(jen.Id("c").Dot("FailRequest").Call(jen.Err()))),
		jen.Return(jen.Id("out").Dot("Finish").Call(jen.Id("h").Dot("impl").Dot(op.Method).Call(args...))),
	}
}
