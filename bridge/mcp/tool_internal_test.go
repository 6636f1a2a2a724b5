package mcp

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/lasergo/laser/bridge"
	"github.com/lasergo/laser/operation"
	"github.com/lasergo/laser/wire"
)

func TestAWrappedInputIsStrict(t *testing.T) {
	tl, err := newTool(operation.Info{Agent: "echo", Name: "say", Kind: operation.Command, Topic: "t", ContentType: wire.ContentJSON, InputSchema: `{"type":"string"}`})
	if err != nil {
		t.Fatal(err)
	}
	var schema map[string]any
	if err := json.Unmarshal(tl.def.InputSchema.(json.RawMessage), &schema); err != nil {
		t.Fatal(err)
	}
	if schema["additionalProperties"] != false {
		t.Fatalf("wrapped input schema %v, want additionalProperties false", schema)
	}
	if _, err := tl.arguments(json.RawMessage(`{"input":"hi","loud":true}`)); !errors.Is(err, bridge.ErrInput) || !strings.Contains(err.Error(), `"loud"`) {
		t.Fatalf("err = %v, want ErrInput naming loud", err)
	}
	if in, err := tl.arguments(json.RawMessage(`{"input":"hi"}`)); err != nil || string(in) != `"hi"` {
		t.Fatalf("arguments = %s, %v", in, err)
	}
}
