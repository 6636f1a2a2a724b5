package runtime

import "github.com/lasergo/laser/sign"

// Verify checks the message's envelope signature with v against the headers
// observed on its record at the broker's timestamp, the way the consumer and
// the reply readers do; packages that fold a topic themselves (the agent
// registry, human answers) use it to count only verified records.
func (m *Message) Verify(v Verifier) (sign.Verified, error) {
	if m.Envelope == nil {
		return sign.Verified{}, &Error{Code: CodeSignature, Msg: "message carries no AGDX envelope"}
	}
	return v.VerifyObserved(m.Envelope, m.observed, m.Timestamp)
}
