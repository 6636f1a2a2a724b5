package sign_test

import (
	"bytes"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/lasergo/laser/internal/vectors"
	"github.com/lasergo/laser/sign"
	"github.com/lasergo/laser/wire"
)

// vector is one signature vector file. Byte fields may be hex ("x_hex") or
// base64 ("x_base64" / "x_b64"); read them with bytesField.
type vector struct {
	raw     map[string]json.RawMessage
	Context *struct {
		ContentType  *uint8  `json:"content_type"`
		AgentVersion *uint32 `json:"agent_version"`
	} `json:"context"`
}

func (v vector) bytesField(t *testing.T, name string) []byte {
	t.Helper()
	for suffix, decode := range map[string]func(string) ([]byte, error){
		"_hex": hex.DecodeString, "_base64": base64.StdEncoding.DecodeString, "_b64": base64.StdEncoding.DecodeString,
	} {
		raw, ok := v.raw[name+suffix]
		if !ok {
			continue
		}
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			t.Fatalf("%s%s: %v", name, suffix, err)
		}
		b, err := decode(s)
		if err != nil {
			t.Fatalf("%s%s: %v", name, suffix, err)
		}
		return b
	}
	t.Fatalf("vector has no %s field", name)
	return nil
}

func (v vector) context() *wire.SignatureContext {
	if v.Context == nil {
		return nil
	}
	return &wire.SignatureContext{ContentType: v.Context.ContentType, AgentVersion: v.Context.AgentVersion}
}

func loadVectors(t *testing.T) map[string]vector {
	out := map[string]vector{}
	for _, p := range vectors.Signatures.Paths(t) {
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		var v vector
		if err := json.Unmarshal(data, &v.raw); err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		if err := json.Unmarshal(data, &v); err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		out[filepath.Base(p)] = v
	}
	return out
}

func TestSignatureVectors(t *testing.T) {
	for name, v := range loadVectors(t) {
		t.Run(name, func(t *testing.T) {
			key, err := sign.KeyFromSeed(v.bytesField(t, "seed"))
			if err != nil {
				t.Fatal(err)
			}
			if pub := v.bytesField(t, "public_key"); !bytes.Equal(key.Public(), pub) {
				t.Fatalf("public key = %x, want %x", key.Public(), pub)
			}
			if id := key.KeyID(); !bytes.Equal(id[:], v.bytesField(t, "key_id")) {
				t.Fatalf("key id = %x", id)
			}
			envBytes := v.bytesField(t, "envelope")
			env, err := wire.DecodeEnvelope(envBytes)
			if err != nil {
				t.Fatalf("decode vector envelope: %v", err)
			}
			if again, _ := env.Marshal(); !bytes.Equal(again, envBytes) {
				t.Fatalf("vector envelope is not canonical for this encoder\n got %x\nwant %x", again, envBytes)
			}
			ctx := v.context()
			input, err := sign.SigningInput(env, ctx)
			if err != nil {
				t.Fatal(err)
			}
			if want := v.bytesField(t, "signing_input"); !bytes.Equal(input, want) {
				t.Fatalf("signing input\n got %x\nwant %x", input, want)
			}
			if err := key.Sign(env, ctx); err != nil {
				t.Fatal(err)
			}
			if want := v.bytesField(t, "signature"); !bytes.Equal(env.Signature.Bytes, want) {
				t.Fatalf("signature\n got %x\nwant %x", env.Signature.Bytes, want)
			}

			reg := sign.NewRegistry()
			if err := reg.Enroll("vector-signer", key.Public()); err != nil {
				t.Fatal(err)
			}
			signed, err := env.Marshal()
			if err != nil {
				t.Fatal(err)
			}
			decoded, err := wire.DecodeEnvelope(signed)
			if err != nil {
				t.Fatal(err)
			}
			if got, err := reg.Verify(decoded); err != nil || got.Principal != "vector-signer" {
				t.Fatalf("Verify = %+v, %v", got, err)
			}
			if ctx != nil {
				if _, err := reg.VerifyObserved(decoded, *ctx, 0); err != nil {
					t.Fatalf("VerifyObserved with the bound context: %v", err)
				}
			}
			assertEveryFlipFails(t, reg, signed)
		})
	}
}

// assertEveryFlipFails flips each byte of a signed envelope; whatever still
// decodes must fail verification.
func assertEveryFlipFails(t *testing.T, reg *sign.Registry, signed []byte) {
	t.Helper()
	tampered := append([]byte{}, signed...)
	for i := range tampered {
		for _, mask := range []byte{0x01, 0x80, 0xff} {
			tampered[i] ^= mask
			if env, err := wire.DecodeEnvelope(tampered); err == nil {
				if v, err := reg.Verify(env); err == nil {
					t.Fatalf("flipping byte %d with %#x still verifies as %+v", i, mask, v)
				}
			}
			tampered[i] ^= mask
		}
	}
}
