package vsr

import (
	"encoding/binary"
	"fmt"
)

// Stream is what a stream reply says that a transport reads.
type Stream struct {
	ID     uint32
	Name   string
	Topics []Topic // without their partitions
}

// DecodeStream reads a stream reply: u32 id, u64 creation time, u32 topic
// count, u64 size, u64 message count, u8-prefixed name, u32-prefixed
// options, then its topics as DecodeTopic reads them, without partitions.
func DecodeStream(p []byte) (Stream, error) {
	r := reader{b: p}
	fixed := r.take(33)
	if r.err != nil {
		return Stream{}, fmt.Errorf("%w: stream: %w", ErrMalformed, r.err)
	}
	s := Stream{ID: binary.LittleEndian.Uint32(fixed)}
	count := binary.LittleEndian.Uint32(fixed[12:])
	s.Name = string(r.take(int(fixed[32])))
	r.prefixed()
	for i := uint32(0); i < count && r.err == nil; i++ {
		s.Topics = append(s.Topics, r.topic())
	}
	if r.err != nil {
		return Stream{}, fmt.Errorf("%w: stream: %w", ErrMalformed, r.err)
	}
	return s, nil
}

// Topic is what a topic reply says that a transport reads.
type Topic struct {
	ID              uint32
	Name            string
	PartitionsCount uint32
	MessagesCount   uint64
	Partitions      []Partition
}

// Partition is one partition of a topic reply.
type Partition struct {
	ID            uint32
	CurrentOffset uint64
	MessagesCount uint64
}

const partitionSize = 4 + 8 + 4 + 8 + 8 + 8

// DecodeTopic reads a topic reply: u32 id, u64 creation time, u32
// partition count, u64 message expiry, u8 compression, u64 maximum size,
// u64 size, u64 message count, u8-prefixed name, u32-prefixed options and
// derived options, then per partition u32 id, u64 creation time, u32
// segment count, u64 current offset, u64 size, u64 message count.
func DecodeTopic(p []byte) (Topic, error) {
	r := reader{b: p}
	t := r.topic()
	if r.err != nil {
		return Topic{}, fmt.Errorf("%w: topic: %w", ErrMalformed, r.err)
	}
	if len(r.b)%partitionSize != 0 {
		return Topic{}, fmt.Errorf("%w: topic: %d bytes of partitions, not a multiple of %d", ErrMalformed, len(r.b), partitionSize)
	}
	t.Partitions = make([]Partition, 0, len(r.b)/partitionSize)
	for b := r.b; len(b) > 0; b = b[partitionSize:] {
		t.Partitions = append(t.Partitions, Partition{
			ID:            binary.LittleEndian.Uint32(b),
			CurrentOffset: binary.LittleEndian.Uint64(b[16:]),
			MessagesCount: binary.LittleEndian.Uint64(b[32:]),
		})
	}
	return t, nil
}

// Group is what a consumer group reply says that a transport reads.
type Group struct {
	ID      uint32
	Name    string
	Members uint32
}

// DecodeGroup reads a consumer group reply: u32 id, u32 partition count,
// u32 member count, u8-prefixed name (the members that follow are not
// read).
func DecodeGroup(p []byte) (Group, error) {
	r := reader{b: p}
	fixed := r.take(13)
	if r.err != nil {
		return Group{}, fmt.Errorf("%w: consumer group: %w", ErrMalformed, r.err)
	}
	g := Group{ID: binary.LittleEndian.Uint32(fixed), Members: binary.LittleEndian.Uint32(fixed[8:])}
	g.Name = string(r.take(int(fixed[12])))
	if r.err != nil {
		return Group{}, fmt.Errorf("%w: consumer group: %w", ErrMalformed, r.err)
	}
	return g, nil
}

// Offset is a consumer offset reply.
type Offset struct {
	Partition     uint32
	CurrentOffset uint64
	StoredOffset  uint64
}

// DecodeOffset reads a consumer offset reply: u32 partition, u64 current
// offset, u64 stored offset; ok is false for the empty reply that means
// nothing is stored.
func DecodeOffset(p []byte) (o Offset, ok bool, err error) {
	if len(p) == 0 {
		return Offset{}, false, nil
	}
	if len(p) != 20 {
		return Offset{}, false, fmt.Errorf("%w: a consumer offset reply of %d bytes, want 20", ErrMalformed, len(p))
	}
	return Offset{
		Partition:     binary.LittleEndian.Uint32(p),
		CurrentOffset: binary.LittleEndian.Uint64(p[4:]),
		StoredOffset:  binary.LittleEndian.Uint64(p[12:]),
	}, true, nil
}

// topic reads a topic's fields, up to its partitions.
func (r *reader) topic() Topic {
	fixed := r.take(50)
	if r.err != nil {
		return Topic{}
	}
	t := Topic{
		ID:              binary.LittleEndian.Uint32(fixed),
		PartitionsCount: binary.LittleEndian.Uint32(fixed[12:]),
		MessagesCount:   binary.LittleEndian.Uint64(fixed[41:]),
	}
	t.Name = string(r.take(int(fixed[49])))
	r.prefixed()
	r.prefixed()
	return t
}
