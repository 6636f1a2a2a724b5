package iggytest_test

import (
	"errors"
	"testing"

	"github.com/apache/iggy/foreign/go/client"
	"github.com/apache/iggy/foreign/go/client/tcp"
	iggcon "github.com/apache/iggy/foreign/go/contracts"
	ierror "github.com/apache/iggy/foreign/go/errors"

	"github.com/lasergo/laser/iggytest"
)

// dial connects the official SDK to the test server without logging in.
func dial(t *testing.T, s *iggytest.Server) iggcon.Client {
	t.Helper()
	c, err := client.NewIggyClient(client.WithTcp(tcp.WithServerAddress(s.Addr())))
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// login connects and logs in as root.
func login(t *testing.T, s *iggytest.Server) iggcon.Client {
	t.Helper()
	c := dial(t, s)
	if _, err := c.LoginUser("iggy", "iggy"); err != nil {
		t.Fatalf("login: %v", err)
	}
	return c
}

func id[T uint32 | string](t *testing.T, v T) iggcon.Identifier {
	t.Helper()
	i, err := iggcon.NewIdentifier(v)
	if err != nil {
		t.Fatalf("identifier %v: %v", v, err)
	}
	return i
}

// setup creates stream "s" and topic "t" with n partitions.
func setup(t *testing.T, c iggcon.Client, partitions uint32) {
	t.Helper()
	if _, err := c.CreateStream("s"); err != nil {
		t.Fatalf("create stream: %v", err)
	}
	if _, err := c.CreateTopic(id(t, "s"), "t", partitions, iggcon.CompressionAlgorithmNone, iggcon.IggyExpiryNeverExpire, 0, nil); err != nil {
		t.Fatalf("create topic: %v", err)
	}
}

func message(t *testing.T, payload string, opts ...iggcon.IggyMessageOpt) iggcon.IggyMessage {
	t.Helper()
	m, err := iggcon.NewIggyMessage([]byte(payload), opts...)
	if err != nil {
		t.Fatalf("message: %v", err)
	}
	return m
}

func send(t *testing.T, c iggcon.Client, p iggcon.Partitioning, payloads ...string) {
	t.Helper()
	msgs := make([]iggcon.IggyMessage, len(payloads))
	for i, pl := range payloads {
		msgs[i] = message(t, pl)
	}
	if err := c.SendMessages(id(t, "s"), id(t, "t"), p, msgs); err != nil {
		t.Fatalf("send: %v", err)
	}
}

func payloads(msgs []iggcon.IggyMessage) []string {
	out := make([]string, len(msgs))
	for i, m := range msgs {
		out[i] = string(m.Payload)
	}
	return out
}

func ptr(v uint32) *uint32 { return &v }

// wantCode fails unless err is an Iggy error with the given code.
func wantCode(t *testing.T, err error, code ierror.Code) {
	t.Helper()
	var ie ierror.IggyError
	if !errors.As(err, &ie) {
		t.Fatalf("error = %v, want Iggy error code %d", err, code)
	}
	if ie.Code() != code {
		t.Fatalf("error code = %d (%v), want %d", ie.Code(), err, code)
	}
}
