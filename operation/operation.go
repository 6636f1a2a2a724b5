// Package operation describes the operations of a generated agent as
// lasergen knows them (Info, with its Kind), enough for a bridge (MCP tools,
// A2A skills) to advertise an operation, to call it with a typed input and
// to read its typed answer. Generated code lists them (<Agent>Operations).
package operation

import (
	"reflect"

	"github.com/lasergo/laser/wire"
)

// Kind says how an operation of a generated agent is called.
type Kind uint8

// Operation kinds, as lasergen classifies handlers.
const (
	// Request answers with one typed reply.
	Request Kind = iota + 1
	// Command is one-way: nothing answers it.
	Command
	// Event handles events published on the agent's topic.
	Event
	// Stream answers with a chunk stream of typed items.
	Stream
)

func (k Kind) String() string {
	switch k {
	case Request:
		return "request"
	case Command:
		return "command"
	case Event:
		return "event"
	case Stream:
		return "stream"
	}
	return "unknown"
}

// Info describes one operation of a generated agent, as lasergen
// knows it: enough for a bridge (MCP tools, A2A skills) to advertise it, to
// call it with a typed input and to read its typed answer.
type Info struct {
	// Agent is the serving agent's id, Name the operation messages carry.
	Agent, Name string
	Kind        Kind
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
