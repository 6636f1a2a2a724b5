package conversation

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/lasergo/laser/runtime"
	"github.com/lasergo/laser/wire"
)

// Scope is one conversation's working context on the log, what the
// reference runtime's users reach as laser.context(conversation): Append
// publishes into the conversation, Fetch reads its last turns back, Block
// renders them for a prompt. It holds nothing itself; the log is the only
// store, so every Scope of a conversation sees the same history.
type Scope struct {
	client *runtime.Client
	conv   wire.ID
	topics []string
}

// For returns the scope of conv over topics (DefaultTopics when none). It
// does no I/O.
func For(client *runtime.Client, conv wire.ID, topics ...string) Scope {
	if len(topics) == 0 {
		topics = DefaultTopics
	}
	return Scope{client: client, conv: conv, topics: topics}
}

// Conversation returns the scope's conversation id.
func (s Scope) Conversation() wire.ID { return s.conv }

// check refuses a scope built from a nil client or a zero conversation.
func (s Scope) check() error {
	switch {
	case s.client == nil:
		return errors.New("conversation: scope has no client")
	case s.conv == wire.ID{}:
		return errors.New("conversation: scope has a zero conversation id")
	}
	return nil
}

// Append publishes payload to topic as a plain record of the conversation
// (keyed by it, so it lands in order with the rest), and returns where it
// landed.
func (s Scope) Append(ctx context.Context, topic string, payload []byte) (runtime.Position, error) {
	if err := s.check(); err != nil {
		return runtime.Position{}, err
	}
	if topic == "" {
		return runtime.Position{}, errors.New("conversation: append to an empty topic name")
	}
	pos, err := s.client.SendPlain(ctx, topic, wire.Provenance{Conversation: s.conv}, payload)
	if err != nil {
		return pos, fmt.Errorf("conversation: append to %s in %s: %w", topic, s.conv, err)
	}
	return pos, nil
}

// Fetch returns the conversation's last n records on the scope's topics, in
// order. The bound is required (n ≥ 1): the whole of a long conversation is
// Assemble with a policy of one's choosing.
func (s Scope) Fetch(ctx context.Context, n int) (History, error) {
	if err := s.check(); err != nil {
		return nil, err
	}
	if n < 1 {
		return nil, fmt.Errorf("conversation: fetch of %d records; the bound must be at least 1", n)
	}
	return Assemble(ctx, s.client.Transport(), s.conv, Options{Topics: s.topics, Policy: LastN(n)})
}

// Block returns the last n records' bodies as one newline-joined text, the
// form a prompt takes; bytes that are not UTF-8 become U+FFFD.
func (s Scope) Block(ctx context.Context, n int) (string, error) {
	h, err := s.Fetch(ctx, n)
	if err != nil {
		return "", err
	}
	var b strings.Builder
	for i, m := range h {
		if i > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(strings.ToValidUTF8(string(m.Body()), "\uFFFD"))
	}
	return b.String(), nil
}
