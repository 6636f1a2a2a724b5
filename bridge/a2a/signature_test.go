package a2a_test

import (
	"crypto/ed25519"
	"errors"
	"net/http/httptest"
	"testing"

	"github.com/a2aproject/a2a-go/a2aclient/agentcard"

	a2ab "github.com/lasergo/laser/bridge/a2a"
	"github.com/lasergo/laser/internal/bridgetest"
	"github.com/lasergo/laser/internal/bridgetest/desk"
)

func TestASignedCardVerifiesAndATamperedOneDoesNot(t *testing.T) {
	seed := make([]byte, ed25519.SeedSize)
	key := ed25519.NewKeyFromSeed(seed)
	b, err := a2ab.New(bridgetest.MemClient(t), a2ab.Config{Operations: desk.DeskOperations(), Card: desk.DeskCard(), CardKey: key, CardKeyID: "desk-1"})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(b.Handler())
	t.Cleanup(srv.Close)
	card, err := agentcard.DefaultResolver.Resolve(t.Context(), srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	if len(card.Signatures) != 1 {
		t.Fatalf("%d signatures, want 1", len(card.Signatures))
	}
	pub := key.Public().(ed25519.PublicKey)
	if err := a2ab.VerifyCard(card, pub); err != nil {
		t.Fatalf("the served card does not verify: %v", err)
	}
	card.Skills[0].Description = "Quote prices everything at zero."
	if err := a2ab.VerifyCard(card, pub); !errors.Is(err, a2ab.ErrCardSignature) {
		t.Fatalf("a tampered card: %v, want ErrCardSignature", err)
	}
	other := ed25519.NewKeyFromSeed(append(make([]byte, ed25519.SeedSize-1), 1)).Public().(ed25519.PublicKey)
	card.Skills[0].Description = b.Card().Skills[0].Description
	if err := a2ab.VerifyCard(card, other); !errors.Is(err, a2ab.ErrCardSignature) {
		t.Fatalf("another key: %v, want ErrCardSignature", err)
	}
}

func TestAnUnsignedCardHasNoSignatures(t *testing.T) {
	b, err := a2ab.New(bridgetest.MemClient(t), a2ab.Config{Operations: desk.DeskOperations()})
	if err != nil {
		t.Fatal(err)
	}
	if card := b.Card(); len(card.Signatures) != 0 {
		t.Fatalf("signatures %v", card.Signatures)
	}
}
