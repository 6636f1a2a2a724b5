package bridge

import (
	"context"
	"fmt"

	"github.com/lasergo/laser/conversation"
	"github.com/lasergo/laser/runtime"
	"github.com/lasergo/laser/wire"
)

// keepAll keeps the whole read window: a bridge renders or replays every
// record of a conversation, not the last few a model's context wants.
var keepAll = conversation.PolicyFunc(func(h conversation.History) conversation.History { return h })

// Read returns every record of conversation conv on topics, in log order
// (conversation.Assemble's order, within its read window).
func Read(ctx context.Context, t runtime.Transport, conv wire.ConversationID, topics ...string) (conversation.History, error) {
	h, err := conversation.Assemble(ctx, t, conv, conversation.Options{Topics: topics, Policy: keepAll})
	if err != nil {
		return nil, fmt.Errorf("bridge: read conversation %s on %v: %w", conv, topics, err)
	}
	return h, nil
}

// ReadTrusted is Read through client, verifying as the client does: under
// the client's Verifier only records whose signature verifies (signed by
// their source's principal, for the topic they are on) are returned, so an
// unsigned or forged record never reaches what a bridge replays or shows.
// Without a Verifier it is Read.
func ReadTrusted(ctx context.Context, client *runtime.Client, conv wire.ConversationID, topics ...string) (conversation.History, error) {
	h, err := conversation.Assemble(ctx, client.Transport(), conv, conversation.Options{Topics: topics, Policy: keepAll, Verifier: client.Verifier()})
	if err != nil {
		return nil, fmt.Errorf("bridge: read conversation %s on %v: %w", conv, topics, err)
	}
	return h, nil
}
