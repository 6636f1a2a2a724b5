// Package wirekey interns the header keys package wire defines, for the
// transports in this module.
package wirekey

import "github.com/lasergo/laser/wire"

// Intern returns b as a header key string, without allocating for the keys
// package wire defines: transports decoding many records call it for every
// header, and most keys are these.
func Intern(b []byte) string {
	switch string(b) { // compiled to comparisons; no conversion is allocated
	case wire.HeaderAgentVersion:
		return wire.HeaderAgentVersion
	case wire.HeaderContentType:
		return wire.HeaderContentType
	case wire.HeaderConversationID:
		return wire.HeaderConversationID
	case wire.HeaderTarget:
		return wire.HeaderTarget
	case wire.HeaderAgentID:
		return wire.HeaderAgentID
	case wire.HeaderCorrelationID:
		return wire.HeaderCorrelationID
	case wire.HeaderIdempotencyKey:
		return wire.HeaderIdempotencyKey
	case wire.HeaderDeadline:
		return wire.HeaderDeadline
	case wire.HeaderCausalParent:
		return wire.HeaderCausalParent
	case wire.HeaderParentConversation:
		return wire.HeaderParentConversation
	case wire.HeaderRootConversation:
		return wire.HeaderRootConversation
	case wire.HeaderFence:
		return wire.HeaderFence
	case wire.HeaderUsageInputTokens:
		return wire.HeaderUsageInputTokens
	case wire.HeaderUsageOutputTokens:
		return wire.HeaderUsageOutputTokens
	case wire.HeaderCost:
		return wire.HeaderCost
	case wire.HeaderDelegatedBy:
		return wire.HeaderDelegatedBy
	}
	return string(b)
}
