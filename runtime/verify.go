package runtime

import (
	"fmt"

	"github.com/lasergo/laser/sign"
)

// verifyWith is every on-log signature check: the signature over the
// observed headers at the broker's timestamp; the source binding, so that
// a peer holding any enrolled key cannot sign as another agent; and the
// signed destination and issued-at under policy, so that signed bytes do
// not replay to another topic or long after they were issued.
func (m *Message) verifyWith(v Verifier, policy sign.BindingPolicy) (sign.Verified, error) {
	env := m.Envelope
	if env == nil {
		return sign.Verified{}, &Error{Code: CodeSignature, Msg: "message carries no AGDX envelope"}
	}
	verified, err := v.VerifyObserved(env, m.observed, m.Timestamp)
	if err != nil {
		return sign.Verified{}, err
	}
	if sc, ok := v.(SourceChecker); ok {
		err = sc.CheckSource(verified, env)
	} else if string(env.Source) != verified.Principal {
		err = fmt.Errorf("%w: source %q, signed by %q", sign.ErrSourceMismatch, env.Source, verified.Principal)
	}
	if err == nil {
		err = policy.Check(env, m.Topic, m.Timestamp)
	}
	if err != nil {
		return sign.Verified{}, err
	}
	return verified, nil
}

// Verify checks the message's envelope signature with v against the headers
// observed on its record at the broker's timestamp, that the signing
// principal may send as the envelope's source, and the signed destination
// and issued-at under the default sign.BindingPolicy, as the consumer does;
// packages that fold a topic themselves (the agent registry, conversation
// assembly, human answers) use it to count only verified records.
func (m *Message) Verify(v Verifier) (sign.Verified, error) {
	return m.verifyWith(v, sign.BindingPolicy{})
}
