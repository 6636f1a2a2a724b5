package iggytest

import (
	"encoding/binary"
	"testing"
)

// vsrClientID is the client id of the fuzz target's frames.
var vsrClientID = [16]byte{0: 1, 15: 9}

// vsrFrame frames a VSR request: the 256-byte header, then body. A
// NonReplicated request carries its command code at 196.
func vsrFrame(op uint8, code uint32, session, request uint64, body []byte) []byte {
	h := make([]byte, vsrHeaderSize)
	binary.LittleEndian.PutUint32(h[vsrOffSize:], uint32(vsrHeaderSize+len(body)))
	h[vsrOffCommand] = vsrRequest
	copy(h[vsrOffClient:], vsrClientID[:])
	binary.LittleEndian.PutUint64(h[vsrOffReqRequest:], request)
	h[vsrOffReqOperation] = op
	binary.LittleEndian.PutUint64(h[vsrOffReqSession:], session)
	if op == opNonReplicated {
		binary.LittleEndian.PutUint32(h[vsrOffReqCode:], code)
	}
	return append(h, body...)
}

// vsrPrelude registers (session 1 on a fresh server) and creates stream s,
// topic t (2 partitions, with options) and group g, joined.
func vsrPrelude() []byte {
	register := cat([]byte{0, 0x2c, 0, 0}, nameBytes("fuzz"), nameBytes("1"), nameBytes("iggy"), nameBytes("iggy"), []byte{0, 0, 0, 0})
	opts := cat([]byte{2, 26, 0, 0, 0}, []byte("consumer_offset_durability"), []byte{2, 10, 0, 0, 0}, []byte("replicated"))
	topic := cat(strIdent("s"), binary.LittleEndian.AppendUint32(nil, 2), nameBytes("t"), opts)
	st := cat(strIdent("s"), strIdent("t"))
	return cat(
		vsrFrame(opRegister, 0, 0, 0, register),
		vsrFrame(128, 0, 1, 1, nameBytes("s")),
		vsrFrame(132, 0, 1, 2, topic),
		vsrFrame(139, 0, 1, 3, cat(st, nameBytes("g"))),
		vsrFrame(148, 0, 1, 4, cat(st, strIdent("g"))),
	)
}

// vsrSend is a valid one-message VSR send to partition 1 with one header.
func vsrSend() []byte {
	st := cat(strIdent("s"), strIdent("t"))
	headers := cat([]byte{2, 1, 0, 0, 0}, []byte("k"), []byte{9, 1, 0, 0, 0, 7})
	payload := []byte("hello")
	msg := make([]byte, batchMessageSize)
	binary.LittleEndian.PutUint32(msg[32:], uint32(len(headers)))
	binary.LittleEndian.PutUint32(msg[36:], uint32(len(payload)))
	msg = cat(msg, payload, headers)
	batch := make([]byte, batchHeaderSize)
	binary.LittleEndian.PutUint64(batch[batchOffLength:], uint64(batchHeaderSize+len(msg)))
	binary.LittleEndian.PutUint32(batch[batchOffCount:], 1)
	batch = cat(batch, msg)
	sealBatch(batch)
	meta := cat(st, []byte{2, 4, 1, 0, 0, 0}, []byte{1, 0, 0, 0})
	return vsrFrame(160, 0, 1, 5, cat(binary.LittleEndian.AppendUint32(nil, uint32(len(meta))), meta, batch))
}

// checkVSRAnswers verifies the answers are well-framed: 256-byte headers of
// replies and at most one eviction, last; an error status carries no body.
func checkVSRAnswers(t testing.TB, b []byte) {
	for len(b) > 0 {
		if len(b) < vsrHeaderSize {
			t.Fatalf("answer cut inside its header: %d bytes", len(b))
		}
		size := binary.LittleEndian.Uint32(b[vsrOffSize:])
		if size < vsrHeaderSize || uint64(size) > uint64(len(b)) {
			t.Fatalf("answer claims %d bytes, %d follow", size, len(b))
		}
		switch b[vsrOffCommand] {
		case vsrReply:
			if status := binary.LittleEndian.Uint32(b[vsrOffRepStatus:]); status != 0 && size != vsrHeaderSize {
				t.Fatalf("error status %d carries a %d-byte body", status, size-vsrHeaderSize)
			}
		case vsrEviction:
			if size != vsrHeaderSize || len(b) != vsrHeaderSize || b[vsrOffEvictReason] == 0 {
				t.Fatalf("eviction of size %d, reason %d, with %d bytes after it", size, b[vsrOffEvictReason], len(b)-int(size))
			}
		default:
			t.Fatalf("answer command %d is neither a reply nor an eviction", b[vsrOffCommand])
		}
		b = b[size:]
	}
}

func TestVSRExchangeAnswersThePrelude(t *testing.T) {
	answers, panics := exchange(t, cat(vsrPrelude(), vsrSend()))
	if len(panics) > 0 {
		t.Fatal(panics[0])
	}
	checkVSRAnswers(t, answers)
	for i := 0; i < 6; i++ {
		if len(answers) < vsrHeaderSize || answers[vsrOffCommand] != vsrReply {
			t.Fatalf("answer %d missing", i)
		}
		size := binary.LittleEndian.Uint32(answers[vsrOffSize:])
		if status := binary.LittleEndian.Uint32(answers[vsrOffRepStatus:]); status != 0 {
			t.Fatalf("request %d answered with status %d", i, status)
		}
		if resultFramed(answers[vsrOffRepOperation]) && binary.LittleEndian.Uint32(answers[vsrHeaderSize:]) != 0 {
			t.Fatalf("request %d rejected: %x", i, answers[vsrHeaderSize:size])
		}
		answers = answers[size:]
	}
}

func FuzzVSRRequest(f *testing.F) {
	st := cat(strIdent("s"), strIdent("t"))
	f.Add(vsrFrame(opNonReplicated, CmdPing, 1, 5, nil))
	f.Add(vsrSend())
	f.Add(vsrFrame(opNonReplicated, CmdPoll, 1, 5, cat([]byte{2}, strIdent("g"), st, []byte{0, 0, 0, 0, 0, 5}, make([]byte, 8), []byte{10, 0, 0, 0, 1})))
	f.Add(vsrFrame(opNonReplicated, CmdPoll, 1, 5, cat([]byte{1}, numIdent(3), st, []byte{1, 1, 0, 0, 0, 1}, make([]byte, 8), []byte{10, 0, 0, 0, 0})))
	f.Add(vsrFrame(161, 0, 1, 5, cat([]byte{2}, strIdent("g"), st, []byte{1, 1, 0, 0, 0}, make([]byte, 8), []byte{1})))
	f.Add(vsrFrame(opNonReplicated, CmdGetOffset, 1, 5, cat([]byte{1}, numIdent(0), st, []byte{0, 0, 0, 0, 0})))
	f.Add(vsrFrame(opNonReplicated, CmdGetStream, 1, 5, numIdent(0)))
	f.Add(vsrFrame(opNonReplicated, CmdGetTopic, 1, 5, cat(numIdent(0), numIdent(0))))
	f.Add(vsrFrame(opNonReplicated, CmdSyncConsumerGroup, 1, 5, cat(st, strIdent("g"))))
	f.Add(vsrFrame(opNonReplicated, CmdClusterMetadata, 1, 5, nil))
	f.Add(vsrFrame(149, 0, 1, 5, cat(st, strIdent("g"))))
	f.Add(vsrFrame(130, 0, 1, 5, strIdent("s")))
	f.Add(vsrFrame(opLogout, 0, 1, 5, nil))
	f.Add(vsrFrame(opRegister, 0, 0, 0, []byte{0, 0x2c, 0, 0, 1, 'x', 1, 'y', 1, 't', 0, 0, 0, 0}))
	f.Add(vsrFrame(99, 0, 1, 5, nil))
	f.Add(vsrFrame(128, 0, 2, 5, nameBytes("x")))
	pre := vsrPrelude()
	f.Fuzz(func(t *testing.T, data []byte) {
		answers, panics := exchange(t, cat(pre, data))
		if len(panics) > 0 {
			t.Fatalf("handler panicked on %x:\n%s", data, panics[0])
		}
		checkVSRAnswers(t, answers)
	})
}
