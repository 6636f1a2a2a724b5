package runtime

import (
	"reflect"

	"github.com/lasergo/laser/wire"
)

// OperationKind says how an operation of a generated agent is called.
type OperationKind uint8

// Operation kinds, as lasergen classifies handlers.
const (
	// OperationRequest answers with one typed reply.
	OperationRequest OperationKind = iota + 1
	// OperationCommand is one-way: nothing answers it.
	OperationCommand
	// OperationEvent handles events published on the agent's topic.
	OperationEvent
	// OperationStream answers with a chunk stream of typed items.
	OperationStream
)

func (k OperationKind) String() string {
	switch k {
	case OperationRequest:
		return "request"
	case OperationCommand:
		return "command"
	case OperationEvent:
		return "event"
	case OperationStream:
		return "stream"
	}
	return "unknown"
}

// OperationInfo describes one operation of a generated agent, as lasergen
// knows it: enough for a bridge (MCP tools, A2A skills) to advertise it, to
// call it with a typed input and to read its typed answer.
type OperationInfo struct {
	// Agent is the serving agent's id, Name the operation messages carry.
	Agent, Name string
	Kind        OperationKind
	// Doc is the handler's doc comment.
	Doc string
	// Topic is where the agent listens, ReplyTopic where it answers ("" for
	// an agent without a respond topic).
	Topic, ReplyTopic string
	// ContentType encodes the input and the output.
	ContentType wire.ContentType
	// Input is the input type; Output the reply type of a request or the
	// item type of a stream, nil otherwise.
	Input, Output reflect.Type
	// InputSchema and OutputSchema are JSON Schemas (draft 2020-12)
	// generated from the Go types; OutputSchema is "" without an Output.
	InputSchema, OutputSchema string
}
