// Package bridgetest runs the bridges' tests over every log laser-go
// ships: the embedded log and the in-process Iggy test server, and a real
// Iggy server when LASER_IGGY_ADDR names one.
package bridgetest

import (
	"testing"

	"github.com/lasergo/laser/bridge"
	"github.com/lasergo/laser/embedlog"
	"github.com/lasergo/laser/internal/featuretest"
	"github.com/lasergo/laser/runtime"
	"github.com/lasergo/laser/sign"
	"github.com/lasergo/laser/wire"
)

// EachTransport runs test once per transport, as a subtest named after it,
// with a fresh client whose topics are bootstrapped with one partition.
func EachTransport(t *testing.T, test func(t *testing.T, client *runtime.Client)) {
	t.Helper()
	for _, tr := range featuretest.Transports(t, "bridges") {
		t.Run(tr.Name, func(t *testing.T) {
			client := Client(t, tr.New(t))
			test(t, client)
		})
	}
}

// Client returns a client on tr with its topics bootstrapped (one
// partition), closed when t ends.
func Client(t *testing.T, tr runtime.Transport) *runtime.Client {
	t.Helper()
	client := runtime.NewClient(tr, runtime.ClientConfig{})
	t.Cleanup(func() { _ = client.Close() })
	if err := client.Bootstrap(t.Context(), 1); err != nil {
		t.Fatalf("bootstrap: %v", err)
	}
	return client
}

// MemClient is Client on a fresh embedded log, for tests whose rule does
// not depend on the transport.
func MemClient(t *testing.T) *runtime.Client {
	t.Helper()
	return Client(t, embedlog.New("bridges", embedlog.Config{}))
}

// Envelopes are the AGDX envelopes of conversation conv on topic, in log
// order; a plain message is a nil entry.
func Envelopes(t *testing.T, client *runtime.Client, conv wire.ID, topic string) []*wire.Envelope {
	t.Helper()
	h, err := bridge.Read(t.Context(), client.Transport(), conv, topic)
	if err != nil {
		t.Fatal(err)
	}
	out := make([]*wire.Envelope, len(h))
	for i, m := range h {
		out[i] = m.Envelope
	}
	return out
}

// TrustedClient is MemClient for a client that verifies what it reads with
// v: the bridges then replay only records whose signature verifies.
func TrustedClient(t *testing.T, v runtime.Verifier) *runtime.Client {
	t.Helper()
	client := runtime.NewClient(embedlog.New("bridges", embedlog.Config{}), runtime.ClientConfig{Verifier: v})
	t.Cleanup(func() { _ = client.Close() })
	if err := client.Bootstrap(t.Context(), 1); err != nil {
		t.Fatalf("bootstrap: %v", err)
	}
	return client
}

// Keys are the signing keys of a verifying test: the bridges' (enrolled as
// principal "gateway", allowed to send as every default bridge id) and the
// desk's (enrolled as "desk").
type Keys struct {
	Registry *sign.Registry
	Gateway  *sign.Key
	Desk     *sign.Key
	// Mallory is a key nobody enrolled.
	Mallory *sign.Key
}

// NewKeys returns Keys with fixed seeds.
func NewKeys(t *testing.T) *Keys {
	t.Helper()
	seed := func(b byte) *sign.Key {
		var s [32]byte
		s[0] = b
		return sign.NewKey(s)
	}
	k := &Keys{Registry: sign.NewRegistry(), Gateway: seed(1), Desk: seed(2), Mallory: seed(3)}
	if err := k.Registry.Enroll("gateway", k.Gateway.Public()); err != nil {
		t.Fatal(err)
	}
	if err := k.Registry.AllowSource("gateway", "a2a-gateway", "mcp-gateway", "agui-gateway"); err != nil {
		t.Fatal(err)
	}
	if err := k.Registry.Enroll("desk", k.Desk.Public()); err != nil {
		t.Fatal(err)
	}
	return k
}
