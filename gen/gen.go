// Package gen is the code generator's public entry, what cmd/lasergen and
// the generated tests call: Generate reads a Go package whose struct types
// and methods carry //laser: directives and returns the typed decode,
// routing, dispatch, clients and agent cards for them; CheckUpToDate
// compares them with the files on disk.
//
// The engine lives in gen/internal/generator. Its pipeline is load (golang.org/x/tools/go/packages, with full type
// information) → model (agents and operations from the directives) → check
// (values, method shapes, encodable and nameable types, collisions) → emit
// (github.com/dave/jennifer). Any problem stops the run before emit, and
// every problem is reported at once, sorted, each at the exact directive
// field or declaration it concerns.
//
// # Directives
//
// On a struct type:
//
//	//laser:agent id=<agent id> listen=<topic> [respond=<topic>] [group=<group>] [ct=cbor|json] [default=<operation>]
//
// On a method of such a type:
//
//	//laser:handle op=<operation> [ct=cbor|json] [context=<policy>] [memory=<strategy>[:<limit>]] [effect=<class>] [data=<classification>]
//	//laser:event op=<operation> [ct=cbor|json] [context=<policy>] [memory=<strategy>[:<limit>]] [effect=<class>] [data=<classification>]
//
// Fields are space-separated key=value pairs; a value holding spaces is
// written as a Go double-quoted string (key="a b"). ct defaults to the
// agent's ct, which defaults to cbor. group defaults to the agent id.
// default= names the //laser:handle operation a command without an
// operation (the reference SDK's contract) goes to; an agent with a single
// //laser:handle method takes such commands without it.
// context= applies to methods that take a conversation.History: steps such
// as last:20, tokens:4000, agents:a,b or sub, joined by + (default last:50).
//
// Accepted method shapes, where In and Out are encodable types, In may be a
// pointer and Item is the type of a streamed item:
//
//	//laser:handle: func(ctx *runtime.Ctx, in In) (Out, error)                                request/response
//	//laser:handle: func(ctx *runtime.Ctx, in In, history conversation.History) (Out, error)  request/response, the conversation read first
//	//laser:handle: func(ctx *runtime.Ctx, in In) error                                       a command
//	//laser:handle: func(ctx *runtime.Ctx, in In, history conversation.History) error         a command, the conversation read first
//	//laser:handle: func(ctx *runtime.Ctx, in In, out *runtime.Stream[Item]) error            a streamed answer
//	//laser:event: func(ctx *runtime.Ctx, in In) error                                        an AGDX event
//	//laser:event: func(ctx *runtime.Ctx, in In, history conversation.History) error          an AGDX event, the conversation read first
//
// # Generated code
//
// Per agent type T (with E = T with its first letter upper-cased):
// NewEAgent (a *runtime.Agent from a *T), EHandler (the runtime.Handler
// that routes by kind and operation), the EClient interface (typed
// request/reply, command and event methods named after T's methods) and
// NewEClient returning its implementation, ECard (the wire.AgentCard
// listing the //laser:handle operations), the constants EAgentID,
// EListenTopic, ERespondTopic and EOp<Method> that the dispatcher, client
// and card spell the agent's names with, and compile-time assertions of
// every handler signature. The file's header names the annotated files
// (// Source:).
//
// Beside the generated file (laser_gen.go) goes a generated test
// (laser_gen_test.go) that fails go test when the generated file is stale:
// see CheckUpToDate.
//
// A request method that returns a non-retryable error makes the dispatcher
// answer the caller with an AGDX error (see runtime.Ctx.FailRequest), so the
// typed client returns a remote *runtime.Error instead of waiting for its
// timeout. A runtime.Failf answer is then committed as handled; any other
// permanent error is dead-lettered too. A retryable error is retried by the
// consumer and does not answer.
package gen

import "github.com/lasergo/laser/gen/internal/generator"

// DefaultOutput is the name of the generated file.
const DefaultOutput = generator.DefaultOutput

// Options tunes a run: the generated file's name (default DefaultOutput),
// the environment and build flags of the go command that lists the
// package, and whether to leave out the generated test.
type Options = generator.Options

// Result is the outcome of a run: the files to write, or the diagnostics
// that prevented them (never both). Write writes the files that changed,
// Stale lists those that differ from the disk, and Err returns the
// diagnostics as one *DiagnosticsError.
type Result = generator.Result

// File is one generated file: its absolute path and content.
type File = generator.File

// Diagnostic is one problem at a position of the package: a Problem of the
// generator's catalogue and the detail of this occurrence.
type Diagnostic = generator.Diagnostic

// Problem is what went wrong, in one line (Title), and a sentence showing
// the form the generator accepts (Help).
type Problem = generator.Problem

// DiagnosticsError reports every problem the generator found; nothing was
// generated.
type DiagnosticsError = generator.DiagnosticsError

// StaleError names the generated files that differ from what lasergen would
// write now, or carries the diagnostics that stop it from generating at all.
type StaleError = generator.StaleError

// ErrStale is matched (errors.Is) by the error CheckUpToDate returns when the
// generated files are not what lasergen would write now.
var ErrStale = generator.ErrStale

// Generate loads the package in dir and returns the files to write, or the
// diagnostics that prevented them. The error is for failures to run at all
// (the go command missing, an unreadable directory); problems in the
// package are diagnostics.
func Generate(dir string, opts Options) (*Result, error) { return generator.Generate(dir, opts) }

// CheckUpToDate generates the package in dir in memory and compares the
// result with the files on disk. It returns nil when they are the same and a
// *StaleError otherwise; other errors mean lasergen could not run. The
// generated test file calls it, so go test fails on a stale laser_gen.go.
func CheckUpToDate(dir string, opts Options) error { return generator.CheckUpToDate(dir, opts) }

// TestOutput returns the name of the generated test file that goes with the
// generated file out: laser_gen_test.go for laser_gen.go.
func TestOutput(out string) string { return generator.TestOutput(out) }
