package a2a

import (
	"bytes"
	"crypto/ed25519"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/a2aproject/a2a-go/a2a"
)

// ErrCardSignature is matched by the error of a card whose signature does
// not verify.
var ErrCardSignature = errors.New("a2a: agent card signature does not verify")

// jwsHeader is the protected header of a card signature: EdDSA (RFC 8037)
// over the detached, canonicalized card.
type jwsHeader struct {
	Alg string `json:"alg"`
	Kid string `json:"kid,omitempty"`
}

// SignCard adds a detached JWS (RFC 7515, EdDSA) over card's canonical JSON
// (RFC 8785 for what a card holds: sorted keys, no insignificant space, no
// HTML escaping), without its signatures, as A2A's card signatures are.
func SignCard(card *a2a.AgentCard, key ed25519.PrivateKey, keyID string) error {
	payload, err := canonicalCard(card)
	if err != nil {
		return err
	}
	h, err := json.Marshal(jwsHeader{Alg: "EdDSA", Kid: keyID})
	if err != nil {
		return err
	}
	protected := base64.RawURLEncoding.EncodeToString(h)
	sig := ed25519.Sign(key, signingInput(protected, payload))
	card.Signatures = append(card.Signatures, a2a.AgentCardSignature{Protected: protected, Signature: base64.RawURLEncoding.EncodeToString(sig)})
	return nil
}

// VerifyCard checks that one of card's signatures is an EdDSA signature by
// pub over the card as it is; it fails with ErrCardSignature otherwise.
func VerifyCard(card *a2a.AgentCard, pub ed25519.PublicKey) error {
	payload, err := canonicalCard(card)
	if err != nil {
		return err
	}
	for _, s := range card.Signatures {
		h, err := base64.RawURLEncoding.DecodeString(s.Protected)
		if err != nil {
			continue
		}
		var head jwsHeader
		if json.Unmarshal(h, &head) != nil || head.Alg != "EdDSA" {
			continue
		}
		sig, err := base64.RawURLEncoding.DecodeString(s.Signature)
		if err == nil && ed25519.Verify(pub, signingInput(s.Protected, payload), sig) {
			return nil
		}
	}
	return fmt.Errorf("%w (%d signatures)", ErrCardSignature, len(card.Signatures))
}

func signingInput(protected string, payload []byte) []byte {
	return []byte(protected + "." + base64.RawURLEncoding.EncodeToString(payload))
}

// canonicalCard is card without signatures as canonical JSON.
func canonicalCard(card *a2a.AgentCard) ([]byte, error) {
	c := *card
	c.Signatures = nil
	raw, err := json.Marshal(&c)
	if err != nil {
		return nil, fmt.Errorf("a2a: encode card: %w", err)
	}
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil { // maps encode with sorted keys
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}
