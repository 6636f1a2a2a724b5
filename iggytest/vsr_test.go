package iggytest_test

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"log/slog"
	"net"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/lasergo/laser/iggytest"
)

// vsrConn is a raw VSR client: it writes request frames and reads reply
// and eviction frames, so the tests see every header byte.
type vsrConn struct {
	t      *testing.T
	nc     net.Conn
	client [16]byte
}

func dialVSR(t *testing.T, srv *iggytest.Server) *vsrConn {
	t.Helper()
	var d net.Dialer
	nc, err := d.DialContext(t.Context(), "tcp", srv.Addr())
	if err != nil {
		t.Fatalf("dial: %v", err)
	}
	t.Cleanup(func() { _ = nc.Close() })
	_ = nc.SetDeadline(time.Now().Add(10 * time.Second)) // a hung server fails the test instead of hanging it
	return &vsrConn{t: t, nc: nc, client: [16]byte{0: 0x2a, 15: 0x07}}
}

// frame builds a request frame: the 256-byte header, then body.
func (v *vsrConn) frame(op uint8, code uint32, session, request uint64, body []byte) []byte {
	h := make([]byte, 256)
	binary.LittleEndian.PutUint32(h[48:], uint32(256+len(body)))
	h[60] = 5 // Request
	copy(h[128:], v.client[:])
	binary.LittleEndian.PutUint64(h[168:], request)
	h[176] = op
	binary.LittleEndian.PutUint64(h[184:], session)
	if op == 2 {
		binary.LittleEndian.PutUint32(h[196:], code)
	}
	return append(h, body...)
}

func (v *vsrConn) write(b []byte) {
	v.t.Helper()
	if _, err := v.nc.Write(b); err != nil {
		v.t.Fatalf("write: %v", err)
	}
}

// read returns the next frame's header and body.
func (v *vsrConn) read() (hdr, body []byte) {
	v.t.Helper()
	hdr = make([]byte, 256)
	if _, err := io.ReadFull(v.nc, hdr); err != nil {
		v.t.Fatalf("read a frame header: %v", err)
	}
	size := binary.LittleEndian.Uint32(hdr[48:])
	if size < 256 {
		v.t.Fatalf("frame size %d is under 256", size)
	}
	body = make([]byte, size-256)
	if _, err := io.ReadFull(v.nc, body); err != nil {
		v.t.Fatalf("read a frame body: %v", err)
	}
	return hdr, body
}

// wantClosed fails unless the server closed the connection (a reset
// counts: a server that stops reading an oversized frame leaves bytes
// unread).
func (v *vsrConn) wantClosed() {
	v.t.Helper()
	var b [1]byte
	if _, err := v.nc.Read(b[:]); !errors.Is(err, io.EOF) && !errors.Is(err, syscall.ECONNRESET) {
		v.t.Fatalf("read after the last frame = %v, want EOF (connection closed)", err)
	}
}

// wantEviction reads an eviction frame with reason and the closed connection.
func (v *vsrConn) wantEviction(reason uint8) {
	v.t.Helper()
	hdr, _ := v.read()
	if hdr[60] != 13 {
		v.t.Fatalf("frame command = %d, want 13 (Eviction)", hdr[60])
	}
	if !bytes.Equal(hdr[128:144], v.client[:]) {
		v.t.Errorf("eviction client = %x, want %x", hdr[128:144], v.client)
	}
	if hdr[255] != reason {
		v.t.Fatalf("eviction reason = %d, want %d", hdr[255], reason)
	}
	v.wantClosed()
}

func loginBody(user, pass string) []byte {
	b := binary.LittleEndian.AppendUint32(nil, 11<<10)
	b = append(b, nameBytes("test-sdk")...)
	b = append(b, nameBytes("1.0.0")...)
	b = append(b, nameBytes(user)...)
	b = append(b, nameBytes(pass)...)
	return binary.LittleEndian.AppendUint32(b, 0)
}

func tokenBody(token string) []byte {
	b := binary.LittleEndian.AppendUint32(nil, 11<<10)
	b = append(b, nameBytes("test-sdk")...)
	b = append(b, nameBytes("1.0.0")...)
	b = append(b, nameBytes(token)...)
	return binary.LittleEndian.AppendUint32(b, 0)
}

func nameBytes(s string) []byte { return append([]byte{byte(len(s))}, s...) }

// register logs in and returns the session.
func (v *vsrConn) register() uint64 {
	v.t.Helper()
	v.write(v.frame(1, 0, 0, 0, loginBody("iggy", "iggy")))
	hdr, body := v.read()
	if hdr[60] != 8 || binary.LittleEndian.Uint32(hdr[216:]) != 0 {
		v.t.Fatalf("register answered command %d status %d, want a Reply with status 0", hdr[60], binary.LittleEndian.Uint32(hdr[216:]))
	}
	if len(body) < 20 || binary.LittleEndian.Uint32(body) != 0 {
		v.t.Fatalf("register body = %x, want a result section of count 0 and the session", body)
	}
	return binary.LittleEndian.Uint64(body[8:])
}

func TestVSRRegisterOpensASession(t *testing.T) {
	v := dialVSR(t, iggytest.Start(t, iggytest.Config{}))
	v.write(v.frame(1, 0, 0, 0, loginBody("iggy", "iggy")))
	hdr, body := v.read()
	if hdr[208] != 1 {
		t.Errorf("reply operation = %d, want 1 (Register)", hdr[208])
	}
	if !bytes.Equal(hdr[160:176], v.client[:]) {
		t.Errorf("reply client = %x, want %x", hdr[160:176], v.client)
	}
	// count 0, user id 0, session, protocol version, server version
	if got := binary.LittleEndian.Uint32(body[4:]); got != 0 {
		t.Errorf("user id = %d, want 0 (root)", got)
	}
	if s := binary.LittleEndian.Uint64(body[8:]); s == 0 {
		t.Error("session = 0, want a session")
	}
	if n := int(body[20]); len(body) != 21+n {
		t.Errorf("register body is %d bytes, want 21 + a %d-byte server version", len(body), n)
	}
}

func TestVSRRegisterWithTokenOpensASession(t *testing.T) {
	v := dialVSR(t, iggytest.Start(t, iggytest.Config{Tokens: []string{"iggypat-t"}}))
	v.write(v.frame(1, 0, 0, 0, tokenBody("iggypat-t")))
	hdr, body := v.read()
	if hdr[60] != 8 || binary.LittleEndian.Uint64(body[8:]) == 0 {
		t.Fatalf("token register answered command %d, body %x; want a Reply with a session", hdr[60], body)
	}
}

func TestVSRBadPasswordIsEvicted(t *testing.T) {
	v := dialVSR(t, iggytest.Start(t, iggytest.Config{}))
	v.write(v.frame(1, 0, 0, 0, loginBody("iggy", "wrong")))
	v.wantEviction(9) // InvalidCredentials
}

func TestVSRUnknownTokenIsEvicted(t *testing.T) {
	v := dialVSR(t, iggytest.Start(t, iggytest.Config{}))
	v.write(v.frame(1, 0, 0, 0, tokenBody("iggypat-unknown")))
	v.wantEviction(10) // InvalidToken
}

func TestVSRLoginWithoutVersionPrefixIsEvicted(t *testing.T) {
	v := dialVSR(t, iggytest.Start(t, iggytest.Config{}))
	v.write(v.frame(1, 0, 0, 0, []byte{1, 2, 3}))
	v.wantEviction(15) // MalformedLogin
}

func TestVSRReplyEchoesRequestAndOperation(t *testing.T) {
	v := dialVSR(t, iggytest.Start(t, iggytest.Config{}))
	session := v.register()
	v.write(v.frame(128, 0, session, 7, nameBytes("s"))) // CreateStream
	hdr, body := v.read()
	if got := binary.LittleEndian.Uint64(hdr[200:]); got != 7 {
		t.Errorf("reply request = %d, want 7", got)
	}
	if hdr[208] != 128 {
		t.Errorf("reply operation = %d, want 128", hdr[208])
	}
	if binary.LittleEndian.Uint32(body) != 0 || len(body) < 4+33 {
		t.Fatalf("create stream body = %x, want result count 0 and the stream", body)
	}
	if name := string(body[4+33 : 4+33+int(body[4+32])]); name != "s" {
		t.Errorf("stream name = %q, want s", name)
	}
}

func TestVSRMetadataRejectionTravelsInTheResultSection(t *testing.T) {
	v := dialVSR(t, iggytest.Start(t, iggytest.Config{}))
	session := v.register()
	v.write(v.frame(128, 0, session, 1, nameBytes("s")))
	v.read()
	v.write(v.frame(128, 0, session, 2, nameBytes("s")))
	hdr, body := v.read()
	if st := binary.LittleEndian.Uint32(hdr[216:]); st != 0 {
		t.Errorf("header status = %d, want 0 (the rejection is in the body)", st)
	}
	want := []byte{1, 0, 0, 0, 0, 0, 0, 0}
	want = binary.LittleEndian.AppendUint32(want, iggytest.StatusStreamNameAlreadyExists)
	if !bytes.Equal(body, want) {
		t.Errorf("body = %x, want %x (count 1, index 0, code)", body, want)
	}
}

func TestVSRQueryErrorTravelsInTheStatus(t *testing.T) {
	v := dialVSR(t, iggytest.Start(t, iggytest.Config{}))
	session := v.register()
	v.write(v.frame(2, iggytest.CmdGetConsumerGroups, session, 1, []byte{2, 1, 'x', 2, 1, 't'}))
	hdr, body := v.read()
	if st := binary.LittleEndian.Uint32(hdr[216:]); st != iggytest.StatusStreamNameNotFound {
		t.Errorf("status = %d, want %d", st, iggytest.StatusStreamNameNotFound)
	}
	if len(body) != 0 {
		t.Errorf("an error reply carries %d body bytes, want 0", len(body))
	}
}

func TestVSRRequestBeforeRegisterIsUnauthenticated(t *testing.T) {
	v := dialVSR(t, iggytest.Start(t, iggytest.Config{}))
	v.write(v.frame(2, iggytest.CmdGetStreams, 0, 0, nil))
	hdr, _ := v.read()
	if st := binary.LittleEndian.Uint32(hdr[216:]); st != iggytest.StatusUnauthenticated {
		t.Errorf("status = %d, want %d (Unauthenticated)", st, iggytest.StatusUnauthenticated)
	}
}

// Over VSR the 0.8 login commands do not log in: a connection is
// authenticated only by the register, which opens its session.
func TestVSRThe08LoginCommandsAreRefused(t *testing.T) {
	for _, c := range []struct {
		name string
		code uint32
		body []byte
	}{
		{"password", iggytest.CmdLogin, append(append(nameBytes("iggy"), nameBytes("iggy")...), 0, 0, 0, 0, 0, 0, 0, 0)},
		{"token", iggytest.CmdLoginWithToken, nameBytes("token")},
	} {
		t.Run(c.name, func(t *testing.T) {
			v := dialVSR(t, iggytest.Start(t, iggytest.Config{}))
			v.write(v.frame(2, c.code, 0, 0, c.body))
			hdr, _ := v.read()
			if st := binary.LittleEndian.Uint32(hdr[216:]); st != iggytest.StatusInvalidCommand {
				t.Fatalf("login command %d: status %d, want %d (InvalidCommand)", c.code, st, iggytest.StatusInvalidCommand)
			}
			v.write(v.frame(2, iggytest.CmdGetStreams, 0, 0, nil))
			hdr, _ = v.read()
			if st := binary.LittleEndian.Uint32(hdr[216:]); st != iggytest.StatusUnauthenticated {
				t.Fatalf("GetStreams after it: status %d, want %d (Unauthenticated)", st, iggytest.StatusUnauthenticated)
			}
		})
	}
}

// A change sent as a non-replicated request would skip the session's
// request numbering: it is refused, and nothing changes.
func TestVSRNonReplicatedRequestOfAReplicatedCommandIsRefused(t *testing.T) {
	v := dialVSR(t, iggytest.Start(t, iggytest.Config{}))
	session := v.register()
	v.write(v.frame(2, iggytest.CmdCreateStream, session, 1, nameBytes("s")))
	hdr, _ := v.read()
	if st := binary.LittleEndian.Uint32(hdr[216:]); st != iggytest.StatusInvalidCommand {
		t.Fatalf("status = %d, want %d (InvalidCommand)", st, iggytest.StatusInvalidCommand)
	}
	v.write(v.frame(2, iggytest.CmdGetStreams, session, 1, nil))
	_, body := v.read()
	if len(body) != 0 {
		t.Fatalf("GetStreams answers %d bytes; want no stream", len(body))
	}
}

func TestVSRPingNeedsNoSession(t *testing.T) {
	v := dialVSR(t, iggytest.Start(t, iggytest.Config{}))
	v.write(v.frame(2, iggytest.CmdPing, 0, 0, nil))
	hdr, _ := v.read()
	if hdr[60] != 8 || binary.LittleEndian.Uint32(hdr[216:]) != 0 {
		t.Errorf("ping answered command %d status %d, want a Reply with status 0", hdr[60], binary.LittleEndian.Uint32(hdr[216:]))
	}
}

func TestVSRRequestOfAnotherSessionIsEvicted(t *testing.T) {
	v := dialVSR(t, iggytest.Start(t, iggytest.Config{}))
	session := v.register()
	v.write(v.frame(128, 0, session+1, 1, nameBytes("s")))
	v.wantEviction(1) // NoSession
}

func TestVSRReplicatedRequestWithoutSessionIsEvicted(t *testing.T) {
	v := dialVSR(t, iggytest.Start(t, iggytest.Config{}))
	v.write(v.frame(128, 0, 0, 1, nameBytes("s")))
	v.wantEviction(1) // NoSession
}

// logBuffer collects a server's log lines for a test to read.
type logBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *logBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

func TestVSRUnknownOperationIsEvictedAndLogged(t *testing.T) {
	var logs logBuffer
	v := dialVSR(t, iggytest.Start(t, iggytest.Config{Logger: slog.New(slog.NewTextHandler(&logs, nil))}))
	session := v.register()
	v.write(v.frame(99, 0, session, 1, nil))
	v.wantEviction(4) // InvalidRequestOperation
	if !strings.Contains(logs.String(), "unknown operation 99") {
		t.Errorf("log = %q, want the reason (unknown operation 99)", logs.String())
	}
}

func TestVSROversizedFrameIsEvictedUnread(t *testing.T) {
	v := dialVSR(t, iggytest.Start(t, iggytest.Config{}))
	f := v.frame(1, 0, 0, 0, nil)
	binary.LittleEndian.PutUint32(f[48:], 256+5<<10) // over the 4 KiB allowed before login
	v.write(f)
	v.wantEviction(6) // InvalidRequestBodySize
}

func TestVSRFrameSmallerThanItsHeaderClosesTheConnection(t *testing.T) {
	v := dialVSR(t, iggytest.Start(t, iggytest.Config{}))
	f := v.frame(1, 0, 0, 0, nil)
	binary.LittleEndian.PutUint32(f[48:], 100)
	v.write(f)
	v.wantClosed()
}

func TestVSRFrameThatIsNotARequestClosesTheConnection(t *testing.T) {
	v := dialVSR(t, iggytest.Start(t, iggytest.Config{}))
	f := v.frame(1, 0, 0, 0, loginBody("iggy", "iggy"))
	f[60] = 8 // Reply
	v.write(f)
	v.wantClosed()
}

func TestVSRClientIDChangeClosesTheConnection(t *testing.T) {
	v := dialVSR(t, iggytest.Start(t, iggytest.Config{}))
	session := v.register()
	v.client[3] = 0xff
	v.write(v.frame(2, iggytest.CmdPing, session, 1, nil))
	v.wantClosed()
}

func TestOneListenerServesBothFramings(t *testing.T) {
	srv := iggytest.Start(t, iggytest.Config{})
	legacy := login(t, srv)
	v := dialVSR(t, srv)
	session := v.register()
	v.write(v.frame(128, 0, session, 1, nameBytes("shared")))
	v.read()
	st, err := legacy.GetStream(id(t, "shared"))
	if err != nil || st == nil || st.Name != "shared" {
		t.Fatalf("the stream created over VSR, read over 0.8: %+v, %v", st, err)
	}
}

// option encodes one VSR option entry: a string key, then a value of kind.
func option(key string, kind byte, val []byte) []byte {
	b := append([]byte{2}, binary.LittleEndian.AppendUint32(nil, uint32(len(key)))...)
	b = append(b, key...)
	b = append(b, kind)
	b = binary.LittleEndian.AppendUint32(b, uint32(len(val)))
	return append(b, val...)
}

func TestVSRCreateTopicKeepsItsOptions(t *testing.T) {
	v := dialVSR(t, iggytest.Start(t, iggytest.Config{}))
	session := v.register()
	v.write(v.frame(128, 0, session, 1, nameBytes("s")))
	v.read()
	opts := append(option("consumer_offset_durability", 2, []byte("replicated")),
		option("message_expiry", 12, binary.LittleEndian.AppendUint64(nil, 5_000_000))...)
	body := append([]byte{2, 1, 's'}, binary.LittleEndian.AppendUint32(nil, 3)...)
	body = append(append(body, nameBytes("t")...), opts...)
	v.write(v.frame(132, 0, session, 2, body))
	_, created := v.read()
	if binary.LittleEndian.Uint32(created) != 0 {
		t.Fatalf("create topic rejected: %x", created)
	}

	v.write(v.frame(2, iggytest.CmdGetTopic, session, 2, []byte{2, 1, 's', 2, 1, 't'}))
	_, topic := v.read()
	if got := binary.LittleEndian.Uint32(topic[12:]); got != 3 {
		t.Errorf("partitions = %d, want 3", got)
	}
	if got := binary.LittleEndian.Uint64(topic[16:]); got != 5_000_000 {
		t.Errorf("message expiry = %d, want the option's 5000000", got)
	}
	at := 49 + 1 + int(topic[49])
	n := int(binary.LittleEndian.Uint32(topic[at:]))
	if got := topic[at+4 : at+4+n]; !bytes.Equal(got, opts) {
		t.Errorf("options = %x, want them echoed: %x", got, opts)
	}
	rest := topic[at+4+n:]
	derived := rest[4 : 4+binary.LittleEndian.Uint32(rest)]
	if want := option("message_expiry", 12, binary.LittleEndian.AppendUint64(nil, 5_000_000)); !bytes.Contains(derived, want) {
		t.Errorf("derived options %x lack the expiry in effect %x", derived, want)
	}
	if partitions := rest[4+len(derived):]; len(partitions) != 3*40 {
		t.Errorf("after the derived options: %d bytes, want 3 partitions of 40", len(partitions))
	}
}

func TestVSRGetTopicsIsCountedAndEmptyForAMissingStream(t *testing.T) {
	v := dialVSR(t, iggytest.Start(t, iggytest.Config{}))
	session := v.register()
	v.write(v.frame(2, iggytest.CmdGetTopics, session, 1, []byte{2, 1, 'x'}))
	if hdr, body := v.read(); binary.LittleEndian.Uint32(hdr[216:]) != 0 || !bytes.Equal(body, []byte{0, 0, 0, 0}) {
		t.Errorf("topics of a missing stream: status %d, body %x; want status 0 and count 0", binary.LittleEndian.Uint32(hdr[216:]), body)
	}
	v.write(v.frame(128, 0, session, 1, nameBytes("x")))
	v.read()
	body := append([]byte{2, 1, 'x'}, binary.LittleEndian.AppendUint32(nil, 1)...)
	for i, name := range []string{"a", "b"} {
		v.write(v.frame(132, 0, session, uint64(2+i), append(append([]byte(nil), body...), nameBytes(name)...)))
		v.read()
	}
	v.write(v.frame(2, iggytest.CmdGetTopics, session, 3, []byte{2, 1, 'x'}))
	if _, got := v.read(); binary.LittleEndian.Uint32(got) != 2 {
		t.Errorf("topics count = %d, want 2", binary.LittleEndian.Uint32(got))
	}
}

func TestVSRFaultInjectionKeysOnCommandCodes(t *testing.T) {
	srv := iggytest.Start(t, iggytest.Config{})
	v := dialVSR(t, srv)
	session := v.register()
	srv.FailNext(iggytest.CmdGetStreams, iggytest.StatusFeatureUnavailable, 1)
	v.write(v.frame(2, iggytest.CmdGetStreams, session, 1, nil))
	if hdr, _ := v.read(); binary.LittleEndian.Uint32(hdr[216:]) != iggytest.StatusFeatureUnavailable {
		t.Errorf("status = %d, want the injected %d", binary.LittleEndian.Uint32(hdr[216:]), iggytest.StatusFeatureUnavailable)
	}
	if n := srv.Requests(iggytest.CmdLoginRegister); n != 1 {
		t.Errorf("Requests(CmdLoginRegister) = %d, want 1", n)
	}
}
