package sign_test

import (
	"errors"
	"testing"
	"time"

	"github.com/lasergo/laser/sign"
	"github.com/lasergo/laser/wire"
)

func TestBindingPolicyChecksTopicAgeAndPresence(t *testing.T) {
	env := &wire.Envelope{Kind: wire.KindEvent, Source: "shop"}
	const at = uint64(1_800_000_000_000_000)
	if err := (sign.BindingPolicy{}).Check(env, "orders", at); err != nil {
		t.Fatalf("an unbound envelope under the default policy: %v", err)
	}
	if err := (sign.BindingPolicy{Require: true}).Check(env, "orders", at); !errors.Is(err, sign.ErrUnbound) {
		t.Fatalf("required binding: %v", err)
	}
	sign.Bind(env, "orders", at-uint64(time.Minute/time.Microsecond))
	if err := (sign.BindingPolicy{Require: true}).Check(env, "orders", at); err != nil {
		t.Fatalf("a bound envelope a minute old: %v", err)
	}
	if err := (sign.BindingPolicy{}).Check(env, "payments", at); !errors.Is(err, sign.ErrWrongTopic) {
		t.Fatalf("another topic: %v", err)
	}
	if err := (sign.BindingPolicy{MaxAge: 30 * time.Second}).Check(env, "orders", at); !errors.Is(err, sign.ErrStale) {
		t.Fatalf("past a 30 s bound: %v", err)
	}
	if err := (sign.BindingPolicy{MaxAge: -1}).Check(env, "orders", at+uint64(time.Hour/time.Microsecond)); err != nil {
		t.Fatalf("age check off: %v", err)
	}
}

func TestAllowSourceBindsAPrincipalToMoreAgents(t *testing.T) {
	reg := sign.NewRegistry()
	if !reg.SourceAllowed("shop", "shop") || reg.SourceAllowed("gateway", "shop") {
		t.Fatal("without a mapping a principal sends only as itself")
	}
	if err := reg.AllowSource("gateway", "shop", "billing"); err != nil {
		t.Fatal(err)
	}
	if !reg.SourceAllowed("gateway", "shop") || !reg.SourceAllowed("gateway", "billing") || reg.SourceAllowed("gateway", "ledger") {
		t.Fatal("the mapping is not what was allowed")
	}
	if err := reg.CheckSource(sign.Verified{Principal: "gateway"}, &wire.Envelope{Source: "ledger"}); !errors.Is(err, sign.ErrSourceMismatch) {
		t.Fatalf("CheckSource: %v", err)
	}
	if err := reg.AllowSource("", "shop"); err == nil {
		t.Fatal("an empty principal was allowed")
	}
}

func TestDetachedSignaturesVerifyOnlyOverTheirParts(t *testing.T) {
	key := sign.NewKey([32]byte{5})
	reg := sign.NewRegistry()
	if err := reg.Enroll("ledger", key.Public()); err != nil {
		t.Fatal(err)
	}
	sig, err := key.SignDetached("d", []byte("ab"), []byte("c"))
	if err != nil || len(sig) != sign.DetachedLen {
		t.Fatalf("sign: %v, %d bytes", err, len(sig))
	}
	if v, err := reg.VerifyDetached(sig, 1, "d", []byte("ab"), []byte("c")); err != nil || v.Principal != "ledger" {
		t.Fatalf("verify: %v %q", err, v.Principal)
	}
	// The parts are length-prefixed: moving a byte across them changes the input.
	if _, err := reg.VerifyDetached(sig, 1, "d", []byte("a"), []byte("bc")); !errors.Is(err, sign.ErrBadSignature) {
		t.Fatalf("shifted parts: %v", err)
	}
	if _, err := reg.VerifyDetached(nil, 1, "d"); !errors.Is(err, sign.ErrUnsigned) {
		t.Fatalf("no signature: %v", err)
	}
	_ = reg.Revoke(key.KeyID())
	if _, err := reg.VerifyDetached(sig, 1, "d", []byte("ab"), []byte("c")); !errors.Is(err, sign.ErrRevoked) {
		t.Fatalf("revoked key: %v", err)
	}
}
