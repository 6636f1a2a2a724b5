package vsr

import (
	"encoding/binary"
	"errors"
	"testing"
)

// FuzzDecodeVSRReply feeds arbitrary frames (header and body) to the reply
// decoder and what it returns to the payload decoders: none may panic, and
// every failure is ErrMalformed, *Refused or *Evicted.
func FuzzDecodeVSRReply(f *testing.F) {
	send, _ := sampleSend(f)
	for _, seed := range []struct {
		op   Operation
		body []byte
	}{
		{OpNonReplicated, nil},
		{OpNonReplicated, pollReply(send, 4)},
		{OpCreateStream, append(binary.LittleEndian.AppendUint32(nil, 0), make([]byte, 40)...)},
		{OpRegister, append(binary.LittleEndian.AppendUint32(nil, 0), make([]byte, 20)...)},
		{OpNonReplicated, appendNode(binary.LittleEndian.AppendUint32(binary.LittleEndian.AppendUint32(nil, 0), 1), "n", "127.0.0.1", 1, 0, 0)},
	} {
		h := replyHeader(len(seed.body), 3, seed.op, 0)
		f.Add(append(h[:], seed.body...), uint64(3), byte(seed.op))
	}
	var ev [HeaderSize]byte
	binary.LittleEndian.PutUint32(ev[offSize:], HeaderSize)
	ev[offCommand] = byte(CommandEviction)
	binary.LittleEndian.PutUint64(ev[offClient:], testClient.Lo)
	binary.LittleEndian.PutUint64(ev[offClient+8:], testClient.Hi)
	ev[offEvictReason] = 9
	f.Add(ev[:], uint64(0), byte(OpRegister))

	f.Fuzz(func(t *testing.T, frame []byte, request uint64, op byte) {
		if len(frame) < HeaderSize {
			return
		}
		h := (*[HeaderSize]byte)(frame[:HeaderSize])
		body := frame[HeaderSize:]
		n, err := CheckHeader(h)
		if err == nil && n != len(body) {
			err = ErrMalformed // a reader would have read n bytes, not these
		}
		if err == nil {
			var p []byte
			p, err = DecodeReply(h, body, testClient, request, Operation(op))
			if err == nil {
				if len(p) > len(body) {
					t.Fatalf("payload of %d bytes from a body of %d", len(p), len(body))
				}
				decodeAll(t, p)
			}
		}
		if err != nil && !errors.Is(err, ErrMalformed) {
			_, refused := errors.AsType[*Refused](err)
			_, evicted := errors.AsType[*Evicted](err)
			if !refused && !evicted {
				t.Fatalf("unexpected error kind: %v", err)
			}
		}
	})
}

// decodeAll runs every payload decoder over p.
func decodeAll(t *testing.T, p []byte) {
	check := func(err error) {
		if err != nil && !errors.Is(err, ErrMalformed) {
			t.Fatalf("decoder error not ErrMalformed: %v", err)
		}
	}
	r, _, err := NewPollReader(p)
	check(err)
	for err == nil {
		var m Message
		var ok bool
		m, ok, err = r.Next()
		check(err)
		if !ok {
			break
		}
		if len(m.Payload)+len(m.Headers) > len(p) {
			t.Fatalf("message larger than its reply")
		}
	}
	_, err = DecodeStream(p)
	check(err)
	_, err = DecodeTopic(p)
	check(err)
	_, err = DecodeGroup(p)
	check(err)
	_, _, err = DecodeOffset(p)
	check(err)
	_, err = DecodeRegistered(p)
	check(err)
	_, _, err = DecodeClusterMetadata(p)
	check(err)
}
