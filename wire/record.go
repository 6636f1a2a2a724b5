package wire

// BroadcastTarget is the agdx.to value of an enveloped record without a
// target, as the reference writes it.
const BroadcastTarget = "*"

// EnvelopeHeaders returns exactly the headers an enveloped record carries,
// the ones the reference's SDK (laser-sdk 0.8.2) stamps, in bytewise key
// order: agdx.av = Uint32(1), agdx.ct = Uint8(ct), agdx.to = String(target,
// or "*" without one), gen_ai.agent.id = String(source) when the source
// fits a header value (1..255 bytes), and gen_ai.conversation.id = String(the conversation's
// ULID text). Readers take the conversation from the envelope, so records
// from older laser-go versions, whose conversation header is a Uint128, read
// the same. Nothing else is duplicated out of the envelope.
func EnvelopeHeaders(e *Envelope, ct ContentType) Headers {
	target := BroadcastTarget
	if e.Target != nil {
		target = string(*e.Target)
	}
	h := make(Headers, 0, 5)
	h = append(h,
		Header{Key: HeaderAgentVersion, Value: Uint32Value(AgentOpVersion)},
		Header{Key: HeaderContentType, Value: Uint8Value(uint8(ct))},
		Header{Key: HeaderTarget, Value: StringValue(target)},
	)
	if n := len(e.Source); n > 0 && n <= HeaderValueMax {
		h = append(h, Header{Key: HeaderAgentID, Value: StringValue(string(e.Source))})
	}
	return append(h, Header{Key: HeaderConversationID, Value: StringValue(e.Conversation.String())})
}

// PartitionKey is the Iggy message key of a conversation: its Crockford text,
// so every message of a conversation lands on one partition.
func PartitionKey(conv ID) string { return conv.String() }

// HeaderConversation reads a record's gen_ai.conversation.id header in
// either form a writer uses: the ULID text (the reference, and laser-go
// since it writes what the reference writes) or a Uint128 (laser-go's older
// envelope headers). It reports false when the header is absent or names no
// id, so a caller that only wants a partition for a record it cannot
// otherwise read (a dead letter) can fall back to a fresh conversation.
func HeaderConversation(h EncodedHeaders) (ID, bool) {
	v, ok := h.Get(HeaderConversationID)
	if !ok {
		return ID{}, false
	}
	switch v.Kind {
	case HeaderKindString:
		id, err := parseID(v.Data)
		return id, err == nil
	case HeaderKindUint128:
		id, err := v.AsUint128()
		return id, err == nil
	}
	return ID{}, false
}
