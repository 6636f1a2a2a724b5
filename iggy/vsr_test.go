package iggy

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/binary"
	"encoding/pem"
	"errors"
	"io"
	"math/big"
	"net"
	"os"
	"path/filepath"
	goruntime "runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"testing/iotest"
	"time"

	iggcon "github.com/apache/iggy/foreign/go/contracts"
	ierror "github.com/apache/iggy/foreign/go/errors"

	"github.com/lasergo/laser/iggy/internal/vsr"
	"github.com/lasergo/laser/iggytest"
	"github.com/lasergo/laser/lasertest"
	"github.com/lasergo/laser/runtime"
)

func dialFake(t *testing.T, f *fakeVSR, query string, cfg Config) *Transport {
	t.Helper()
	tr, err := Dial(t.Context(), f.url(query), cfg)
	if err != nil {
		t.Fatalf("dial %s: %v", f.addr(), err)
	}
	t.Cleanup(func() { _ = tr.Close() })
	return tr
}

func TestVSRLogsInWithUserAndPassword(t *testing.T) {
	f := newFakeVSR(t)
	tr := dialFake(t, f, "", Config{})
	if n, err := tr.Partitions(t.Context(), "t"); err != nil || n != 1 {
		t.Fatalf("partitions: %d, %v", n, err)
	}
	want, _ := vsr.RegisterBody("iggy", "iggy", "")
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.logins) != 1 || !bytes.Equal(f.logins[0], want) {
		t.Fatalf("register bodies %v, want one %v", f.logins, want)
	}
}

func TestVSRLogsInWithAToken(t *testing.T) {
	f := newFakeVSR(t)
	tr, err := Dial(t.Context(), "iggy+pat://tok-1@"+f.addr()+"/s?protocol=vsr", Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer tr.Close()
	want, _ := vsr.RegisterBody("", "", "tok-1")
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.logins) != 1 || !bytes.Equal(f.logins[0], want) {
		t.Fatalf("register bodies %v, want one %v", f.logins, want)
	}
}

// eviction is an eviction frame of req's client with reason.
func eviction(req fakeRequest, reason vsr.EvictionReason) []byte {
	h := make([]byte, vsr.HeaderSize)
	binary.LittleEndian.PutUint32(h[48:], vsr.HeaderSize)
	h[60] = byte(vsr.CommandEviction)
	copy(h[128:144], req.hdr[128:144])
	h[255] = byte(reason)
	return h
}

func TestVSREvictedLoginIsInvalidCredentials(t *testing.T) {
	f := newFakeVSR(t)
	f.setHandle(func(f *fakeVSR, req fakeRequest) []byte {
		if req.op == vsr.OpRegister {
			return eviction(req, vsr.EvictInvalidCredentials)
		}
		return honest(f, req)
	})
	_, err := Dial(t.Context(), f.url(""), Config{})
	if !errors.Is(err, ierror.ErrInvalidCredentials) || !strings.Contains(err.Error(), f.addr()) || !strings.Contains(err.Error(), "evicted: invalid credentials") {
		t.Fatalf("err = %v; want ErrInvalidCredentials naming %s and the eviction", err, f.addr())
	}
}

func TestVSRServerErrorCodesReadAsTheSDKErrors(t *testing.T) {
	f := newFakeVSR(t)
	f.setHandle(answerWith(vsr.CodeGetTopic, func(req fakeRequest) []byte { return reply(req, 2010, nil) }))
	tr := dialFake(t, f, "", Config{})
	_, err := tr.Partitions(t.Context(), "t")
	if !errors.Is(err, ierror.ErrTopicIdNotFound) {
		t.Fatalf("err = %v; want ErrTopicIdNotFound", err)
	}
	f.setHandle(honest)
	if _, err := tr.Partitions(t.Context(), "t"); err != nil {
		t.Fatal(err)
	}
	if n := f.conns.Load(); n != 1 {
		t.Fatalf("%d connections; a refusal must keep the link", n)
	}
}

func TestVSRBadRepliesDropTheLinkWithAClearError(t *testing.T) {
	cases := map[string]struct {
		answer func(req fakeRequest) []byte
		want   string
	}{
		"wrong frame kind": {func(req fakeRequest) []byte { r := reply(req, 0, fakeTopic()); r[60] = 6; return r }, "frame kind 6"},
		"oversized frame": {func(req fakeRequest) []byte {
			r := reply(req, 0, nil)
			binary.LittleEndian.PutUint32(r[48:], vsr.MaxFrameSize+1)
			return r
		}, "a frame of 67108865 bytes"},
		"size under the header": {func(req fakeRequest) []byte {
			r := reply(req, 0, nil)
			binary.LittleEndian.PutUint32(r[48:], 100)
			return r
		}, "a frame of 100 bytes"},
		"wrong client id":            {func(req fakeRequest) []byte { r := reply(req, 0, fakeTopic()); r[165] ^= 1; return r }, "for client"},
		"eviction of another client": {func(req fakeRequest) []byte { req.hdr[130] ^= 1; return eviction(req, vsr.EvictNoSession) }, "for client"},
		"wrong request id":           {func(req fakeRequest) []byte { req.request += 7; return reply(req, 0, fakeTopic()) }, "answers request"},
		"wrong operation":            {func(req fakeRequest) []byte { req.op = vsr.OpCreateTopic; return reply(req, 0, fakeTopic()) }, "answers operation 132, want 2"},
		"size not matching": {func(req fakeRequest) []byte {
			r := reply(req, 0, fakeTopic())
			binary.LittleEndian.PutUint32(r[48:], uint32(len(r)+50)) // then the server hangs up
			return r
		}, "unexpected EOF"},
		"malformed body": {func(req fakeRequest) []byte { return reply(req, 0, fakeTopic()[:60]) }, "topic"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			f := newFakeVSR(t)
			tr := dialFake(t, f, "", Config{})
			var once sync.Once
			f.setHandle(func(f *fakeVSR, req fakeRequest) []byte {
				if req.op == vsr.OpNonReplicated && req.code == vsr.CodeGetTopic {
					var out []byte
					once.Do(func() {
						out = tc.answer(req)
						f.hangUp.Store(int32(req.conn)) // after the bad frame, as a server that gave up
					})
					if out != nil {
						return out
					}
				}
				return honest(f, req)
			})
			_, err := tr.Partitions(t.Context(), "t")
			if err == nil || !strings.Contains(err.Error(), f.addr()) || !strings.Contains(err.Error(), tc.want) || !isLost(err) {
				t.Fatalf("err = %v; want ErrConnectionLost naming %s and %q", err, f.addr(), tc.want)
			}
			if _, err := tr.Partitions(t.Context(), "t"); err != nil {
				t.Fatalf("after the bad reply: %v", err)
			}
			if n := f.conns.Load(); n != 2 {
				t.Fatalf("%d connections, want the link rebuilt once", n)
			}
		})
	}
}

func TestVSRCallTimesOutOnASilentServer(t *testing.T) {
	f := newFakeVSR(t)
	release := make(chan struct{})
	t.Cleanup(func() { close(release) })
	tr := dialFake(t, f, "", Config{CallTimeout: 200 * time.Millisecond})
	f.setHandle(answerWith(vsr.CodeGetTopic, func(req fakeRequest) []byte { <-release; return nil }))
	_, err := tr.Partitions(t.Context(), "t")
	if !errors.Is(err, ErrTimeout) {
		t.Fatalf("err = %v; want ErrTimeout", err)
	}
}

// pollReplyOf is a poll reply holding payloads at offsets from base, as the
// server would send them.
func pollReplyOf(base uint64, payloads ...string) []byte {
	msgs := make([]vsr.Outgoing, len(payloads))
	for i, p := range payloads {
		msgs[i] = vsr.Outgoing{ID: [16]byte{byte(i + 1)}, Payload: []byte(p)}
	}
	send := vsr.AppendSend(nil, []byte{2, 1, 's'}, []byte{2, 1, 't'}, 0, 1, msgs)
	batch := send[4+binary.LittleEndian.Uint32(send):]
	binary.LittleEndian.PutUint64(batch[8:], base)
	r := binary.LittleEndian.AppendUint32(nil, 0)
	r = binary.LittleEndian.AppendUint64(r, base+uint64(len(payloads))-1)
	r = binary.LittleEndian.AppendUint32(r, uint32(len(payloads)))
	return append(r, batch...)
}

func TestVSRSubscriptionPollsRecords(t *testing.T) {
	f := newFakeVSR(t)
	f.setHandle(answerWith(vsr.CodePollMessages, func(req fakeRequest) []byte { return reply(req, 0, pollReplyOf(0, "a", "b")) }))
	tr := dialFake(t, f, "", Config{})
	sub, err := tr.Join(t.Context(), "t", "g")
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Close()
	recs, err := sub.Poll(t.Context(), 10)
	if err != nil || len(recs) != 2 || string(recs[0].Payload) != "a" || recs[1].Position.Offset != 1 {
		t.Fatalf("poll: %+v, %v", recs, err)
	}
}

func TestVSRPollWithABadChecksumReturnsNoRecords(t *testing.T) {
	f := newFakeVSR(t)
	f.setHandle(answerWith(vsr.CodePollMessages, func(req fakeRequest) []byte {
		p := pollReplyOf(0, "a", "b")
		p[len(p)-1] ^= 1
		return reply(req, 0, p)
	}))
	tr := dialFake(t, f, "", Config{})
	sub, err := tr.Join(t.Context(), "t", "g")
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Close()
	recs, err := sub.Poll(t.Context(), 10)
	if len(recs) != 0 || !isLost(err) || !strings.Contains(err.Error(), f.addr()) || !strings.Contains(err.Error(), "does not match its checksum") {
		t.Fatalf("poll: %d records, err %v; want none and ErrConnectionLost naming %s and the checksum", len(recs), err, f.addr())
	}
	before := f.conns.Load()
	f.setHandle(answerWith(vsr.CodePollMessages, func(req fakeRequest) []byte { return reply(req, 0, pollReplyOf(0, "a", "b")) }))
	if recs, err := sub.Poll(t.Context(), 10); err != nil || len(recs) != 2 {
		t.Fatalf("after the bad reply: %d records, %v", len(recs), err)
	}
	if f.conns.Load() != before+1 {
		t.Fatalf("%d connections after the bad reply, want the subscription's rebuilt once", f.conns.Load()-before)
	}
}

func TestVSRFollowsTheLeader(t *testing.T) {
	leader, follower := newFakeVSR(t), newFakeVSR(t)
	nodes := clusterOf(leader.addr(), follower.addr())
	leader.nodes, follower.nodes = nodes, nodes
	tr := dialFake(t, follower, "", Config{})
	if _, err := tr.Partitions(t.Context(), "t"); err != nil {
		t.Fatal(err)
	}
	leader.mu.Lock()
	defer leader.mu.Unlock()
	if len(leader.logins) != 1 {
		t.Fatalf("%d logins on the leader, want 1", len(leader.logins))
	}
}

func TestVSRRedirectLoopFails(t *testing.T) {
	a, b := newFakeVSR(t), newFakeVSR(t)
	a.nodes = clusterOf(b.addr(), a.addr())
	b.nodes = clusterOf(a.addr(), b.addr())
	_, err := Dial(t.Context(), a.url(""), Config{})
	if err == nil || !strings.Contains(err.Error(), "redirect loop") || !strings.Contains(err.Error(), a.addr()) {
		t.Fatalf("err = %v; want a redirect loop naming %s", err, a.addr())
	}
}

// A node dialled by host name that leads the cluster, named by IP in the
// cluster metadata, is the node the client is on: it stays there.
func TestVSRLeaderDialledByHostNameStaysOnTheNode(t *testing.T) {
	f := newFakeVSR(t)
	_, port, _ := net.SplitHostPort(f.addr())
	f.nodes = clusterOf("127.0.0.1:"+port, "127.0.0.1:1")
	tr, err := Dial(t.Context(), "iggy://iggy:iggy@localhost:"+port+"/s?protocol=vsr", Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer tr.Close()
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.logins) != 1 {
		t.Fatalf("%d logins on the one leader node (connections %d); want 1", len(f.logins), f.conns.Load())
	}
}

// The same over TLS with a certificate for the host name only: the client
// stays on the node it dialled rather than re-dialling it by IP.
func TestVSRTLSLeaderDialledByHostNameStaysOnTheNode(t *testing.T) {
	cert, ca := selfSigned(t, "localhost")
	f := tlsFake(t, cert)
	_, port, _ := net.SplitHostPort(f.addr())
	f.nodes = clusterOf("127.0.0.1:"+port, "127.0.0.1:1")
	tr, err := Dial(t.Context(), "iggy://iggy:iggy@localhost:"+port+"/s?protocol=vsr&tls_ca_file="+ca, Config{})
	if err != nil {
		t.Fatalf("dial of the leader itself failed: %v", err)
	}
	defer tr.Close()
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.logins) != 1 {
		t.Fatalf("%d logins; want 1", len(f.logins))
	}
}

// A redirect over TLS to a leader the metadata names by IP verifies the
// leader's certificate against the host name the connection string dialled.
func TestVSRTLSRedirectKeepsTheDialledServerName(t *testing.T) {
	cert, ca := selfSigned(t, "localhost")
	leader, follower := tlsFake(t, cert), tlsFake(t, cert)
	nodes := clusterOf(leader.addr(), follower.addr())
	leader.nodes, follower.nodes = nodes, nodes
	_, port, _ := net.SplitHostPort(follower.addr())
	tr, err := Dial(t.Context(), "iggy://iggy:iggy@localhost:"+port+"/s?protocol=vsr&tls_ca_file="+ca, Config{})
	if err != nil {
		t.Fatalf("dial through the redirect: %v", err)
	}
	defer tr.Close()
	if _, err := tr.Partitions(t.Context(), "t"); err != nil {
		t.Fatal(err)
	}
	leader.mu.Lock()
	defer leader.mu.Unlock()
	if len(leader.logins) != 1 {
		t.Fatalf("%d logins on the leader, want 1", len(leader.logins))
	}
}

// selfSigned writes a self-signed certificate for the DNS name name only
// (no IP address) and returns the server's TLS certificate and the path of
// the CA file holding it.
func selfSigned(t *testing.T, name string) (tls.Certificate, string) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: name},
		DNSNames:              []string{name},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(time.Hour),
		IsCA:                  true,
		BasicConstraintsValid: true,
		KeyUsage:              x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	ca := filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(ca, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}, ca
}

func tlsFake(t *testing.T, cert tls.Certificate) *fakeVSR {
	return newFakeVSRWrapped(t, func(c net.Conn) net.Conn {
		return tls.Server(c, &tls.Config{Certificates: []tls.Certificate{cert}})
	})
}

func TestVSRTLSConnectsWithTheRightName(t *testing.T) {
	cert, ca := selfSigned(t, "iggy.test")
	f := tlsFake(t, cert)
	tr := dialFake(t, f, "&tls=true&tls_ca_file="+ca+"&tls_domain=iggy.test", Config{})
	if _, err := tr.Partitions(t.Context(), "t"); err != nil {
		t.Fatal(err)
	}
}

func TestVSRTLSFromConfig(t *testing.T) {
	cert, _ := selfSigned(t, "iggy.test")
	f := tlsFake(t, cert)
	pool := x509.NewCertPool()
	pool.AddCert(must(x509.ParseCertificate(cert.Certificate[0])))
	tr := dialFake(t, f, "", Config{TLS: &tls.Config{RootCAs: pool, ServerName: "iggy.test"}})
	if _, err := tr.Partitions(t.Context(), "t"); err != nil {
		t.Fatal(err)
	}
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

func TestVSRTLSRefusesAWrongName(t *testing.T) {
	cert, ca := selfSigned(t, "iggy.test")
	f := tlsFake(t, cert)
	_, err := Dial(t.Context(), f.url("&tls_ca_file="+ca+"&tls_domain=other.test"), Config{})
	if err == nil || !strings.Contains(err.Error(), "TLS handshake with Iggy at "+f.addr()) || !strings.Contains(err.Error(), "other.test") {
		t.Fatalf("err = %v; want a TLS handshake error naming %s and other.test", err, f.addr())
	}
	if _, ok := errors.AsType[*tls.CertificateVerificationError](err); !ok {
		t.Fatalf("err = %v; want a certificate verification error", err)
	}
}

func TestVSRTLSNeverFallsBackToPlaintext(t *testing.T) {
	f := newFakeVSR(t) // plaintext
	_, ca := selfSigned(t, "iggy.test")
	_, err := Dial(t.Context(), f.url("&tls=true&tls_ca_file="+ca), Config{DialTimeout: time.Second})
	if err == nil || !strings.Contains(err.Error(), "TLS handshake with Iggy at "+f.addr()) {
		t.Fatalf("err = %v; want a failed TLS handshake", err)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.logins) != 0 {
		t.Fatalf("%d plaintext logins; TLS must fail closed", len(f.logins))
	}
}

func TestVSRTLSRefusedWithThe08Protocol(t *testing.T) {
	_, err := Dial(t.Context(), "iggy://iggy:iggy@127.0.0.1:1/s", Config{TLS: &tls.Config{}})
	if !errors.Is(err, ErrConnString) || !strings.Contains(err.Error(), "protocol=vsr") {
		t.Fatalf("err = %v; want ErrConnString asking for protocol=vsr", err)
	}
}

func TestVSRReplaysANotYetCommittedRequestWithItsRequestID(t *testing.T) {
	f := newFakeVSR(t)
	var ids []uint64 // under f.mu
	f.setHandle(func(f *fakeVSR, req fakeRequest) []byte {
		if req.op == vsr.OpJoinConsumerGroup {
			f.mu.Lock()
			ids = append(ids, req.request)
			first := len(ids) == 1
			f.mu.Unlock()
			if first {
				return reply(req, transientNotCommitted, nil)
			}
		}
		return honest(f, req)
	})
	tr := dialFake(t, f, "", Config{})
	sub, err := tr.Join(t.Context(), "t", "g")
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Close()
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(ids) != 2 || ids[0] != ids[1] {
		t.Fatalf("join request ids %v; want one replay with the same id", ids)
	}
}

// The server keeps no request ids of sends, so a send it did not commit
// (57) is not replayed: the caller gets a transient error and retries.
func TestVSRSendNotCommittedIsATransientErrorNotAReplay(t *testing.T) {
	f := newFakeVSR(t)
	sends := 0 // under f.mu
	f.setHandle(func(f *fakeVSR, req fakeRequest) []byte {
		if req.op == vsr.OpSendMessages {
			f.mu.Lock()
			sends++
			first := sends == 1
			f.mu.Unlock()
			if first {
				return reply(req, transientNotCommitted, nil)
			}
			return reply(req, 0, make([]byte, 24))
		}
		return honest(f, req)
	})
	tr := dialFake(t, f, "", Config{})
	err := tr.Append(t.Context(), "t", runtime.Outgoing{Payload: []byte("a")})
	te, ok := errors.AsType[*runtime.Error](err)
	if !ok || !te.Retryable || isLost(err) {
		t.Fatalf("err = %v; want a transient error that is no lost connection", err)
	}
	f.mu.Lock()
	n := sends
	f.mu.Unlock()
	if n != 1 {
		t.Fatalf("%d sends reached the server; want the refused one alone, not replayed", n)
	}
	if err := tr.Append(t.Context(), "t", runtime.Outgoing{Payload: []byte("a")}); err != nil {
		t.Fatalf("the caller's retry: %v", err)
	}
}

// A batch over the largest frame goes out as several sends, each under it,
// on the same connection.
func TestVSRPublishSplitsABatchOverTheMaxFrame(t *testing.T) {
	f := newFakeVSR(t)
	var sizes []int // under f.mu
	f.setHandle(func(f *fakeVSR, req fakeRequest) []byte {
		if req.op == vsr.OpSendMessages {
			f.mu.Lock()
			sizes = append(sizes, vsr.HeaderSize+len(req.body))
			f.mu.Unlock()
			return reply(req, 0, make([]byte, 24))
		}
		return honest(f, req)
	})
	tr := dialFake(t, f, "", Config{})
	before := f.conns.Load()
	recs := make([]runtime.Outgoing, 7)
	for i := range recs {
		recs[i] = runtime.Outgoing{Payload: make([]byte, iggcon.MaxPayloadSize)}
	}
	if err := tr.Append(t.Context(), "t", recs...); err != nil {
		t.Fatal(err)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(sizes) != 2 || f.conns.Load() != before {
		t.Fatalf("send frames of %v bytes over %d new connections; want two sends on the same one", sizes, f.conns.Load()-before)
	}
	for _, n := range sizes {
		if n > vsr.MaxFrameSize {
			t.Fatalf("a send frame of %d bytes, over the limit of %d", n, vsr.MaxFrameSize)
		}
	}
}

// A record that alone takes more than one send holds is a permanent error
// naming its size and the limit. (The SDK caps a payload well under the
// frame limit, so the split is driven with a small room.)
func TestVSRSplitOfARecordOverTheRoomIsAnError(t *testing.T) {
	msg := func(n int) iggcon.IggyMessage { return iggcon.IggyMessage{Payload: make([]byte, n)} }
	b := &publishBatch{partition: 3, index: []int{4, 7, 9}, msgs: []iggcon.IggyMessage{msg(10), msg(10), msg(500)}, ids: make([]iggcon.MessageID, 3)}
	_, err := splitToFit([]*publishBatch{b}, 200)
	if !errors.Is(err, ierror.ErrTooBigMessagePayload) {
		t.Fatalf("err = %v; want ErrTooBigMessagePayload", err)
	}
	for _, want := range []string{"record 9", strconv.Itoa(500 + vsr.MessageHeaderSize), "200", strconv.Itoa(vsr.MaxFrameSize)} {
		if !strings.Contains(err.Error(), want) {
			t.Fatalf("err = %v; want it to name %q", err, want)
		}
	}
}

// The split keeps the partition, the order and the callers' indexes.
func TestVSRSplitKeepsOrderAndIndexes(t *testing.T) {
	msg := func(n int) iggcon.IggyMessage { return iggcon.IggyMessage{Payload: make([]byte, n)} }
	room := 2 * (vsr.MessageHeaderSize + 10)
	b := &publishBatch{partition: 3, index: []int{4, 7, 9}, msgs: []iggcon.IggyMessage{msg(10), msg(10), msg(10)}, ids: []iggcon.MessageID{{1}, {2}, {3}}}
	out, err := splitToFit([]*publishBatch{b}, room)
	if err != nil {
		t.Fatal(err)
	}
	if len(out) != 2 || out[0].partition != 3 || out[1].partition != 3 ||
		!slices.Equal(out[0].index, []int{4, 7}) || !slices.Equal(out[1].index, []int{9}) || out[1].ids[0] != (iggcon.MessageID{3}) {
		t.Fatalf("split into %+v", out)
	}
}

// A read over VSR of more than one frame holds gets the records that fit
// one, from the offset asked for: the test server caps its poll reply at
// the frame limit, as Iggy does.
func TestVSRReadRangeOverTheMaxFrameReadsWhatFits(t *testing.T) {
	srv := iggytest.Start(t, iggytest.Config{})
	tr, err := Dial(t.Context(), "iggy://iggy:iggy@"+srv.Addr()+"/s?protocol=vsr", Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer tr.Close()
	if err := tr.EnsureTopics(t.Context(), 1, "t"); err != nil {
		t.Fatal(err)
	}
	recs := make([]runtime.Outgoing, 7)
	for i := range recs {
		recs[i] = runtime.Outgoing{Payload: make([]byte, iggcon.MaxPayloadSize)}
	}
	if err := tr.Append(t.Context(), "t", recs...); err != nil {
		t.Fatal(err)
	}
	got, err := tr.ReadRange(t.Context(), "t", 0, 0, 10)
	if err != nil {
		t.Fatalf("ReadRange of 10 records: %v", err)
	}
	if len(got) == 0 || len(got) >= len(recs) || got[0].Offset != 0 {
		t.Fatalf("%d records; want from offset 0 the fewer than %d that fit one frame", len(got), len(recs))
	}
}

// A poll reply over the frame limit is read past and dropped, and the read
// asks again for fewer records on the same connection.
func TestVSRPollReplyOverTheMaxFrameAsksForFewer(t *testing.T) {
	f := newFakeVSR(t)
	var counts []uint32 // under f.mu
	f.setHandle(answerWith(vsr.CodePollMessages, func(req fakeRequest) []byte {
		count := binary.LittleEndian.Uint32(req.body[len(req.body)-5:])
		f.mu.Lock()
		counts = append(counts, count)
		first := len(counts) == 1
		f.mu.Unlock()
		if first {
			big := reply(req, 0, make([]byte, vsr.MaxFrameSize))
			return big
		}
		return reply(req, 0, pollReplyOf(0, "a", "b"))
	}))
	tr := dialFake(t, f, "", Config{})
	before := f.conns.Load()
	got, err := tr.ReadRange(t.Context(), "t", 0, 0, 8)
	if err != nil || len(got) != 2 {
		t.Fatalf("ReadRange: %d records, %v", len(got), err)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if !slices.Equal(counts, []uint32{8, 4}) || f.conns.Load() != before {
		t.Fatalf("poll counts %v over %d new connections; want 8 then 4 on the same one", counts, f.conns.Load()-before)
	}
}

// A reply whose header states a large body costs memory for the bytes
// that arrive, not for the size it states.
func TestVSRReplyBodyGrowsAsItArrives(t *testing.T) {
	var before, after goruntime.MemStats
	goruntime.ReadMemStats(&before)
	_, err := readGrowing(bytes.NewReader(make([]byte, 100)), vsr.MaxFrameSize)
	goruntime.ReadMemStats(&after)
	if !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Fatalf("err = %v; want io.ErrUnexpectedEOF", err)
	}
	if n := after.TotalAlloc - before.TotalAlloc; n > 8<<20 {
		t.Fatalf("%d bytes allocated for a 100-byte body stated as %d", n, vsr.MaxFrameSize)
	}
	body := bytes.Repeat([]byte("abc"), 1<<20)
	got, err := readGrowing(iotest.OneByteReader(bytes.NewReader(body[:len(body):len(body)])), len(body)-1)
	if err != nil || !bytes.Equal(got, body[:len(body)-1]) {
		t.Fatalf("read %d bytes, %v; want the %d stated", len(got), err, len(body)-1)
	}
}

func TestVSRHeartbeatPingsAnIdleLink(t *testing.T) {
	f := newFakeVSR(t)
	pings := make(chan struct{}, 8)
	f.setHandle(func(f *fakeVSR, req fakeRequest) []byte {
		if req.op == vsr.OpNonReplicated && req.code == vsr.CodePing {
			pings <- struct{}{}
		}
		return honest(f, req)
	})
	clk := lasertest.NewManualClock(time.Unix(1_000_000, 0))
	dialFake(t, f, "", Config{Clock: clk, CallTimeout: time.Hour})
	// The login's call timer, then the heartbeat's wait.
	if err := clk.BlockUntil(t.Context(), 2); err != nil {
		t.Fatal(err)
	}
	clk.Advance(heartbeatInterval)
	select {
	case <-pings:
	case <-time.After(10 * time.Second): // a watchdog, not a wait: the ping comes at once
		t.Fatal("no ping after the heartbeat interval")
	}
}

func TestVSRCommitRefusedByTheGroupFenceIsAPartitionLost(t *testing.T) {
	f := newFakeVSR(t)
	f.setHandle(func(f *fakeVSR, req fakeRequest) []byte {
		switch {
		case req.op == vsr.OpStoreConsumerOffset:
			return reply(req, uint32(ierror.ResourceNotFoundCode), nil)
		case req.op == vsr.OpNonReplicated && req.code == vsr.CodePollMessages:
			// Another member's partition: the empty reply naming the
			// resync sentinel.
			b := binary.LittleEndian.AppendUint32(nil, vsr.ResyncPartition)
			return reply(req, 0, append(b, make([]byte, 12)...))
		}
		return honest(f, req)
	})
	tr := dialFake(t, f, "", Config{})
	sub, err := tr.Join(t.Context(), "t", "g")
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Close()
	if err := sub.Commit(t.Context(), 0, 3); !errors.Is(err, runtime.ErrPartitionLost) {
		t.Fatalf("err = %v; want runtime.ErrPartitionLost", err)
	}
}

func TestVSRCommitRefusedOnAnOwnedPartitionMayBeRetried(t *testing.T) {
	f := newFakeVSR(t)
	f.setHandle(func(f *fakeVSR, req fakeRequest) []byte {
		switch {
		case req.op == vsr.OpStoreConsumerOffset:
			return reply(req, uint32(ierror.ResourceNotFoundCode), nil)
		case req.op == vsr.OpNonReplicated && req.code == vsr.CodePollMessages:
			return reply(req, 0, pollReplyOf(3, "x"))
		}
		return honest(f, req)
	})
	tr := dialFake(t, f, "", Config{})
	sub, err := tr.Join(t.Context(), "t", "g")
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Close()
	err = sub.Commit(t.Context(), 0, 3)
	te, ok := errors.AsType[*runtime.Error](err)
	if !ok || !te.Retryable || errors.Is(err, runtime.ErrPartitionLost) || !errors.Is(err, ierror.ErrResourceNotFound) {
		t.Fatalf("err = %v; want a transient ResourceNotFound, not a lost partition", err)
	}
}

// closeBlockingConn is a socket whose Close waits for release, as a TLS
// close_notify to a stalled peer does.
type closeBlockingConn struct {
	net.Conn
	closing chan struct{}
	release chan struct{}
	once    sync.Once
}

func (c *closeBlockingConn) Close() error {
	c.once.Do(func() { close(c.closing) })
	<-c.release
	return c.Conn.Close()
}

// A client that broke closes its socket after releasing the exchange, so
// other callers see the broken client at once instead of waiting on the
// close.
func TestVSRBrokenClientClosesOutsideTheExchange(t *testing.T) {
	client, server := net.Pipe()
	defer server.Close()
	conn := &closeBlockingConn{Conn: client, closing: make(chan struct{}), release: make(chan struct{})}
	defer close(conn.release)
	c := newVSRClient(conn, "pipe", 5*time.Second, vsr.ClientID{Lo: 1})
	go func() {
		var hdr [vsr.HeaderSize]byte
		if _, err := io.ReadFull(server, hdr[:]); err != nil {
			return
		}
		hdr[60] = 6 // not a reply: the client breaks
		_, _ = server.Write(hdr[:])
	}()
	first := make(chan error, 1)
	go func() { first <- c.Ping() }()
	select {
	case <-conn.closing:
	case err := <-first:
		t.Fatalf("the first ping returned %v before closing the socket", err)
	}
	second := make(chan error, 1)
	go func() { second <- c.Ping() }()
	select {
	case err := <-second:
		if !isLost(err) {
			t.Fatalf("second ping: %v; want ErrConnectionLost", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("a second call waited on the first call's close")
	}
}

// A poll call that outlives its timeout finishes after Poll returned; what
// it finds (here a record over the poll's bound, which it defers) must not
// reach Poll's variables (the race detector checks).
func TestVSRPollCallOutlivingItsTimeoutTouchesNothingOfPoll(t *testing.T) {
	f := newFakeVSR(t)
	held, release := make(chan struct{}), make(chan struct{})
	var once sync.Once
	f.setHandle(answerWith(vsr.CodePollMessages, func(req fakeRequest) []byte {
		once.Do(func() {
			close(held)
			<-release
		})
		return reply(req, 0, make([]byte, maxRecordReply+1))
	}))
	clock := lasertest.NewManualClock(time.Unix(1_700_000_000, 0))
	tr := dialFake(t, f, "", Config{Clock: clock, MaxPollBytes: 1 << 20})
	sub, err := tr.Join(t.Context(), "t", "g")
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Close()
	polled := make(chan error, 1)
	go func() {
		_, err := sub.Poll(t.Context(), 1)
		polled <- err
	}()
	<-held
	if err := clock.BlockUntil(t.Context(), 1); err != nil {
		t.Fatal(err)
	}
	clock.Advance(time.Hour) // past the call timeout
	if err := <-polled; !errors.Is(err, ErrTimeout) {
		t.Fatalf("poll: %v; want ErrTimeout", err)
	}
	close(release)
	// The abandoned call now completes and defers the record; so does the
	// next poll, on a new link.
	if recs, err := sub.Poll(t.Context(), 1); err != nil || len(recs) != 0 {
		t.Fatalf("next poll: %d records, %v", len(recs), err)
	}
}
