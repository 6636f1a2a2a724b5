// Package effect describes the side effects the runtime performs (sends,
// raw publishes, memory writes, workflow steps, fan-out branches, bridge
// calls) as a runtime.EffectGate sees them before they run: the Effect, its
// Kind, and the Claims its sender makes about it. Package govern decides
// on them.
package effect

import "github.com/lasergo/laser/wire"

// Kind names what an Effect does; the governance evidence records it.
type Kind string

// Effect kinds. The AGDX ones are the envelope's kind; the rest name effects
// a verb alone does not tell apart.
const (
	Command           = Kind(wire.KindCommand)  // an AGDX command sent without waiting
	Request      Kind = "request"               // an AGDX command awaiting its answer
	Event             = Kind(wire.KindEvent)    // an AGDX event
	Response          = Kind(wire.KindResponse) // an AGDX response (an answer)
	Error             = Kind(wire.KindError)    // an AGDX error answer
	Status            = Kind(wire.KindStatus)   // an AGDX task status, ack or card
	Chunk             = Kind(wire.KindChunk)    // one chunk of a streamed answer
	Plain        Kind = "plain"                 // a plain message (provenance in headers)
	Publish      Kind = "publish"               // a raw record through runtime.Producer.Publish
	MemoryWrite  Kind = "memory_write"
	WorkflowStep Kind = "workflow_step" // a workflow's dispatch of one step
	FanoutBranch Kind = "fanout_branch" // one branch of a fan-out
	BridgeCall   Kind = "bridge_call"   // a call a bridge makes to the outside
)

// Effect is one side effect the runtime is about to perform, as a
// runtime.EffectGate sees it. The gate may replace Body (and Metadata, on
// an AGDX envelope) before the effect; the runtime then publishes the
// replacement, signing it when the record is signed.
type Effect struct {
	Kind  Kind
	Topic string
	// Operation is the envelope's operation (or the memory operation).
	Operation    string
	Agent        string // the acting agent, "" when none is known
	Target       string // the addressed agent, "" for anyone
	Conversation wire.ID
	Body         []byte
	Metadata     wire.Metadata
	// Signed says the runtime will sign the record: only then do the claims
	// below bind their author. Unsigned, they are advisory.
	Signed bool
	// Claims are what the sender says about the effect: the purpose and
	// data classification of the envelope's metadata, and the class the
	// handling agent's directive declares.
	Claims Claims
}

// Claims are what an effect's sender asserts about it; advisory unless the
// effect is signed.
type Claims struct {
	Purpose            string
	DataClassification string
	// EffectClass is the class of effect the handler declares (a
	// //laser:effect directive), "" when none.
	EffectClass string
}
