package main

import (
	"context"
	"errors"
	"fmt"

	ierror "github.com/apache/iggy/foreign/go/errors"

	"github.com/lasergo/laser/iggy"
	"github.com/lasergo/laser/runtime"
	"github.com/lasergo/laser/wire"
)

// The server's answers in our words: the SDK's texts name the wrong ids
// ("partition with id: 0 ... not found" for partition 9) or say only
// "error", so every read the commands make is checked first or translated.

// checkTopic returns the topic's partition count, or says that it does not exist.
func checkTopic(ctx context.Context, t *iggy.Transport, topic string) error {
	_, err := partitions(ctx, t, topic)
	return err
}

func partitions(ctx context.Context, t *iggy.Transport, topic string) (uint32, error) {
	n, err := t.Partitions(ctx, topic)
	switch {
	case err == nil:
		return n, nil
	case errors.Is(err, ierror.ErrTopicIdNotFound) && streamExists(ctx, t):
		return 0, fmt.Errorf("topic %s does not exist in stream %s", topic, t.Stream())
	case errors.Is(err, ierror.ErrTopicIdNotFound), errors.Is(err, ierror.ErrStreamIdNotFound):
		return 0, fmt.Errorf("stream %s does not exist on the server (the path of --addr names it)", t.Stream())
	}
	return 0, fmt.Errorf("topic %s: %w", topic, err)
}

// streamExists reports whether the stream of --addr exists: a server
// answers a topic of a missing stream with "topic not found", so the stream
// is asked after. When the answer is not a clear "no", it says yes, and
// the topic is named as missing.
func streamExists(ctx context.Context, t *iggy.Transport) bool {
	_, _, err := t.StreamTopics(ctx)
	return !errors.Is(err, ierror.ErrStreamIdNotFound)
}

// readAt reads the record at pos of topic, checking the partition and the
// offset against what the topic holds.
func readAt(ctx context.Context, t *iggy.Transport, topic string, pos runtime.Position) (*runtime.Incoming, error) {
	n, err := partitions(ctx, t, topic)
	if err != nil {
		return nil, err
	}
	if pos.Partition >= n {
		return nil, fmt.Errorf("%s has partitions 0 to %d; %s names partition %d", topic, n-1, pos, pos.Partition)
	}
	next, err := t.NextOffset(ctx, topic, pos.Partition)
	if err != nil {
		return nil, fmt.Errorf("%s partition %d: %w", topic, pos.Partition, err)
	}
	if pos.Offset >= next {
		if next == 0 {
			return nil, fmt.Errorf("no record at %s in %s: partition %d is empty", pos, topic, pos.Partition)
		}
		return nil, fmt.Errorf("no record at %s in %s: partition %d holds offsets 0 to %d", pos, topic, pos.Partition, next-1)
	}
	recs, err := t.ReadRange(ctx, topic, pos.Partition, pos.Offset, 1)
	if err != nil {
		return nil, fmt.Errorf("read %s in %s: %w", pos, topic, err)
	}
	if len(recs) == 0 || recs[0].Offset != pos.Offset {
		return nil, fmt.Errorf("no record at %s in %s any more (expired or deleted)", pos, topic)
	}
	return &recs[0], nil
}

// sources names the topics of the stream by their numeric ids, as capsules
// record their source.
type sources struct {
	stream uint32
	names  map[uint32]string
}

func loadSources(ctx context.Context, t *iggy.Transport) (*sources, error) {
	stream, names, err := t.StreamTopics(ctx)
	if err != nil {
		return nil, fmt.Errorf("list the topics of stream %s: %w", t.Stream(), err)
	}
	return &sources{stream: stream, names: names}, nil
}

// topic returns the name of the topic p lies in, or why it cannot be named.
func (s *sources) topic(p wire.LogPosition) (string, error) {
	if p.StreamID != s.stream {
		return "", fmt.Errorf("the source is in stream id %d, not in this stream (id %d)", p.StreamID, s.stream)
	}
	name, ok := s.names[p.TopicID]
	if !ok {
		return "", fmt.Errorf("the source topic id %d no longer exists in this stream", p.TopicID)
	}
	return name, nil
}

// name renders p as "topic partition:offset", or by its ids when the topic
// cannot be named.
func (s *sources) name(p wire.LogPosition) string {
	if topic, err := s.topic(p); err == nil {
		return fmt.Sprintf("%s %d:%d", topic, p.PartitionID, p.Offset)
	}
	return p.String()
}
