package iggytest

import (
	"encoding/binary"
	"testing"

	"github.com/zeebo/xxh3"

	"github.com/lasergo/laser/internal/logstore"
)

// lastAnswer returns the last reply frame of answers: header and body.
func lastAnswer(t *testing.T, answers []byte) (hdr, body []byte) {
	t.Helper()
	checkVSRAnswers(t, answers)
	for len(answers) > 0 {
		size := binary.LittleEndian.Uint32(answers[vsrOffSize:])
		hdr, body = answers[:vsrHeaderSize], answers[vsrHeaderSize:size]
		answers = answers[size:]
	}
	return hdr, body
}

func TestVSRSendWithABadMessageChecksumIsRefused(t *testing.T) {
	send := vsrSend()
	send[len(send)-1] ^= 1 // the last user-header byte, covered by the message checksum
	answers, _ := exchange(t, cat(vsrPrelude(), send))
	hdr, _ := lastAnswer(t, answers)
	if st := binary.LittleEndian.Uint32(hdr[vsrOffRepStatus:]); st != StatusInvalidMessageChecksum {
		t.Fatalf("status = %d, want %d (InvalidMessageChecksum)", st, StatusInvalidMessageChecksum)
	}
}

func TestVSRSendWithABadBatchChecksumIsRefused(t *testing.T) {
	send := vsrSend()
	batchAt := len(send) - batchHeaderSize - batchMessageSize - len("hello") - 12 // 12: the user header k=7
	send[batchAt+batchOffChecksum] ^= 1
	answers, _ := exchange(t, cat(vsrPrelude(), send))
	hdr, _ := lastAnswer(t, answers)
	if st := binary.LittleEndian.Uint32(hdr[vsrOffRepStatus:]); st != StatusInvalidMessageChecksum {
		t.Fatalf("status = %d, want %d (InvalidMessageChecksum)", st, StatusInvalidMessageChecksum)
	}
}

func TestVSRSendConfirmsWhereTheBatchLanded(t *testing.T) {
	answers, _ := exchange(t, cat(vsrPrelude(), vsrSend(), vsrSend()))
	_, body := lastAnswer(t, answers)
	// count 1; stream 0, topic 0, partition 1, base offset 1 (the second batch)
	want := []byte{1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0}
	if string(body) != string(want) {
		t.Fatalf("confirmation = %x, want %x", body, want)
	}
}

func TestVSRPollAnswersSealedBatches(t *testing.T) {
	st := cat(strIdent("s"), strIdent("t"))
	poll := vsrFrame(opNonReplicated, CmdPoll, 1, 6, cat([]byte{1}, numIdent(3), st, []byte{1, 1, 0, 0, 0, 1}, make([]byte, 8), []byte{10, 0, 0, 0, 0}))
	answers, _ := exchange(t, cat(vsrPrelude(), vsrSend(), vsrSend(), poll))
	_, body := lastAnswer(t, answers)
	if n := binary.LittleEndian.Uint32(body[12:]); n != 2 {
		t.Fatalf("poll answered %d messages, want 2", n)
	}
	batches := 0
	for b := body[16:]; len(b) > 0; batches++ {
		size := binary.LittleEndian.Uint64(b[batchOffLength:])
		batch := b[:size]
		sums := xxh3.New()
		writeBatchHeaderFields(sums, batch)
		for pos := batchHeaderSize; pos < len(batch); {
			end := pos + batchMessageSize + int(binary.LittleEndian.Uint32(batch[pos+32:])) + int(binary.LittleEndian.Uint32(batch[pos+36:]))
			if binary.LittleEndian.Uint64(batch[pos:]) != xxh3.Hash(batch[pos+8:end]) {
				t.Fatalf("batch %d: a message checksum does not match", batches)
			}
			_, _ = sums.Write(batch[pos : pos+8])
			pos = end
		}
		if binary.LittleEndian.Uint64(batch[batchOffChecksum:]) != sums.Sum64() {
			t.Fatalf("batch %d: the batch checksum does not match", batches)
		}
		if p := binary.LittleEndian.Uint64(batch); p != 1 {
			t.Errorf("batch %d: partition = %d, want 1", batches, p)
		}
		b = b[size:]
	}
	if batches != 2 {
		t.Errorf("poll answered %d batches, want one per send (2)", batches)
	}
}

// A VSR poll reply holds as many leading records as fit the frame limit,
// whole batches and message headers counted.
func TestVSRPollReplyHoldsWhatFitsTheFrame(t *testing.T) {
	recs := make([]logstore.Record, 3)
	for i := range recs {
		recs[i] = logstore.Record{Offset: uint64(i), Payload: make([]byte, 100)}
	}
	msg := batchMessageSize + 100
	for _, c := range []struct{ room, want int }{
		{batchHeaderSize + 3*msg, 3},
		{batchHeaderSize + 3*msg - 1, 2},
		{batchHeaderSize + msg, 1},
		{batchHeaderSize + msg - 1, 0},
	} {
		if got := batchesFit(recs, c.room); got != c.want {
			t.Errorf("batchesFit(3 records, %d) = %d, want %d", c.room, got, c.want)
		}
		if got := len(appendBatches(nil, 0, recs[:c.want])); got > c.room {
			t.Errorf("%d records take %d bytes, over the room of %d", c.want, got, c.room)
		}
	}
}
