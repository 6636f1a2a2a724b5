package bridge_test

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/lasergo/laser/bridge"
	"github.com/lasergo/laser/runtime"
	"github.com/lasergo/laser/wire"
)

func TestEnterAppendsTheBridgeToThePath(t *testing.T) {
	prev := []string{"edge-gateway", "a2a-gateway"}
	hops, err := bridge.Enter("mcp-gateway", prev)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"edge-gateway", "a2a-gateway", "mcp-gateway"}, hops); diff != "" {
		t.Fatalf("hops (-want +got):\n%s", diff)
	}
	if len(prev) != 2 {
		t.Fatalf("Enter changed the previous path: %v", prev)
	}
}

func TestEnterDoesNotShareTheCallersArray(t *testing.T) {
	prev := make([]string, 1, 4)
	prev[0] = "a"
	first, _ := bridge.Enter("b", prev)
	second, _ := bridge.Enter("c", prev)
	if first[1] != "b" || second[1] != "c" {
		t.Fatalf("two entries from one path share an array: %v %v", first, second)
	}
}

func TestEnterRefusesARepeatedBridgeAsALoop(t *testing.T) {
	_, err := bridge.Enter("a2a-gateway", []string{"edge-gateway", "a2a-gateway", "mcp-gateway"})
	if !errors.Is(err, bridge.ErrLoop) {
		t.Fatalf("err = %v, want ErrLoop", err)
	}
	var le *bridge.LoopError
	if !errors.As(err, &le) || le.Bridge != "a2a-gateway" || len(le.Hops) != 3 {
		t.Fatalf("err = %#v, want a LoopError naming a2a-gateway and the 3-hop path", err)
	}
	if errors.Is(err, bridge.ErrBadHops) {
		t.Fatal("a loop must be distinct from a malformed path")
	}
}

func TestEnterRefusesAnEmptyBridgeID(t *testing.T) {
	if _, err := bridge.Enter("", nil); !errors.Is(err, bridge.ErrBadHops) {
		t.Fatalf("err = %v, want ErrBadHops", err)
	}
}

func TestHopsRoundTripThroughMetadata(t *testing.T) {
	var md wire.Metadata
	md.Set(wire.MetaBridgeHops, bridge.HopsValue([]string{"x", "y"}))
	env := wire.Envelope{Metadata: md}
	raw, err := env.Metadata.Get(wire.MetaBridgeHops).MarshalCBOR()
	if err != nil {
		t.Fatal(err)
	}
	var back wire.Value
	if err := back.UnmarshalCBOR(raw); err != nil {
		t.Fatal(err)
	}
	var md2 wire.Metadata
	md2.Set(wire.MetaBridgeHops, back)
	hops, err := bridge.Hops(md2)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"x", "y"}, hops); diff != "" {
		t.Fatalf("hops (-want +got):\n%s", diff)
	}
}

func TestHopsAbsentIsAnEmptyPath(t *testing.T) {
	hops, err := bridge.Hops(nil)
	if err != nil || hops != nil {
		t.Fatalf("Hops(nil) = %v, %v", hops, err)
	}
}

func TestHopsRefusesAValueThatIsNotAListOfIDs(t *testing.T) {
	for name, v := range map[string]wire.Value{
		"string":      wire.StrValue("a"),
		"int entry":   wire.ListValue(wire.StrValue("a"), wire.IntValue(1)),
		"empty entry": wire.ListValue(wire.StrValue("")),
	} {
		t.Run(name, func(t *testing.T) {
			var md wire.Metadata
			md.Set(wire.MetaBridgeHops, v)
			if _, err := bridge.Hops(md); !errors.Is(err, bridge.ErrBadHops) {
				t.Fatalf("err = %v, want ErrBadHops", err)
			}
		})
	}
}

func TestEnterMessageReadsTheEnvelopesPath(t *testing.T) {
	var md wire.Metadata
	md.Set(wire.MetaBridgeHops, bridge.HopsValue([]string{"mcp-gateway"}))
	m := &runtime.Message{Envelope: &wire.Envelope{Metadata: md}}
	if _, err := bridge.EnterMessage("mcp-gateway", m); !errors.Is(err, bridge.ErrLoop) {
		t.Fatalf("err = %v, want ErrLoop", err)
	}
	hops, err := bridge.EnterMessage("a2a-gateway", m)
	if err != nil || len(hops) != 2 {
		t.Fatalf("hops = %v, %v", hops, err)
	}
	if hops, err := bridge.EnterMessage("a2a-gateway", &runtime.Message{}); err != nil || len(hops) != 1 {
		t.Fatalf("a plain message: hops = %v, %v", hops, err)
	}
}

func TestHopsFromJSON(t *testing.T) {
	hops, err := bridge.HopsFromJSON([]any{"a", "b"})
	if err != nil || len(hops) != 2 {
		t.Fatalf("hops = %v, %v", hops, err)
	}
	if hops, err := bridge.HopsFromJSON(nil); hops != nil || err != nil {
		t.Fatalf("nil: %v, %v", hops, err)
	}
	for _, bad := range []any{"a", []any{"a", 2.0}, []any{""}} {
		if _, err := bridge.HopsFromJSON(bad); !errors.Is(err, bridge.ErrBadHops) {
			t.Fatalf("HopsFromJSON(%v) err = %v, want ErrBadHops", bad, err)
		}
	}
}
