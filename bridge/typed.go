package bridge

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"

	"github.com/fxamacker/cbor/v2"
	"github.com/google/jsonschema-go/jsonschema"

	"github.com/lasergo/laser/operation"
	"github.com/lasergo/laser/runtime"
	"github.com/lasergo/laser/wire"
)

// ErrInput is matched by the error for a foreign call's arguments that do
// not fit the operation's input: the caller's mistake, answered as such and
// never sent to the agent.
var ErrInput = errors.New("bridge: invalid input")

// Operation is one generated operation ready to be called from a foreign
// protocol: its input schema resolved for validation.
type Operation struct {
	operation.Info
	input  *jsonschema.Resolved
	schema *jsonschema.Schema
}

// StrictSchema is an object schema with named properties made strict: its
// top level admits no property it does not name (additionalProperties:
// false, unless the schema says otherwise), so an extra argument is an
// error naming it instead of being dropped without a word. Any other
// schema is returned as it is.
func StrictSchema(schema string) (string, error) {
	if schema == "" {
		return schema, nil
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal([]byte(schema), &m); err != nil {
		return "", err
	}
	var typ string
	_ = json.Unmarshal(m["type"], &typ)
	_, named := m["properties"]
	_, stated := m["additionalProperties"]
	if typ != "object" || !named || stated {
		return schema, nil
	}
	m["additionalProperties"] = json.RawMessage("false")
	out, err := json.Marshal(m)
	if err != nil {
		return "", err
	}
	return string(out), nil
}

// NewOperation prepares op for calls; an input schema that does not
// resolve is an error (lasergen generates only resolvable ones). The input
// schema is made strict (StrictSchema).
func NewOperation(op operation.Info) (*Operation, error) {
	strict, err := StrictSchema(op.InputSchema)
	if err != nil {
		return nil, fmt.Errorf("bridge: %s.%s input schema: %w", op.Agent, op.Name, err)
	}
	op.InputSchema = strict
	o := &Operation{Info: op}
	if op.InputSchema == "" {
		return o, nil
	}
	var s jsonschema.Schema
	if err := json.Unmarshal([]byte(op.InputSchema), &s); err != nil {
		return nil, fmt.Errorf("bridge: %s.%s input schema: %w", op.Agent, op.Name, err)
	}
	o.schema = &s
	rs, err := s.Resolve(nil)
	if err != nil {
		return nil, fmt.Errorf("bridge: %s.%s input schema: %w", op.Agent, op.Name, err)
	}
	o.input = rs
	return o, nil
}

// EncodeInput checks args (JSON) against the input schema, decodes them
// into the operation's Go input type and encodes that in the operation's
// content type: the body the agent's dispatcher decodes. A mismatch is an
// error matching ErrInput.
func (o *Operation) EncodeInput(args []byte) ([]byte, error) {
	if len(bytes.TrimSpace(args)) == 0 {
		args = []byte("{}")
	}
	if o.input != nil {
		var instance any
		if err := json.Unmarshal(args, &instance); err != nil {
			return nil, fmt.Errorf("%w: %s: %v", ErrInput, o.Name, err)
		}
		if err := o.nulls(instance); err != nil {
			return nil, err
		}
		if err := o.input.Validate(instance); err != nil {
			return nil, fmt.Errorf("%w: %s: %v", ErrInput, o.Name, err)
		}
	}
	if o.Input == nil {
		if o.ContentType == wire.ContentJSON {
			return args, nil
		}
		v, err := untypedJSON(args)
		if err != nil {
			return nil, fmt.Errorf("%w: %s: %v", ErrInput, o.Name, err)
		}
		body, err := runtime.EncodeBody(v, o.ContentType)
		if err != nil {
			return nil, fmt.Errorf("bridge: encode %s input: %w", o.Name, err)
		}
		return body, nil
	}
	v := reflect.New(o.Input)
	if err := json.Unmarshal(args, v.Interface()); err != nil {
		return nil, fmt.Errorf("%w: %s: %v", ErrInput, o.Name, err)
	}
	body, err := runtime.EncodeBody(v.Elem().Interface(), o.ContentType)
	if err != nil {
		return nil, fmt.Errorf("bridge: encode %s input: %w", o.Name, err)
	}
	return body, nil
}

// nulls refuses a null argument the schema does not admit, naming it and
// the type it wants: the validator's own message for a null is unreadable.
func (o *Operation) nulls(instance any) error {
	args, ok := instance.(map[string]any)
	if !ok || o.schema == nil {
		return nil
	}
	names := make([]string, 0, len(args))
	for name, v := range args {
		if v == nil {
			names = append(names, name)
		}
	}
	slices.Sort(names)
	for _, name := range names {
		p := o.schema.Properties[name]
		if p == nil {
			continue // an extra argument: the schema's own check names it
		}
		types := p.Types
		if p.Type != "" {
			types = []string{p.Type}
		}
		if len(types) == 0 || slices.Contains(types, "null") {
			continue
		}
		return fmt.Errorf("%w: %s: argument %q is null, want %s", ErrInput, o.Name, name, strings.Join(types, " or "))
	}
	return nil
}

// OutputJSON decodes a reply or stream item body into the operation's Go
// output type and returns it as JSON, the form foreign protocols carry.
func (o *Operation) OutputJSON(m *runtime.Message) (json.RawMessage, error) {
	if o.Output == nil {
		return BodyJSON(m)
	}
	v := reflect.New(o.Output)
	if err := m.Decode(v.Interface(), o.ContentType); err != nil {
		return nil, fmt.Errorf("bridge: decode %s output: %w", o.Name, err)
	}
	return json.Marshal(v.Elem().Interface())
}

// ItemJSON is OutputJSON for one chunk body of a stream.
func (o *Operation) ItemJSON(body []byte) (json.RawMessage, error) {
	m := &runtime.Message{Envelope: &wire.Envelope{Kind: wire.KindChunk, Body: body}, ContentType: o.ContentType, HasContentType: true}
	return o.OutputJSON(m)
}

// untypedJSON decodes JSON into Go values CBOR encodes as JSON meant them:
// a whole number as an integer (a Go int field does not take a CBOR
// float), any other number as a float.
func untypedJSON(b []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	return numbers(v), nil
}

func numbers(v any) any {
	switch x := v.(type) {
	case json.Number:
		if i, err := x.Int64(); err == nil {
			return i
		}
		f, _ := x.Float64()
		return f
	case map[string]any:
		for k, e := range x {
			x[k] = numbers(e)
		}
	case []any:
		for i, e := range x {
			x[i] = numbers(e)
		}
	}
	return v
}

// untypedCBOR decodes CBOR maps with text keys, so the value marshals as
// JSON.
var untypedCBOR, _ = cbor.DecOptions{DefaultMapType: reflect.TypeFor[map[string]any]()}.DecMode()

// BodyJSON is a message body as JSON when no Go type is known: a JSON body
// as it is, a CBOR body converted, anything else as a JSON string of its
// text.
func BodyJSON(m *runtime.Message) (json.RawMessage, error) {
	body := m.Body()
	ct := m.ContentType
	if !m.HasContentType {
		ct = wire.ContentRaw
	}
	switch {
	case ct == wire.ContentJSON && json.Valid(body):
		return json.RawMessage(body), nil
	case ct == wire.ContentCBOR:
		var v any
		if err := untypedCBOR.Unmarshal(body, &v); err != nil {
			return nil, fmt.Errorf("bridge: decode CBOR body: %w", err)
		}
		return json.Marshal(v)
	}
	return json.Marshal(string(body))
}
