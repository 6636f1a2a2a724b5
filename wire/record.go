package wire

// EnvelopeHeaders returns exactly the headers an enveloped record carries, in
// this order: agdx.av = Uint32(1), agdx.ct = Uint8(ct), gen_ai.conversation.id
// = Uint128 (little-endian), and agdx.to = String(target) only when the
// envelope has a target. Nothing else is duplicated out of the envelope.
func EnvelopeHeaders(e *Envelope, ct ContentType) Headers {
	n := 3
	if e.Target != nil {
		n++
	}
	h := make(Headers, 0, n)
	h = append(h,
		Header{Key: HeaderAgentVersion, Value: Uint32Value(AgentOpVersion)},
		Header{Key: HeaderContentType, Value: Uint8Value(uint8(ct))},
		Header{Key: HeaderConversationID, Value: Uint128Value(e.Conversation)},
	)
	if e.Target != nil {
		h = append(h, Header{Key: HeaderTarget, Value: StringValue(string(*e.Target))})
	}
	return h
}

// PartitionKey is the Iggy message key of a conversation: its Crockford text,
// so every message of a conversation lands on one partition.
func PartitionKey(conv ID) string { return conv.String() }
