package agui

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/lasergo/laser/bridge"
	"github.com/lasergo/laser/conversation"
	"github.com/lasergo/laser/runtime"
	"github.com/lasergo/laser/wire"
)

// PublishSnapshot appends state, as JSON, as the conversation's latest full
// shared state: an AGDX event with operation state_snapshot on topic from
// agent from.
func PublishSnapshot(ctx context.Context, client *runtime.Client, topic, from string, conv wire.ConversationID, state any) error {
	body, err := json.Marshal(state)
	if err != nil {
		return fmt.Errorf("agui: encode state snapshot: %w", err)
	}
	return publishState(ctx, client, topic, from, conv, wire.OperationStateSnapshot, body)
}

// PublishDelta appends an RFC 6902 patch of the conversation's shared state:
// an AGDX event with operation state_delta.
func PublishDelta(ctx context.Context, client *runtime.Client, topic, from string, conv wire.ConversationID, patch []PatchOp) error {
	body, err := json.Marshal(patch)
	if err != nil {
		return fmt.Errorf("agui: encode state delta: %w", err)
	}
	return publishState(ctx, client, topic, from, conv, wire.OperationStateDelta, body)
}

func publishState(ctx context.Context, client *runtime.Client, topic, from string, conv wire.ConversationID, op string, body []byte) error {
	source, err := wire.ParseAgentID(from)
	if err != nil {
		return fmt.Errorf("agui: state source: %w", err)
	}
	env := &wire.Envelope{Kind: wire.KindEvent, Conversation: conv, Source: source, Operation: &op, Body: body}
	_, err = bridge.Publish(ctx, client, topic, env, wire.ContentJSON)
	return err
}

// State folds the conversation's state events on topic back into its shared
// state: the latest snapshot with every later delta applied. ok is false
// until a snapshot exists; a delta that does not apply is an error matching
// ErrPatch.
func State(ctx context.Context, t runtime.Transport, conv wire.ConversationID, topic string) (state any, ok bool, err error) {
	msgs, err := read(ctx, t, conv, topic)
	if err != nil {
		return nil, false, err
	}
	for _, m := range msgs {
		e := m.Envelope
		if e == nil || e.Kind != wire.KindEvent || e.Operation == nil {
			continue
		}
		switch *e.Operation {
		case wire.OperationStateSnapshot:
			if err := json.Unmarshal(e.Body, &state); err != nil {
				return nil, false, fmt.Errorf("agui: state snapshot at %v: %w", m.Position, err)
			}
			ok = true
		case wire.OperationStateDelta:
			if !ok {
				continue // a delta before any snapshot has nothing to patch
			}
			var ops []PatchOp
			if err := json.Unmarshal(e.Body, &ops); err != nil {
				return nil, false, fmt.Errorf("agui: state delta at %v: %w", m.Position, err)
			}
			if state, err = ApplyPatch(state, ops); err != nil {
				return nil, false, fmt.Errorf("agui: state delta at %v: %w", m.Position, err)
			}
		}
	}
	return state, ok, nil
}

// Events renders the conversation's records on topic as AG-UI events, in
// log order.
func Events(ctx context.Context, t runtime.Transport, conv wire.ConversationID, topic string) ([]Event, error) {
	msgs, err := read(ctx, t, conv, topic)
	if err != nil {
		return nil, err
	}
	return Render(msgs), nil
}

func read(ctx context.Context, t runtime.Transport, conv wire.ConversationID, topic string) (conversation.History, error) {
	return bridge.Read(ctx, t, conv, topic)
}
