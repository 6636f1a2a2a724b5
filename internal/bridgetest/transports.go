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
