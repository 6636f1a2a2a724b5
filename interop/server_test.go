package interop

import (
	"context"
	"crypto/rand"
	"fmt"
	"net/url"
	"os"
	"strings"
	"testing"

	"github.com/lasergo/laser/iggy"
	"github.com/lasergo/laser/runtime"
)

// EnvVSRAddr names a real Iggy server speaking VSR (0.9+) to run the suite
// against instead of the in-process one: iggy://user:password@host:port, or
// host:port for user iggy, password iggy. Each test makes a stream of its own.
// LASER_IGGY_ADDR serves as well when it asks for protocol=vsr.
const EnvVSRAddr = "LASER_IGGY_VSR_ADDR"

// endpoint is one server both SDKs reach, and the stream a test uses on it.
type endpoint struct {
	goConn string // laser-go's connection string, stream and framing included
	pyConn string // the reference SDK's: user:password@host:port
	stream string
}

// server returns the endpoint of a fresh stream: on the real server
// LASER_IGGY_VSR_ADDR (or a VSR LASER_IGGY_ADDR) names, else on an
// in-process server started for the test.
func server(t *testing.T) endpoint {
	t.Helper()
	stream := "crosssdk-" + rand.Text()[:10]
	if addr, ok := realServer(); ok {
		ep, err := endpointAt(addr, stream)
		if err != nil {
			t.Fatal(err)
		}
		return ep
	}
	addr := startInProcess(t)
	ep, err := endpointAt(addr, stream)
	if err != nil {
		t.Fatal(err)
	}
	return ep
}

// realServer returns the address of the real VSR server the environment
// names, if any.
func realServer() (string, bool) {
	if addr := os.Getenv(EnvVSRAddr); addr != "" {
		return addr, true
	}
	if addr := os.Getenv("LASER_IGGY_ADDR"); strings.Contains(addr, "protocol=vsr") {
		return addr, true
	}
	return "", false
}

// endpointAt builds both SDKs' connection strings for stream on the server
// at addr (host:port or iggy://user:password@host:port[/stream][?query]).
func endpointAt(addr, stream string) (endpoint, error) {
	if !strings.Contains(addr, "://") {
		addr = "iggy://iggy:iggy@" + addr
	}
	u, err := url.Parse(addr)
	if err != nil || u.Scheme != "iggy" || u.User == nil || u.Host == "" {
		return endpoint{}, fmt.Errorf("%s or LASER_IGGY_ADDR: %q is not host:port or iggy://user:password@host:port", EnvVSRAddr, addr)
	}
	pass, _ := u.User.Password()
	q := u.Query()
	q.Set("protocol", "vsr")
	goURL := url.URL{Scheme: "iggy", User: u.User, Host: u.Host, Path: "/" + stream, RawQuery: q.Encode()}
	return endpoint{
		goConn: goURL.String(),
		pyConn: u.User.Username() + ":" + pass + "@" + u.Host,
		stream: stream,
	}, nil
}

// dial connects a laser-go client to the endpoint; it is closed when the
// test ends.
func dial(ctx context.Context, t *testing.T, ep endpoint) *runtime.Client {
	t.Helper()
	tr, err := iggy.Dial(ctx, ep.goConn, iggy.Config{})
	if err != nil {
		t.Fatalf("laser-go cannot dial %s: %v", ep.goConn, err)
	}
	client := runtime.NewClient(tr, runtime.ClientConfig{Logger: testLogger(t)})
	t.Cleanup(func() { // after the agents, which stop first
		client.Close()
		tr.Close()
	})
	return client
}
