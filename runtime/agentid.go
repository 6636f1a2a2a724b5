package runtime

import "github.com/lasergo/laser/wire"

// parseAgentID validates an agent id under the reference SDK's rules (at most
// 255 bytes, no control characters), one byte stricter than the wire: the
// consumer's decoder drops longer names from a record's provenance, so an
// agent with a 256-byte id would never see the target filter match.
func parseAgentID(s string) (wire.AgentID, error) {
	if err := wire.CheckSDKAgentID(s); err != nil {
		return "", err
	}
	return wire.AgentID(s), nil
}
