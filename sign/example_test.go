package sign_test

import (
	"errors"
	"fmt"

	"github.com/lasergo/laser/sign"
	"github.com/lasergo/laser/wire"
)

func Example() {
	var seed [32]byte
	copy(seed[:], "an example seed of 32 bytes.....")
	key := sign.NewKey(seed)

	reg := sign.NewRegistry()
	if err := reg.Enroll("user-42", key.Public()); err != nil {
		fmt.Println(err)
		return
	}

	record, corr := wire.IDFromUint128(0, 1), wire.IDFromUint128(0, 3)
	env := &wire.Envelope{
		Kind: wire.KindCommand, Record: &record, Conversation: wire.IDFromUint128(0, 2),
		Source: "planner", Correlation: &corr, Body: []byte("{}"),
	}
	// Bind the headers the record will carry, as every on-log gate requires.
	if err := key.Sign(env, wire.NewSignatureContext(wire.ContentJSON, wire.AgentOpVersion)); err != nil {
		fmt.Println(err)
		return
	}
	payload, _ := env.Marshal()
	headers := wire.EnvelopeHeaders(env, wire.ContentJSON)

	// The consumer side: decode, read the observed context, verify at the
	// broker's record timestamp.
	received, _ := wire.DecodeEnvelope(payload)
	observed, _ := sign.ObservedContext(wire.MustEncodeHeaders(headers))
	v, err := reg.VerifyObserved(received, observed, 1_717_171_777_000_000)
	fmt.Println(v.Principal, v.Kind, err)

	received.Body = []byte(`{"evil":true}`)
	_, err = reg.VerifyObserved(received, observed, 1_717_171_777_000_000)
	fmt.Println(errors.Is(err, sign.ErrBadSignature))
	// Output:
	// user-42 agent <nil>
	// true
}
