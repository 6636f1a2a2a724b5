package sign_test

import (
	"bytes"
	"crypto/ed25519"
	"crypto/sha256"
	"errors"
	"sync"
	"testing"

	"github.com/lasergo/laser/sign"
	"github.com/lasergo/laser/wire"
)

func p[T any](v T) *T { return &v }

func seedKey(b byte) *sign.Key {
	var seed [32]byte
	for i := range seed {
		seed[i] = b
	}
	return sign.NewKey(seed)
}

func testEnvelope() *wire.Envelope {
	rec, corr := wire.IDFromUint128(0x01903c1faa000000, 1), wire.IDFromUint128(0x01903c1faa000000, 5)
	target := wire.AgentID("booker")
	return &wire.Envelope{
		Kind: wire.KindCommand, Record: &rec, Conversation: wire.IDFromUint128(0x01903c1faa000000, 2),
		Source: "planner", Target: &target, Correlation: &corr,
		Metadata: wire.Metadata{{Key: wire.MetaOnBehalfOf, Value: wire.StrValue("user-42")}, {Key: "score", Value: wire.FloatValue(0.95)}},
		Body:     []byte(`{"ask":"book"}`),
	}
}

func jsonContext() *wire.SignatureContext {
	return wire.NewSignatureContext(wire.ContentJSON, wire.AgentOpVersion)
}

// signedRoundTrip signs env and returns what a receiver decodes off the log.
func signedRoundTrip(t *testing.T, k *sign.Key, env *wire.Envelope, ctx *wire.SignatureContext) *wire.Envelope {
	t.Helper()
	if err := k.Sign(env, ctx); err != nil {
		t.Fatal(err)
	}
	b, err := env.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	out, err := wire.DecodeEnvelope(b)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func enrolled(t *testing.T, k *sign.Key, principal string) *sign.Registry {
	t.Helper()
	reg := sign.NewRegistry()
	if err := reg.Enroll(principal, k.Public()); err != nil {
		t.Fatal(err)
	}
	return reg
}

func TestKeyIDIsSHA256Prefix(t *testing.T) {
	k := seedKey(7)
	sum := sha256.Sum256(k.Public())
	if id := k.KeyID(); !bytes.Equal(id[:], sum[:8]) || sign.KeyIDOf(k.Public()) != id {
		t.Fatalf("key id %x, want %x", id, sum[:8])
	}
}

func TestKeyFromSeedRejectsWrongLength(t *testing.T) {
	for _, n := range []int{0, 31, 33, 64} {
		if _, err := sign.KeyFromSeed(make([]byte, n)); !errors.Is(err, sign.ErrBadSeed) {
			t.Errorf("%d-byte seed: %v", n, err)
		}
	}
}

func TestZeroKeyRefusesToSign(t *testing.T) {
	var k sign.Key
	if err := k.Sign(testEnvelope(), nil); !errors.Is(err, sign.ErrNoKey) {
		t.Fatalf("Sign with a zero Key: %v", err)
	}
	if k.Public() != nil {
		t.Fatal("a zero Key has a public key")
	}
}

func TestSignRefusesUnencodableEnvelope(t *testing.T) {
	env := testEnvelope()
	env.Source = ""
	if err := seedKey(1).Sign(env, nil); !errors.Is(err, wire.ErrEncode) || env.Signature != nil {
		t.Fatalf("Sign = %v, signature %v", err, env.Signature)
	}
}

func TestSignAndVerifyRoundTrip(t *testing.T) {
	k := seedKey(1)
	reg := enrolled(t, k, "user-42")
	for name, ctx := range map[string]*wire.SignatureContext{"with context": jsonContext(), "without context": nil, "empty context": {}} {
		env := signedRoundTrip(t, k, testEnvelope(), ctx)
		sig := env.Signature
		if sig.Scheme != 1 || len(sig.KeyID) != 8 || len(sig.Bytes) != 64 || !sig.Context.Equal(ctx) {
			t.Fatalf("%s: capsule = %+v", name, sig)
		}
		if err := wire.Validate(env); err != nil {
			t.Fatalf("%s: signed envelope is invalid: %v", name, err)
		}
		got, err := reg.Verify(env)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if got != (sign.Verified{Principal: "user-42", Kind: sign.KindAgent, KeyID: k.KeyID()}) {
			t.Fatalf("%s: Verified = %+v", name, got)
		}
	}
}

func TestSigningInputLayout(t *testing.T) {
	env := testEnvelope()
	ctx := jsonContext()
	input, err := sign.SigningInput(env, ctx)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := env.Marshal()
	want := append(append([]byte("agdx.signature.v1"), ctx.Marshal()...), body...)
	if !bytes.Equal(input, want) {
		t.Fatalf("signing input\n got %x\nwant %x", input, want)
	}
	noCtx, _ := sign.SigningInput(env, nil)
	if !bytes.Equal(noCtx, append([]byte("agdx.signature.v1"), body...)) {
		t.Fatal("a nil context added bytes to the preimage")
	}
	emptyCtx, _ := sign.SigningInput(env, &wire.SignatureContext{})
	if !bytes.Equal(emptyCtx, append([]byte("agdx.signature.v1\xa0"), body...)) {
		t.Fatal("an empty context is not an empty map in the preimage")
	}
}

func TestSigningInputIgnoresExistingSignature(t *testing.T) {
	k := seedKey(1)
	env := testEnvelope()
	before, _ := sign.SigningInput(env, nil)
	if err := k.Sign(env, nil); err != nil {
		t.Fatal(err)
	}
	first := env.Signature
	after, _ := sign.SigningInput(env, nil)
	if !bytes.Equal(before, after) {
		t.Fatal("the signing input depends on the signature field")
	}
	if err := seedKey(2).Sign(env, jsonContext()); err != nil {
		t.Fatal(err)
	}
	if env.Signature == first || bytes.Equal(env.Signature.KeyID, first.KeyID) {
		t.Fatal("re-signing did not replace the signature")
	}
}

func TestSignCopiesContext(t *testing.T) {
	ctx := jsonContext()
	env := testEnvelope()
	if err := seedKey(1).Sign(env, ctx); err != nil {
		t.Fatal(err)
	}
	*ctx.ContentType = 9
	if *env.Signature.Context.ContentType != 1 {
		t.Fatal("the signature aliases the caller's context")
	}
}

func TestVerifyRejectsEveryTamperedByte(t *testing.T) {
	k := seedKey(3)
	reg := enrolled(t, k, "planner")
	env := testEnvelope()
	if err := k.Sign(env, jsonContext()); err != nil {
		t.Fatal(err)
	}
	signed, _ := env.Marshal()
	assertEveryFlipFails(t, reg, signed)
}

func TestVerifyRejectsMutatedFields(t *testing.T) {
	k := seedKey(3)
	reg := enrolled(t, k, "planner")
	for name, mutate := range map[string]func(*wire.Envelope){
		"body":         func(e *wire.Envelope) { e.Body = []byte(`{"ask":"cancel"}`) },
		"source":       func(e *wire.Envelope) { e.Source = "mallory" },
		"target":       func(e *wire.Envelope) { e.Target = nil },
		"delegation":   func(e *wire.Envelope) { e.Metadata.Set(wire.MetaOnBehalfOf, wire.StrValue("admin")) },
		"context flip": func(e *wire.Envelope) { e.Signature.Context.ContentType = p(uint8(wire.ContentCBOR)) },
		"context drop": func(e *wire.Envelope) { e.Signature.Context = nil },
		"signature":    func(e *wire.Envelope) { e.Signature.Bytes[10] ^= 1 },
	} {
		env := signedRoundTrip(t, k, testEnvelope(), jsonContext())
		mutate(env)
		if _, err := reg.Verify(env); !errors.Is(err, sign.ErrBadSignature) {
			t.Errorf("%s: error = %v, want ErrBadSignature", name, err)
		}
	}
}

func TestVerifyRefusals(t *testing.T) {
	k := seedKey(4)
	reg := enrolled(t, k, "planner")
	for name, tc := range map[string]struct {
		env  func() *wire.Envelope
		want error
	}{
		"unsigned": {func() *wire.Envelope { return testEnvelope() }, sign.ErrUnsigned},
		"unknown scheme": {func() *wire.Envelope {
			e := signedRoundTrip(t, k, testEnvelope(), nil)
			e.Signature.Scheme = 2
			return e
		}, sign.ErrUnknownScheme},
		"unenrolled key": {func() *wire.Envelope { return signedRoundTrip(t, seedKey(5), testEnvelope(), nil) }, sign.ErrUnknownKey},
		"short key id": {func() *wire.Envelope {
			e := signedRoundTrip(t, k, testEnvelope(), nil)
			e.Signature.KeyID = e.Signature.KeyID[:7]
			return e
		}, sign.ErrUnknownKey},
		"63-byte signature": {func() *wire.Envelope {
			e := signedRoundTrip(t, k, testEnvelope(), nil)
			e.Signature.Bytes = e.Signature.Bytes[:63]
			return e
		}, sign.ErrBadSignature},
	} {
		_, err := reg.Verify(tc.env())
		if !errors.Is(err, tc.want) {
			t.Errorf("%s: error = %v, want %v", name, err, tc.want)
		}
		for _, other := range []error{sign.ErrUnsigned, sign.ErrUnknownScheme, sign.ErrUnknownKey, sign.ErrRevoked, sign.ErrOutsideWindow, sign.ErrNoContext, sign.ErrContextMismatch, sign.ErrBadSignature} {
			if other != tc.want && errors.Is(err, other) {
				t.Errorf("%s: error %v also matches %v", name, err, other)
			}
		}
	}
}

func TestVerifyOperatorKind(t *testing.T) {
	op, agent := seedKey(6), seedKey(7)
	reg := sign.NewRegistry()
	if err := reg.EnrollOperator("ops-1", op.Public()); err != nil {
		t.Fatal(err)
	}
	if err := reg.Enroll("planner", agent.Public()); err != nil {
		t.Fatal(err)
	}
	if v, err := reg.VerifyAt(signedRoundTrip(t, op, testEnvelope(), nil), 1); err != nil || v.Kind != sign.KindOperator || v.Principal != "ops-1" {
		t.Fatalf("operator: %+v, %v", v, err)
	}
	if v, err := reg.VerifyAt(signedRoundTrip(t, agent, testEnvelope(), nil), 1); err != nil || v.Kind != sign.KindAgent {
		t.Fatalf("agent: %+v, %v", v, err)
	}
}

func TestVerifyAtValidityWindowIsHalfOpen(t *testing.T) {
	k := seedKey(8)
	reg := sign.NewRegistry()
	if err := reg.EnrollRecord(sign.KeyRecord{Principal: "operator-1", Public: k.Public(), Kind: sign.KindOperator, ValidFromMicros: 100, ValidToMicros: p(uint64(200))}); err != nil {
		t.Fatal(err)
	}
	env := signedRoundTrip(t, k, testEnvelope(), nil)
	for at, want := range map[uint64]error{0: sign.ErrNotYetValid, 99: sign.ErrNotYetValid, 100: nil, 199: nil, 200: sign.ErrExpired, 1 << 60: sign.ErrExpired} {
		_, err := reg.VerifyAt(env, at)
		if !errors.Is(err, want) || (want == nil) != (err == nil) {
			t.Errorf("at %d: error = %v, want %v", at, err, want)
		}
		if want != nil && !errors.Is(err, sign.ErrOutsideWindow) {
			t.Errorf("at %d: %v does not match ErrOutsideWindow", at, err)
		}
	}
	if errors.Is(sign.ErrNotYetValid, sign.ErrExpired) || errors.Is(sign.ErrExpired, sign.ErrNotYetValid) {
		t.Error("ErrNotYetValid and ErrExpired match each other")
	}
	if _, err := reg.Verify(env); err != nil {
		t.Errorf("Verify without a clock consulted the window: %v", err)
	}
}

func TestRevokedKeyFailsEvenWithoutClock(t *testing.T) {
	k := seedKey(9)
	reg := enrolled(t, k, "planner")
	env := signedRoundTrip(t, k, testEnvelope(), jsonContext())
	if err := reg.Revoke(k.KeyID()); err != nil {
		t.Fatal(err)
	}
	if _, err := reg.Verify(env); !errors.Is(err, sign.ErrRevoked) {
		t.Errorf("Verify: %v", err)
	}
	if _, err := reg.VerifyAt(env, 1); !errors.Is(err, sign.ErrRevoked) {
		t.Errorf("VerifyAt: %v", err)
	}
	if _, err := reg.VerifyObserved(env, *jsonContext(), 1); !errors.Is(err, sign.ErrRevoked) {
		t.Errorf("VerifyObserved: %v", err)
	}
	if err := reg.Revoke(seedKey(10).KeyID()); !errors.Is(err, sign.ErrUnknownKey) {
		t.Errorf("revoking an unknown key: %v", err)
	}
	if rec, ok := reg.Lookup(k.KeyID()); !ok || !rec.Revoked {
		t.Errorf("Lookup = %+v, %v", rec, ok)
	}
}

func TestReEnrolmentReplacesTheRecord(t *testing.T) {
	k := seedKey(11)
	reg := enrolled(t, k, "alice")
	env := signedRoundTrip(t, k, testEnvelope(), nil)
	if err := reg.Revoke(k.KeyID()); err != nil {
		t.Fatal(err)
	}
	if err := reg.EnrollOperator("bob", k.Public()); err != nil {
		t.Fatal(err)
	}
	v, err := reg.Verify(env)
	if err != nil || v.Principal != "bob" || v.Kind != sign.KindOperator {
		t.Fatalf("after re-enrolment: %+v, %v", v, err)
	}
}

func TestEnrollRecordValidation(t *testing.T) {
	pub := seedKey(12).Public()
	reg := sign.NewRegistry()
	for name, rec := range map[string]sign.KeyRecord{
		"short public key": {Principal: "p", Public: pub[:31], Kind: sign.KindAgent},
		"empty principal":  {Public: pub, Kind: sign.KindAgent},
		"unknown kind":     {Principal: "p", Public: pub, Kind: "admin"},
		"empty window":     {Principal: "p", Public: pub, Kind: sign.KindAgent, ValidFromMicros: 5, ValidToMicros: p(uint64(5))},
	} {
		if err := reg.EnrollRecord(rec); !errors.Is(err, sign.ErrInvalidKeyRecord) {
			t.Errorf("%s: %v", name, err)
		}
	}
}

func TestEnrollCopiesThePublicKey(t *testing.T) {
	k := seedKey(13)
	pub := append(ed25519.PublicKey(nil), k.Public()...)
	reg := sign.NewRegistry()
	if err := reg.Enroll("planner", pub); err != nil {
		t.Fatal(err)
	}
	pub[0] ^= 0xff
	if _, err := reg.Verify(signedRoundTrip(t, k, testEnvelope(), nil)); err != nil {
		t.Fatalf("mutating the caller's key slice changed the registry: %v", err)
	}
}

func TestVerifyObservedGate(t *testing.T) {
	k := seedKey(14)
	reg := enrolled(t, k, "planner")
	signed := signedRoundTrip(t, k, testEnvelope(), jsonContext())
	observed := func(h wire.Headers) wire.SignatureContext {
		ctx, err := sign.ObservedContext(wire.MustEncodeHeaders(h))
		if err != nil {
			t.Fatal(err)
		}
		return ctx
	}
	headers := wire.EnvelopeHeaders(signed, wire.ContentJSON)
	if v, err := reg.VerifyObserved(signed, observed(headers), 1); err != nil || v.Principal != "planner" {
		t.Fatalf("matching headers: %+v, %v", v, err)
	}

	mutated := headers.Clone()
	mutated.Set(wire.HeaderContentType, wire.Uint8Value(uint8(wire.ContentCBOR)))
	if _, err := reg.VerifyObserved(signed, observed(mutated), 1); !errors.Is(err, sign.ErrContextMismatch) {
		t.Errorf("mutated agdx.ct: %v", err)
	}
	stripped := headers.Clone()
	stripped.Del(wire.HeaderContentType)
	if _, err := reg.VerifyObserved(signed, observed(stripped), 1); !errors.Is(err, sign.ErrContextMismatch) {
		t.Errorf("stripped agdx.ct: %v", err)
	}
	contextless := signedRoundTrip(t, k, testEnvelope(), nil)
	if _, err := reg.VerifyObserved(contextless, observed(headers), 1); !errors.Is(err, sign.ErrNoContext) {
		t.Errorf("context-less signature: %v", err)
	}
	if _, err := reg.VerifyObserved(testEnvelope(), observed(headers), 1); !errors.Is(err, sign.ErrUnsigned) {
		t.Errorf("unsigned: %v", err)
	}
}

func TestVerifyObservedJudgesWindowAtBrokerTime(t *testing.T) {
	k := seedKey(15)
	reg := sign.NewRegistry()
	if err := reg.EnrollRecord(sign.KeyRecord{Principal: "planner", Public: k.Public(), Kind: sign.KindAgent, ValidFromMicros: 1000, ValidToMicros: p(uint64(2000))}); err != nil {
		t.Fatal(err)
	}
	env := signedRoundTrip(t, k, testEnvelope(), jsonContext())
	ctx := *jsonContext()
	// A record stamped while the key was valid verifies even if checked later.
	if _, err := reg.VerifyObserved(env, ctx, 1500); err != nil {
		t.Errorf("inside the window: %v", err)
	}
	if _, err := reg.VerifyObserved(env, ctx, 2000); !errors.Is(err, sign.ErrExpired) {
		t.Errorf("stamped after expiry: %v", err)
	}
	if _, err := reg.VerifyObserved(env, ctx, 999); !errors.Is(err, sign.ErrNotYetValid) {
		t.Errorf("stamped before the window: %v", err)
	}
}

func TestObservedContext(t *testing.T) {
	ctx, err := sign.ObservedContext(wire.EncodedHeaders{})
	if err != nil || ctx.ContentType != nil || ctx.AgentVersion != nil {
		t.Fatalf("no headers: %+v, %v", ctx, err)
	}
	ctx, err = sign.ObservedContext(wire.MustEncodeHeaders(wire.Headers{{Key: wire.HeaderAgentVersion, Value: wire.Uint32Value(1)}, {Key: wire.HeaderContentType, Value: wire.Uint8Value(200)}}))
	if err != nil || !ctx.Equal(&wire.SignatureContext{ContentType: p(uint8(200)), AgentVersion: p(uint32(1))}) {
		t.Fatalf("typed headers: %s, %v", &ctx, err)
	}
	for name, h := range map[string]wire.Headers{
		"string ct": {{Key: wire.HeaderContentType, Value: wire.StringValue("1")}},
		"u8 av":     {{Key: wire.HeaderAgentVersion, Value: wire.Uint8Value(1)}},
	} {
		if _, err := sign.ObservedContext(wire.MustEncodeHeaders(h)); !errors.Is(err, wire.ErrHeaderType) {
			t.Errorf("%s: %v", name, err)
		}
	}
}

func TestVerifyDelegation(t *testing.T) {
	k := seedKey(16)
	reg := enrolled(t, k, "svc-bot")
	v, user, err := reg.VerifyDelegation(signedRoundTrip(t, k, testEnvelope(), nil))
	if err != nil || v.Principal != "svc-bot" || user != "user-42" {
		t.Fatalf("delegation = %+v, %q, %v", v, user, err)
	}
	plain := testEnvelope()
	plain.Metadata.Delete(wire.MetaOnBehalfOf)
	if _, user, err := reg.VerifyDelegation(signedRoundTrip(t, k, plain, nil)); err != nil || user != "" {
		t.Fatalf("no delegation = %q, %v", user, err)
	}
	if _, _, err := reg.VerifyDelegation(testEnvelope()); !errors.Is(err, sign.ErrUnsigned) {
		t.Fatalf("unsigned delegation: %v", err)
	}
}

func TestRegistryConcurrentUse(t *testing.T) {
	reg := sign.NewRegistry()
	keys := make([]*sign.Key, 8)
	envs := make([]*wire.Envelope, len(keys))
	for i := range keys {
		keys[i] = seedKey(byte(100 + i))
		envs[i] = signedRoundTrip(t, keys[i], testEnvelope(), jsonContext())
	}
	var wg sync.WaitGroup
	for i := range keys {
		wg.Add(2)
		go func() {
			defer wg.Done()
			for j := 0; j < 50; j++ {
				_ = reg.Enroll("p", keys[i].Public())
				if j%10 == 0 {
					_ = reg.Revoke(keys[i].KeyID())
				}
			}
		}()
		go func() {
			defer wg.Done()
			for j := 0; j < 50; j++ {
				_, _ = reg.VerifyObserved(envs[i], *jsonContext(), uint64(j))
				_, _ = reg.Lookup(keys[i].KeyID())
			}
		}()
	}
	wg.Wait()
	for i, k := range keys {
		if err := reg.Enroll("final", k.Public()); err != nil {
			t.Fatal(err)
		}
		if v, err := reg.Verify(envs[i]); err != nil || v.Principal != "final" {
			t.Fatalf("after concurrent use: %+v, %v", v, err)
		}
	}
}
