package iggy_test

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"testing"
	"time"

	"github.com/apache/iggy/foreign/go/client"
	"github.com/apache/iggy/foreign/go/client/tcp"
	iggcon "github.com/apache/iggy/foreign/go/contracts"

	"github.com/lasergo/laser/iggy"
	"github.com/lasergo/laser/iggytest"
	"github.com/lasergo/laser/internal/featuretest"
	"github.com/lasergo/laser/runtime"
	"github.com/lasergo/laser/wire"
)

// benchTarget is the server a benchmark runs against: the real one named by
// LASER_IGGY_ADDR, in a stream of its own for this run, or else the
// in-process test server.
type benchTarget struct {
	conn       string // connection string for iggy.Dial, naming the fresh stream
	addr       string // host:port for the bare SDK client
	user, pass string
	stream     string
	real       bool
	vsr        bool // the connection string asks for protocol=vsr
}

// newBenchTarget picks the server. On a real server every call gets a fresh
// stream (deleted when the benchmark ends), so runs never read each other's
// records and a stream left by a crashed run does not skew the next one.
func newBenchTarget(b *testing.B) benchTarget {
	b.Helper()
	if addr := os.Getenv(featuretest.RealServerEnv); addr != "" {
		u, err := url.Parse(addr)
		if err != nil || u.Scheme != "iggy" || u.User == nil {
			b.Fatalf("benchmarks need LASER_IGGY_ADDR as iggy://user:password@host:port/stream, got %q", addr)
		}
		pass, _ := u.User.Password()
		base := u.Path
		if len(base) > 0 && base[0] == '/' {
			base = base[1:]
		}
		if base == "" {
			base = "laser"
		}
		t := benchTarget{addr: u.Host, user: u.User.Username(), pass: pass, real: true, vsr: u.Query().Get("protocol") == "vsr"}
		t.stream = fmt.Sprintf("%s_bench_%d", base, time.Now().UnixNano())
		u.Path = "/" + t.stream
		t.conn = u.String()
		if u.Port() == "" {
			t.addr += ":8090"
		}
		b.Cleanup(func() { t.dropStream(b) })
		return t
	}
	s, err := iggytest.Listen("127.0.0.1:0", iggytest.Config{})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(s.Close)
	return benchTarget{conn: "iggy://iggy:iggy@" + s.Addr() + "/bench", addr: s.Addr(), user: "iggy", pass: "iggy", stream: "bench"}
}

// sdk returns a logged-in bare client, closed when the benchmark ends: the
// SDK's, or on VSR the transport's VSR client alone.
func (t benchTarget) sdk(b *testing.B) iggy.BenchClient {
	b.Helper()
	if t.vsr {
		c, err := iggy.DialBareVSR(t.addr, t.user, t.pass)
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { _ = c.Close() })
		return c
	}
	c, err := client.NewIggyClient(client.WithTcp(tcp.WithServerAddress(t.addr)))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = c.Close() })
	if _, err := c.LoginUser(t.user, t.pass); err != nil {
		b.Fatal(err)
	}
	return c
}

// dropStream deletes a real server's bench stream; a failure only leaves
// a stream behind, which later runs never reuse.
func (t benchTarget) dropStream(b *testing.B) {
	if t.vsr {
		b.Logf("bench stream %s left on the server (the benchmark deletes its stream over 0.8 only)", t.stream)
		return
	}
	c, err := client.NewIggyClient(client.WithTcp(tcp.WithServerAddress(t.addr)))
	if err != nil {
		return
	}
	defer func() { _ = c.Close() }()
	if _, err := c.LoginUser(t.user, t.pass); err != nil {
		return
	}
	if id, err := iggcon.NewIdentifier(t.stream); err == nil {
		if err := c.DeleteStream(id); err != nil {
			b.Logf("bench stream %s left on the server: %v", t.stream, err)
		}
	}
}

func (t benchTarget) label() string {
	if t.real {
		return "real Iggy server at " + t.addr
	}
	return "in-process test server"
}

// benchRig is what the Iggy benchmarks share: a transport and a bare SDK
// client on one server, and a one-partition topic in its stream.
type benchRig struct {
	target        benchTarget
	tr            *iggy.Transport
	sdk           iggy.BenchClient
	stream, topic iggcon.Identifier
}

func newBenchRig(b *testing.B, topic string) benchRig {
	b.Helper()
	target := newBenchTarget(b)
	tr, err := iggy.Dial(context.Background(), target.conn, iggy.Config{})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = tr.Close() })
	if err := tr.EnsureTopics(context.Background(), 1, topic); err != nil {
		b.Fatal(err)
	}
	return benchRig{target: target, tr: tr, sdk: target.sdk(b), stream: benchIdent(b, target.stream), topic: benchIdent(b, topic)}
}

// benchRecords returns n plain messages of benchPayload bytes with
// provenance headers (conversation, sender, idempotency key), numbered from
// first: what the bare loops skim and the consumer fully decodes, dedups
// and dispatches.
func benchRecords(b *testing.B, first, n int) []runtime.Outgoing {
	b.Helper()
	payload := make([]byte, benchPayload)
	recs := make([]runtime.Outgoing, n)
	for i := range recs {
		k := first + i
		prov := wire.Provenance{Conversation: wire.IDFromUint128(7, uint64(k)), Agent: "bench", IdempotencyKey: fmt.Sprintf("k-%d", k)}
		headers, err := prov.Headers()
		if err != nil {
			b.Fatal(err)
		}
		recs[i] = runtime.Outgoing{Headers: headers, Payload: payload}
	}
	return recs
}
