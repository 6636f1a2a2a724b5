package wire

// HeaderKey returns b as a header key string, without allocating for the
// keys this package defines: transports decoding many records call it for
// every header, and most keys are these.
func HeaderKey(b []byte) string {
	switch string(b) { // compiled to comparisons; no conversion is allocated
	case HeaderAgentVersion:
		return HeaderAgentVersion
	case HeaderContentType:
		return HeaderContentType
	case HeaderConversationID:
		return HeaderConversationID
	case HeaderTarget:
		return HeaderTarget
	case HeaderAgentID:
		return HeaderAgentID
	case HeaderCorrelationID:
		return HeaderCorrelationID
	case HeaderIdempotencyKey:
		return HeaderIdempotencyKey
	case HeaderDeadline:
		return HeaderDeadline
	case HeaderCausalParent:
		return HeaderCausalParent
	case HeaderParentConversation:
		return HeaderParentConversation
	case HeaderRootConversation:
		return HeaderRootConversation
	case HeaderFence:
		return HeaderFence
	case HeaderUsageInputTokens:
		return HeaderUsageInputTokens
	case HeaderUsageOutputTokens:
		return HeaderUsageOutputTokens
	case HeaderCost:
		return HeaderCost
	case HeaderDelegatedBy:
		return HeaderDelegatedBy
	}
	return string(b)
}
