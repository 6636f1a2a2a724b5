package wire_test

import (
	"errors"
	"fmt"

	"github.com/lasergo/laser/wire"
)

func Example() {
	record := wire.IDFromUint128(0x01903c1faa000000, 1)
	corr := wire.IDFromUint128(0x01903c1faa000000, 5)
	target := wire.AgentID("trip-booker")
	env := &wire.Envelope{
		Kind:         wire.KindCommand,
		Record:       &record,
		Conversation: wire.IDFromUint128(0x01903c1faa000000, 2),
		Source:       "trip-planner",
		Target:       &target,
		Correlation:  &corr,
		Metadata:     wire.Metadata{{Key: "role", Value: wire.StrValue("assistant")}},
		Body:         []byte(`{"ask":"book the flight"}`),
	}
	if err := wire.Validate(env); err != nil {
		fmt.Println(err)
		return
	}
	payload, err := env.Marshal()
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("payload: %d bytes\n", len(payload))
	for _, h := range wire.EnvelopeHeaders(env, wire.ContentJSON) {
		fmt.Printf("header %s (%s): %x\n", h.Key, h.Value.Kind, h.Value.Data)
	}
	fmt.Println("partition key:", wire.PartitionKey(env.Conversation))

	decoded, err := wire.DecodeEnvelope(payload)
	if err != nil {
		fmt.Println(err)
		return
	}
	role, _ := decoded.Metadata.Get("role").AsStr()
	fmt.Printf("%s from %s to %s (%s): %s\n", decoded.Kind, decoded.Source, *decoded.Target, role, decoded.Body)
	// Output:
	// payload: 193 bytes
	// header agdx.av (uint32): 01000000
	// header agdx.ct (uint8): 01
	// header agdx.to (string): 747269702d626f6f6b6572
	// header gen_ai.agent.id (string): 747269702d706c616e6e6572
	// header gen_ai.conversation.id (string): 30314a3059315a41473030303030303030303030303030303032
	// partition key: 01J0Y1ZAG00000000000000002
	// command from trip-planner to trip-booker (assistant): {"ask":"book the flight"}
}

func ExampleValidate() {
	record := wire.IDFromUint128(0, 1)
	env := &wire.Envelope{
		Kind:         wire.KindCommand,
		Record:       &record,
		Conversation: wire.IDFromUint128(0, 2),
		Source:       "planner",
		Body:         []byte("{}"),
	}
	err := wire.Validate(env)
	fmt.Println(err)
	var ve *wire.ValidateError
	if errors.As(err, &ve) {
		fmt.Println(ve.Rule, ve.Kind, ve.Field, errors.Is(err, wire.ErrMissing))
	}
	// Output:
	// wire: invalid command envelope: missing correlation
	// missing command correlation true
}

func ExampleProvenance() {
	parent := wire.MessageID{Partition: 2, Offset: 7}
	prov := wire.Provenance{Conversation: wire.IDFromUint128(0x01903c1faa000000, 2), CausalParent: &parent, Agent: "planner"}
	headers, err := prov.Headers()
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, h := range headers {
		fmt.Printf("%s=%s\n", h.Key, h.Value.Data)
	}
	back, err := wire.DecodeProvenance(wire.MustEncodeHeaders(headers))
	fmt.Println(back.CausalParent, back.Agent, err)
	// Output:
	// agdx.cause=2:7
	// gen_ai.agent.id=planner
	// gen_ai.conversation.id=01J0Y1ZAG00000000000000002
	// 2:7 planner <nil>
}
