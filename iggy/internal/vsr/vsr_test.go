package vsr

import (
	"bytes"
	"encoding/binary"
	"errors"
	"testing"
)

// replyHeader builds a reply header answering request with op.
// testClient is the client id the tests' replies name.
var testClient = ClientID{Lo: 7, Hi: 9}

func replyHeader(bodyLen int, request uint64, op Operation, status uint32) [HeaderSize]byte {
	var h [HeaderSize]byte
	binary.LittleEndian.PutUint32(h[offSize:], uint32(HeaderSize+bodyLen))
	h[offCommand] = byte(CommandReply)
	binary.LittleEndian.PutUint64(h[offReplyClient:], testClient.Lo)
	binary.LittleEndian.PutUint64(h[offReplyClient+8:], testClient.Hi)
	binary.LittleEndian.PutUint64(h[offReplyRequest:], request)
	h[offReplyOperation] = byte(op)
	binary.LittleEndian.PutUint32(h[offReplyStatus:], status)
	return h
}

func TestStampNumbersRequestsAsTheServerDeduplicates(t *testing.T) {
	s := NewSession(ClientID{Lo: 7, Hi: 9})
	f := make([]byte, HeaderSize+3)
	if _, err := s.Stamp(f, CodeCreateStream); !errors.Is(err, ErrNotLoggedIn) {
		t.Fatalf("replicated request before login: err = %v, want ErrNotLoggedIn", err)
	}
	if id, err := s.Stamp(f, CodeLoginRegister); err != nil || id != 0 {
		t.Fatalf("register: id %d, err %v; want request 0", id, err)
	}
	if f[offOperation] != byte(OpRegister) || binary.LittleEndian.Uint64(f[offSession:]) != 0 || binary.LittleEndian.Uint32(f[offSize:]) != HeaderSize+3 {
		t.Fatalf("register header: op %d session %d size %d", f[offOperation], binary.LittleEndian.Uint64(f[offSession:]), binary.LittleEndian.Uint32(f[offSize:]))
	}
	if err := s.Bind(42); err != nil {
		t.Fatal(err)
	}
	steps := []struct {
		code uint32
		want uint64
	}{
		{CodePing, 1}, {CodeCreateStream, 1}, {CodeGetStream, 2}, {CodeCreateTopic, 2}, {CodeSendMessages, 3}, {CodeStoreOffset, 3}, {CodeJoinGroup, 3}, {CodePing, 4},
	}
	for _, st := range steps {
		id, err := s.Stamp(f, st.code)
		if err != nil || id != st.want {
			t.Fatalf("code %d: request %d, err %v; want %d", st.code, id, err, st.want)
		}
		if got := binary.LittleEndian.Uint64(f[offSession:]); got != 42 {
			t.Fatalf("code %d: session %d, want 42", st.code, got)
		}
		nonRepl := binary.LittleEndian.Uint32(f[offCode:])
		if (OperationOf(st.code) == OpNonReplicated) != (nonRepl == st.code) {
			t.Fatalf("code %d: reserved code field %d", st.code, nonRepl)
		}
	}
	if lo := binary.LittleEndian.Uint64(f[offClient:]); lo != 7 || f[offCommand] != byte(CommandRequest) {
		t.Fatalf("client lo %d, command %d", lo, f[offCommand])
	}
}

func TestDecodeReplyChecksEveryField(t *testing.T) {
	good := replyHeader(0, 5, OpNonReplicated, 0)
	if p, err := DecodeReply(&good, nil, testClient, 5, OpNonReplicated); err != nil || len(p) != 0 {
		t.Fatalf("good reply: %v %v", p, err)
	}
	cases := map[string]struct {
		h    func() [HeaderSize]byte
		body []byte
		want string
	}{
		"wrong kind": {func() [HeaderSize]byte { h := good; h[offCommand] = 5; return h }, nil, "frame kind 5"},
		"too small":  {func() [HeaderSize]byte { h := good; binary.LittleEndian.PutUint32(h[offSize:], 10); return h }, nil, "a frame of 10 bytes"},
		"oversized": {func() [HeaderSize]byte {
			h := good
			binary.LittleEndian.PutUint32(h[offSize:], MaxFrameSize+1)
			return h
		}, nil, "a frame of 67108865 bytes"},
		"size":      {func() [HeaderSize]byte { return replyHeader(4, 5, OpNonReplicated, 0) }, []byte{1}, "4-byte body, 1 came"},
		"request":   {func() [HeaderSize]byte { return replyHeader(0, 6, OpNonReplicated, 0) }, nil, "answers request 6, want 5"},
		"operation": {func() [HeaderSize]byte { return replyHeader(0, 5, OpCreateTopic, 0) }, nil, "answers operation 132, want 2"},
		"client":    {func() [HeaderSize]byte { h := good; h[offReplyClient] ^= 1; return h }, nil, "for client 00000000000000090000000000000006, want 00000000000000090000000000000007"},
		"eviction for another client": {func() [HeaderSize]byte {
			var h [HeaderSize]byte
			binary.LittleEndian.PutUint32(h[offSize:], HeaderSize)
			h[offCommand] = byte(CommandEviction)
			binary.LittleEndian.PutUint64(h[offClient:], 8)
			return h
		}, nil, "for client 00000000000000000000000000000008"},
	}
	for name, tc := range cases {
		h := tc.h()
		_, err := DecodeReply(&h, tc.body, testClient, 5, OpNonReplicated)
		if !errors.Is(err, ErrMalformed) || !bytes.Contains([]byte(err.Error()), []byte(tc.want)) {
			t.Errorf("%s: err = %v, want ErrMalformed saying %q", name, err, tc.want)
		}
	}
}

func TestDecodeReplyReportsRefusalsByStatusAndResult(t *testing.T) {
	h := replyHeader(0, 5, OpNonReplicated, 2010)
	if _, err := DecodeReply(&h, nil, testClient, 5, OpNonReplicated); func() bool { r, ok := errors.AsType[*Refused](err); return !ok || r.Code != 2010 }() {
		t.Fatalf("status: err = %v, want Refused 2010", err)
	}
	body := binary.LittleEndian.AppendUint32(nil, 1)
	body = binary.LittleEndian.AppendUint32(body, 0)
	body = binary.LittleEndian.AppendUint32(body, 1012)
	h = replyHeader(len(body), 5, OpCreateStream, 0)
	if _, err := DecodeReply(&h, body, testClient, 5, OpCreateStream); func() bool { r, ok := errors.AsType[*Refused](err); return !ok || r.Code != 1012 }() {
		t.Fatalf("result: err = %v, want Refused 1012", err)
	}
	ok := append(binary.LittleEndian.AppendUint32(nil, 0), 'x')
	h = replyHeader(len(ok), 5, OpCreateStream, 0)
	if p, err := DecodeReply(&h, ok, testClient, 5, OpCreateStream); err != nil || string(p) != "x" {
		t.Fatalf("committed: %q %v", p, err)
	}
	internal := append(binary.LittleEndian.AppendUint32(nil, 0), 'y')
	h = replyHeader(len(internal), 5, 64, 0)
	if p, err := DecodeReply(&h, internal, testClient, 5, OpCreateTopic); err != nil || string(p) != "y" {
		t.Fatalf("a topic created as CreateTopicWithAssignments: %q %v", p, err)
	}
	h = replyHeader(0, 5, OpSendMessages, 0)
	if _, err := DecodeReply(&h, nil, testClient, 5, OpSendMessages); !errors.Is(err, ErrMalformed) {
		t.Fatalf("empty send reply: err = %v, want ErrMalformed", err)
	}
}

func TestDecodeReplyReadsEvictions(t *testing.T) {
	var h [HeaderSize]byte
	binary.LittleEndian.PutUint32(h[offSize:], HeaderSize)
	h[offCommand] = byte(CommandEviction)
	binary.LittleEndian.PutUint64(h[offClient:], testClient.Lo)
	binary.LittleEndian.PutUint64(h[offClient+8:], testClient.Hi)
	h[offEvictReason] = byte(EvictIncompatibleProtocol)
	binary.LittleEndian.PutUint32(h[offEvictVersion:], 1<<20)
	binary.LittleEndian.PutUint32(h[offEvictVersionMin:], 1<<20)
	_, err := DecodeReply(&h, nil, testClient, 0, OpRegister)
	ev, ok := errors.AsType[*Evicted](err)
	if !ok || ev.Reason != EvictIncompatibleProtocol || err.Error() != "vsr: evicted: incompatible protocol version (client speaks 0.11.0, server 1.0.0..1.0.0)" {
		t.Fatalf("err = %v", err)
	}
}

func sampleSend(t testing.TB) ([]byte, []Outgoing) {
	msgs := []Outgoing{{ID: [16]byte{1}, Payload: []byte("hello"), Headers: []byte{1, 2, 3}}, {ID: [16]byte{2}, Payload: []byte("world!")}}
	b := AppendSend(nil, []byte{2, 1, 's'}, []byte{2, 1, 't'}, 3, 1000, msgs)
	if len(b) != SendSize(3, 3, msgs) {
		t.Fatalf("send body of %d bytes, SendSize says %d", len(b), SendSize(3, 3, msgs))
	}
	return b, msgs
}

// pollReply turns a send body into the poll reply a server would give for
// it at base offset base.
func pollReply(send []byte, base uint64) []byte {
	meta := binary.LittleEndian.Uint32(send)
	batch := append([]byte(nil), send[4+meta:]...)
	binary.LittleEndian.PutUint64(batch[bhBaseOffset:], base)
	binary.LittleEndian.PutUint64(batch[bhBaseTimestamp:], 77)
	count := binary.LittleEndian.Uint32(batch[bhCount:])
	r := binary.LittleEndian.AppendUint32(nil, 3)
	r = binary.LittleEndian.AppendUint64(r, base+uint64(count)-1)
	r = binary.LittleEndian.AppendUint32(r, count)
	return append(r, batch...)
}

func TestSendBatchPollsBackAsSent(t *testing.T) {
	send, msgs := sampleSend(t)
	r, pp, err := NewPollReader(pollReply(send, 10))
	if err != nil || pp.Partition != 3 || pp.Count != 2 || pp.CurrentOffset != 11 {
		t.Fatalf("prefix %+v, %v", pp, err)
	}
	for i, want := range msgs {
		m, ok, err := r.Next()
		if err != nil || !ok {
			t.Fatalf("message %d: %v %v", i, ok, err)
		}
		if m.Offset != 10+uint64(i) || m.Timestamp != 77 || m.ID != want.ID || !bytes.Equal(m.Payload, want.Payload) || !bytes.Equal(m.Headers, want.Headers) {
			t.Fatalf("message %d = %+v", i, m)
		}
	}
	if _, ok, err := r.Next(); ok || err != nil {
		t.Fatalf("after the last: %v %v", ok, err)
	}
}

func TestPollReaderRefusesBadBatches(t *testing.T) {
	send, _ := sampleSend(t)
	good := pollReply(send, 0)
	cases := map[string]func([]byte){
		"checksum":  func(b []byte) { b[len(b)-1] ^= 1 },
		"count":     func(b []byte) { binary.LittleEndian.PutUint32(b[12:], 3) },
		"batch len": func(b []byte) { binary.LittleEndian.PutUint64(b[16+bhLength:], 1<<40) },
		"frame len": func(b []byte) { binary.LittleEndian.PutUint32(b[16+BatchHeaderSize+mhPayloadLen:], 1<<20) },
		"reserved":  func(b []byte) { b[16+BatchHeaderSize+mhReserved] = 1 },
	}
	for name, mutate := range cases {
		b := append([]byte(nil), good...)
		mutate(b)
		r, _, err := NewPollReader(b)
		for err == nil {
			var ok bool
			if _, ok, err = r.Next(); !ok && err == nil {
				break
			}
		}
		if !errors.Is(err, ErrMalformed) {
			t.Errorf("%s: err = %v, want ErrMalformed", name, err)
		}
	}
}

func TestRegisterBodyAndReply(t *testing.T) {
	b, err := RegisterBody("iggy", "secret", "")
	if err != nil {
		t.Fatal(err)
	}
	want := binary.LittleEndian.AppendUint32(nil, ProtocolVersion)
	want = append(want, 8)
	want = append(want, "laser-go"...)
	want = append(want, 5)
	want = append(want, "0.9.0"...)
	want = append(append(want, 4), "iggy"...)
	want = append(append(want, 6), "secret"...)
	want = append(want, 0, 0, 0, 0)
	if !bytes.Equal(b, want) {
		t.Fatalf("register body\n got %v\nwant %v", b, want)
	}
	if _, err := RegisterBody("", "x", ""); err == nil {
		t.Fatal("an empty user was accepted")
	}
	p := binary.LittleEndian.AppendUint32(nil, 1)
	p = binary.LittleEndian.AppendUint64(p, 99)
	p = binary.LittleEndian.AppendUint32(p, ProtocolVersion)
	p = append(append(p, 3), "0.9"...)
	r, err := DecodeRegistered(p)
	if err != nil || r.UserID != 1 || r.Session != 99 || r.ServerVersion != "0.9" {
		t.Fatalf("%+v %v", r, err)
	}
	if _, err := DecodeRegistered(p[:len(p)-1]); !errors.Is(err, ErrMalformed) {
		t.Fatalf("truncated register reply: %v", err)
	}
}

// appendNode appends one node of cluster metadata.
func appendNode(b []byte, name, ip string, port uint16, role, status byte) []byte {
	b = binary.LittleEndian.AppendUint32(b, uint32(len(name)))
	b = append(b, name...)
	b = binary.LittleEndian.AppendUint32(b, uint32(len(ip)))
	b = append(b, ip...)
	b = binary.LittleEndian.AppendUint16(b, port)
	b = append(b, 0, 0, 0, 0, 0, 0, role, status)
	return b
}

func TestDecodeClusterMetadata(t *testing.T) {
	b := binary.LittleEndian.AppendUint32(nil, 1)
	b = append(b, 'c')
	b = binary.LittleEndian.AppendUint32(b, 2)
	b = appendNode(b, "a", "10.0.0.1", 8091, 1, 0)
	b = appendNode(b, "b", "10.0.0.2", 8092, 0, 0)
	name, nodes, err := DecodeClusterMetadata(b)
	if err != nil || name != "c" || len(nodes) != 2 || !nodes[1].Leader || nodes[0].Leader || nodes[1].Addr() != "10.0.0.2:8092" {
		t.Fatalf("%q %+v %v", name, nodes, err)
	}
	if _, _, err := DecodeClusterMetadata(b[:len(b)-1]); !errors.Is(err, ErrMalformed) {
		t.Fatalf("truncated: %v", err)
	}
}

// The Iggy server names its own routing id in a partition operation's
// reply, so only the request id and operation identify it.
func TestPartitionReplyNeedsNoClientID(t *testing.T) {
	h := replyHeader(0, 5, OpStoreConsumerOffset, 0)
	binary.LittleEndian.PutUint64(h[offReplyClient+8:], 1<<48)
	if err := CheckReplyTo(&h, testClient, 5, OpStoreConsumerOffset); err != nil {
		t.Fatalf("partition reply naming a routing id: %v", err)
	}
	h = replyHeader(0, 5, OpCreateStream, 0)
	binary.LittleEndian.PutUint64(h[offReplyClient+8:], 1<<48)
	if err := CheckReplyTo(&h, testClient, 5, OpCreateStream); !errors.Is(err, ErrMalformed) {
		t.Fatalf("metadata reply for another client: err = %v, want ErrMalformed", err)
	}
}
