package mcp

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/lasergo/laser/bridge"
	"github.com/lasergo/laser/operation"
)

// tool is one operation as an MCP tool. MCP wants objects for a tool's
// arguments and structured result; an operation whose input or output is
// another JSON value is wrapped in a one-property object (wrapIn, wrapOut).
type tool struct {
	op      *bridge.Operation
	def     *mcp.Tool
	wrapIn  string
	wrapOut string
}

// Property names of the objects wrapping what is no object.
const (
	inputProperty  = "input"
	resultProperty = "result"
	itemsProperty  = "items"
)

// ToolName is the tool an operation becomes: agent and operation joined by
// an underscore, so several agents share one server.
func ToolName(op operation.Info) string { return op.Agent + "_" + op.Name }

func newTool(info operation.Info) (*tool, error) {
	op, err := bridge.NewOperation(info)
	if err != nil {
		return nil, err
	}
	if info.InputSchema == "" {
		return nil, fmt.Errorf("mcp: operation %s.%s has no input schema: regenerate it with lasergen", info.Agent, info.Name)
	}
	t := &tool{op: op}
	in, wrapped, err := objectSchema(op.InputSchema, inputProperty)
	if err != nil {
		return nil, fmt.Errorf("mcp: %s.%s input schema: %w", info.Agent, info.Name, err)
	}
	if wrapped {
		t.wrapIn = inputProperty
		// The wrapper is as strict as an object input (bridge.StrictSchema).
		strict, err := bridge.StrictSchema(string(in))
		if err != nil {
			return nil, fmt.Errorf("mcp: %s.%s input schema: %w", info.Agent, info.Name, err)
		}
		in = json.RawMessage(strict)
	}
	var out json.RawMessage
	switch info.Kind {
	case operation.Request:
		if out, wrapped, err = objectSchema(info.OutputSchema, resultProperty); err != nil {
			return nil, fmt.Errorf("mcp: %s.%s output schema: %w", info.Agent, info.Name, err)
		}
		if wrapped {
			t.wrapOut = resultProperty
		}
	case operation.Stream:
		item, err := stripDialect(info.OutputSchema)
		if err != nil {
			return nil, fmt.Errorf("mcp: %s.%s item schema: %w", info.Agent, info.Name, err)
		}
		out = wrap(itemsProperty, json.RawMessage(fmt.Sprintf(`{"type":"array","items":%s}`, item)))
	default:
		out = json.RawMessage(acceptedSchema)
	}
	t.def = &mcp.Tool{
		Name:         ToolName(info),
		Title:        info.Agent + " " + info.Name,
		Description:  description(info),
		InputSchema:  in,
		OutputSchema: out,
		Annotations:  &mcp.ToolAnnotations{OpenWorldHint: ptr(false)},
	}
	return t, nil
}

func ptr[T any](v T) *T { return &v }

// acceptedSchema is the result of a one-way operation.
const acceptedSchema = `{"type":"object","properties":{"accepted":{"type":"boolean"},"conversation":{"type":"string"}},"required":["accepted","conversation"]}`

// description is the handler's doc comment and how the call runs.
func description(op operation.Info) string {
	doc := strings.TrimSpace(op.Doc)
	if doc == "" {
		doc = fmt.Sprintf("Operation %q of agent %s.", op.Name, op.Agent)
	}
	switch op.Kind {
	case operation.Command:
		return doc + " (One-way: the result says the command is on the log; nothing answers it.)"
	case operation.Event:
		return doc + " (Publishes an event the agent handles; nothing answers it.)"
	case operation.Stream:
		return doc + " (Streams: each item arrives as a progress notification, all of them in the result.)"
	}
	return doc
}

// objectSchema returns schema without its $schema keyword, wrapped under
// property when its type is not object.
func objectSchema(schema, property string) (json.RawMessage, bool, error) {
	s, err := stripDialect(schema)
	if err != nil {
		return nil, false, err
	}
	var head struct {
		Type any `json:"type"`
	}
	if err := json.Unmarshal(s, &head); err != nil {
		return nil, false, err
	}
	if head.Type == "object" {
		return s, false, nil
	}
	return wrap(property, s), true, nil
}

func wrap(property string, schema json.RawMessage) json.RawMessage {
	return json.RawMessage(fmt.Sprintf(`{"type":"object","properties":{%q:%s},"required":[%q]}`, property, schema, property))
}

// stripDialect drops the top-level $schema: MCP schemas are 2020-12 by
// default, and a nested one would be misread.
func stripDialect(schema string) (json.RawMessage, error) {
	if schema == "" {
		return json.RawMessage(`{}`), nil // unknown: any JSON value
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal([]byte(schema), &m); err != nil {
		return nil, err
	}
	delete(m, "$schema")
	return json.Marshal(m)
}

// arguments are the operation's JSON input from a call's arguments.
func (t *tool) arguments(raw json.RawMessage) ([]byte, error) {
	if t.wrapIn == "" {
		return raw, nil
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, fmt.Errorf("%w: %s: %v", bridge.ErrInput, t.def.Name, err)
	}
	in, ok := m[t.wrapIn]
	if !ok {
		return nil, fmt.Errorf("%w: %s: missing %q", bridge.ErrInput, t.def.Name, t.wrapIn)
	}
	for name := range m {
		if name != t.wrapIn {
			return nil, fmt.Errorf("%w: %s: unexpected argument %q (the only one is %q)", bridge.ErrInput, t.def.Name, name, t.wrapIn)
		}
	}
	return in, nil
}
