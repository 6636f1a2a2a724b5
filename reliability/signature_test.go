package reliability_test

import (
	"bytes"
	"errors"
	"testing"
	"time"

	"github.com/lasergo/laser/internal/figures"
	"github.com/lasergo/laser/runtime"
	"github.com/lasergo/laser/sign"
	"github.com/lasergo/laser/wire"
)

// signedRecord is one signed (or not) record of the signature scenario.
type signedRecord struct {
	name    string
	headers wire.Headers
	payload []byte
	// refusal is the sign error the gate must report; nil means the record
	// is accepted (handled), unless replay says it repeats an earlier one.
	refusal error
	replay  bool
}

func seed(b byte) [32]byte {
	var s [32]byte
	for i := range s {
		s[i] = b + byte(i)
	}
	return s
}

// TestForgedReplayedExpiredAndRevokedSignaturesAreRefused runs a consumer
// that requires signatures over records signed every wrong way: each
// refusal is dead-lettered as rejected with detail "signature verification
// failed" and a cause wrapping the specific sign error; a replayed record is
// dropped, neither handled nor dead-lettered; a valid record is handled.
func TestForgedReplayedExpiredAndRevokedSignaturesAreRefused(t *testing.T) {
	overTransports(t, func(t *testing.T, w *world) {
		now := uint64(brokerEpoch.UnixMicro())
		hour := uint64(time.Hour / time.Microsecond)
		good, unknown, expired, notYet, revoked := sign.NewKey(seed(1)), sign.NewKey(seed(2)), sign.NewKey(seed(3)), sign.NewKey(seed(4)), sign.NewKey(seed(5))
		peer := sign.NewKey(seed(6))
		reg := sign.NewRegistry()
		ended := now - hour
		for _, rec := range []sign.KeyRecord{
			{Principal: "planner", Public: good.Public(), Kind: sign.KindAgent},
			{Principal: "peer", Public: peer.Public(), Kind: sign.KindAgent},
			{Principal: "old@acme", Public: expired.Public(), Kind: sign.KindAgent, ValidToMicros: &ended},
			{Principal: "early@acme", Public: notYet.Public(), Kind: sign.KindAgent, ValidFromMicros: now + hour},
			{Principal: "gone@acme", Public: revoked.Public(), Kind: sign.KindAgent},
		} {
			if err := reg.EnrollRecord(rec); err != nil {
				t.Fatal(err)
			}
		}
		if err := reg.Revoke(revoked.KeyID()); err != nil {
			t.Fatal(err)
		}

		n := uint64(0)
		// signed builds a command, signs it with key binding ct (and the
		// header says headerCT), and lets tamper change it afterwards.
		signed := func(key *sign.Key, ct, headerCT wire.ContentType, tamper func(*wire.Envelope)) ([]byte, wire.Headers) {
			n++
			rec, corr := wire.IDFromUint128(0x5157, n), wire.IDFromUint128(0xc022, n)
			env := &wire.Envelope{Kind: wire.KindCommand, Record: &rec, Conversation: hostileConv, Source: "planner", Correlation: &corr, Body: []byte(`{"n":1}`)}
			if key != nil {
				code, av := uint8(ct), wire.AgentOpVersion
				if err := key.Sign(env, &wire.SignatureContext{ContentType: &code, AgentVersion: &av}); err != nil {
					t.Fatal(err)
				}
			}
			if tamper != nil {
				tamper(env)
			}
			b, err := env.Marshal()
			if err != nil {
				t.Fatal(err)
			}
			return b, wire.EnvelopeHeaders(env, headerCT)
		}
		rec := func(name string, refusal error, payload []byte, headers wire.Headers) signedRecord {
			return signedRecord{name: name, headers: headers, payload: payload, refusal: refusal}
		}
		json := wire.ContentJSON
		validPayload, validHeaders := signed(good, json, json, nil)
		forgedPayload, forgedHeaders := signed(unknown, json, json, nil)
		tamperedPayload, tamperedHeaders := signed(good, json, json, func(e *wire.Envelope) { e.Body = []byte(`{"n":1000000}`) })
		expiredPayload, expiredHeaders := signed(expired, json, json, nil)
		earlyPayload, earlyHeaders := signed(notYet, json, json, nil)
		revokedPayload, revokedHeaders := signed(revoked, json, json, nil)
		mismatchPayload, mismatchHeaders := signed(good, json, wire.ContentCBOR, nil)
		unsignedPayload, unsignedHeaders := signed(nil, json, json, nil)
		// An enrolled peer signing as planner: a key proves its principal,
		// and only that principal may be the source.
		peerPayload, peerHeaders := signed(peer, json, json, nil)
		records := []signedRecord{
			rec("valid", nil, validPayload, validHeaders),
			rec("forged_unknown_key", sign.ErrUnknownKey, forgedPayload, forgedHeaders),
			rec("forged_tampered_body", sign.ErrBadSignature, tamperedPayload, tamperedHeaders),
			rec("expired_key", sign.ErrExpired, expiredPayload, expiredHeaders),
			rec("not_yet_valid_key", sign.ErrNotYetValid, earlyPayload, earlyHeaders),
			rec("revoked_key", sign.ErrRevoked, revokedPayload, revokedHeaders),
			rec("context_mismatch", sign.ErrContextMismatch, mismatchPayload, mismatchHeaders),
			rec("unsigned", sign.ErrUnsigned, unsignedPayload, unsignedHeaders),
			rec("peer_signs_as_planner", sign.ErrSourceMismatch, peerPayload, peerHeaders),
			{name: "replayed", headers: validHeaders, payload: validPayload, replay: true},
			{name: "replayed_again", headers: validHeaders, payload: validPayload, replay: true},
		}

		h := w.start(runtime.Serial, reg)
		positions := make([]runtime.Position, len(records))
		for i, r := range records {
			pos, err := w.publish(r.headers, r.payload)
			if err != nil {
				t.Fatalf("%s: publish: %v", r.name, err)
			}
			positions[i] = pos
		}
		// A plain message cannot carry a signature at all.
		plainPos, err := w.publish(plainHeaders(t), []byte("plain"))
		if err != nil {
			t.Fatal(err)
		}
		sentinelPayload, sentinelHeaders := signed(good, json, json, nil)
		sentinel, err := w.publish(sentinelHeaders, sentinelPayload)
		if err != nil {
			t.Fatal(err)
		}
		w.awaitHandled(sentinel)
		w.running(h)

		capsules := w.capsules()
		refused, replays := 0, 0
		for i, r := range records {
			pos := positions[i]
			w.mu.Lock()
			times := w.handled[pos]
			w.mu.Unlock()
			caps, sunk := capsules[pos], w.sinkFor(pos)
			switch {
			case r.replay:
				if times != 0 || len(caps) != 0 {
					t.Errorf("%s: handled %d times with %d capsules, want dropped silently", r.name, times, len(caps))
				}
				replays++
			case r.refusal == nil:
				if times != 1 || len(caps) != 0 {
					t.Errorf("%s: handled %d times with %d capsules, want handled once", r.name, times, len(caps))
				}
			default:
				if times != 0 || len(caps) != 1 || len(sunk) != 1 {
					t.Errorf("%s: handled %d times, %d capsules, %d sink calls; want refused once", r.name, times, len(caps), len(sunk))
					continue
				}
				c := caps[0].dl
				if c.Reason != wire.ReasonRejected || c.Detail == nil || *c.Detail != "signature verification failed" || !bytes.Equal(c.Payload, r.payload) {
					t.Errorf("%s: capsule %s detail %v, want rejected, \"signature verification failed\", payload verbatim", r.name, c.Reason, c.Detail)
				}
				if cause := sunk[0].Cause; !errors.Is(cause, r.refusal) || runtime.CodeOf(cause) != runtime.CodeSignature {
					t.Errorf("%s: sink cause %v, want one wrapping %v and runtime.CodeSignature", r.name, cause, r.refusal)
				}
				if r.refusal == sign.ErrExpired || r.refusal == sign.ErrNotYetValid {
					if !errors.Is(sunk[0].Cause, sign.ErrOutsideWindow) {
						t.Errorf("%s: cause %v does not match ErrOutsideWindow", r.name, sunk[0].Cause)
					}
				}
				refused++
			}
		}
		if caps := capsules[plainPos]; len(caps) != 1 || caps[0].dl.Reason != wire.ReasonRejected {
			t.Errorf("plain message on a verified topic: %d capsules, want one rejected", len(caps))
		}
		w.logs.waitFor(t, "dropping replayed signed record")
		w.shutdown(h)
		w.committedThrough(sentinel)
		figures.Record(t, figures.Row{Section: "signatures", Case: w.name, Values: []figures.Value{
			figures.V("records", len(records)+2),
			figures.V("refused", refused+1),
			figures.V("replays_dropped", replays),
			figures.V("accepted", 2),
		}})
	})
}
