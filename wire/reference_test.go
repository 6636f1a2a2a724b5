package wire_test

import (
	"bytes"
	"encoding/hex"
	"errors"
	"strings"
	"testing"

	"github.com/lasergo/laser/wire"
)

// The tests in this file pin one class each of input on which a differential
// run against the reference's laser-wire crate found the two decoders
// disagreeing (issue 32). Each input is the minimal case in hex; the comment
// says what the reference does with it.

// unhex decodes a hex string that may hold spaces for readability.
func unhex(t testing.TB, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(strings.ReplaceAll(s, " ", ""))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// refID is a 16-byte id as its CBOR byte string, in hex.
const refID = "50 0102030405060708090a0b0c0d0e0f10"

// eventWith returns a valid event envelope (kind, record, conversation,
// source, body) in which field carries value (hex of its CBOR item): the
// field's value is replaced when the event has one, else the field is added
// before the body.
func eventWith(t testing.TB, field, value string) []byte {
	t.Helper()
	pairs := [][2]string{
		{"kind", "65 6576656e74"},
		{"record", refID},
		{"conversation", refID},
		{"source", "61 61"},
		{"body", "41 70"},
	}
	found := false
	for i := range pairs {
		if pairs[i][0] == field {
			pairs[i][1], found = value, true
		}
	}
	if !found {
		pairs = append(pairs[:4:4], [2]string{field, value}, pairs[4])
	}
	out := []byte{0xa0 | byte(len(pairs))}
	for _, p := range pairs {
		out = append(out, 0x60|byte(len(p[0])))
		out = append(out, p[0]...)
		out = append(out, unhex(t, p[1])...)
	}
	return out
}

// deadLetterWith returns a dead letter (reason 1, 5 attempts) with the
// given source and payload items, in hex.
func deadLetterWith(t testing.TB, source, payload string) []byte {
	t.Helper()
	return unhex(t, "a4 66736f75726365"+source+"66726561736f6e 01 68617474656d707473 05 677061796c6f6164"+payload)
}

// refuses asserts that decode fails on in with an error matching ErrDecode.
func refuses(t *testing.T, decode func([]byte) error, in []byte) {
	t.Helper()
	err := decode(in)
	if err == nil {
		t.Fatalf("decoded %x, which the reference rejects", in)
	}
	if !errors.Is(err, wire.ErrDecode) {
		t.Fatalf("error %v does not match ErrDecode", err)
	}
}

func decodeEnvelope(b []byte) error   { _, err := wire.DecodeEnvelope(b); return err }
func decodeDeadLetter(b []byte) error { _, err := wire.DecodeDeadLetter(b); return err }
func decodeErrorBody(b []byte) error  { _, err := wire.DecodeErrorBody(b); return err }

// reencodesErrorBody decodes in as an error body and checks its
// re-encoding is want, as the reference's.
func reencodesErrorBody(t *testing.T, in, want string) *wire.ErrorBody {
	t.Helper()
	body, err := wire.DecodeErrorBody(unhex(t, in))
	if err != nil {
		t.Fatalf("rejected %s, which the reference accepts: %v", in, err)
	}
	got, err := body.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, unhex(t, want)) {
		t.Fatalf("re-encoded %x, the reference writes %s", got, strings.ReplaceAll(want, " ", ""))
	}
	return body
}

// ---- we accepted, the reference rejects ----

func TestDecodeRejectsIndefiniteTextAsStructKey(t *testing.T) {
	// {(_ "co", "de"): 6}: the reference reads struct keys only as definite
	// strings.
	refuses(t, decodeErrorBody, unhex(t, "a1 7f 62636f 6164 6165 ff 06"))
}

func TestDecodeRejectsIndefiniteTextAsKind(t *testing.T) {
	// kind (_ "ev", "ent"): the kind is read as an identifier, definite only.
	refuses(t, decodeEnvelope, eventWith(t, "kind", "7f 62 6576 63 656e74 ff"))
}

func TestDecodeRejectsIndefiniteBytesAsID(t *testing.T) {
	// conversation (_ h'0102…08', h'090a…10'): ids are read as one definite
	// byte string.
	refuses(t, decodeEnvelope, eventWith(t, "conversation", "5f 48 0102030405060708 48 090a0b0c0d0e0f10 ff"))
}

func TestDecodeRejectsIndefiniteBytesAsLogPosition(t *testing.T) {
	// A dead letter whose source is (_ h'00…', h'00…'), 10 + 10 bytes.
	refuses(t, decodeDeadLetter, deadLetterWith(t, "5f 4a00000000000000000000 4a00000000000000000000 ff", "4170"))
}

func TestDecodeRejectsUnassignedSimpleValueInUnknownField(t *testing.T) {
	// {code: 6, x: simple(16)}: skipping an unknown field, the reference
	// knows false, true, null, undefined and floats, no other simple value.
	refuses(t, decodeErrorBody, unhex(t, "a2 64636f6465 06 6178 f0"))
}

func TestDecodeCountsTagsTowardsTheNestingLimit(t *testing.T) {
	// {code: 6, x: 1(1(…(0)))}: each tag before a skipped value is one level
	// of the reference's nesting limit, as an array is. 255 tags fit under
	// the error body's own level, 256 do not.
	for n, ok := range map[int]bool{wire.MaxNestingDepth - 1: true, wire.MaxNestingDepth: false} {
		in := append(unhex(t, "a2 64636f6465 06 6178"), bytes.Repeat([]byte{0xc1}, n)...)
		in = append(in, 0x00)
		err := decodeErrorBody(in)
		if ok && err != nil {
			t.Errorf("%d tags rejected: %v", n, err)
		}
		if !ok && err == nil {
			t.Errorf("%d tags accepted", n)
		}
	}
}

func TestDecodeRejectsTaggedMetadataValue(t *testing.T) {
	// metadata {"k": 1(1)}: a metadata value is an untagged union, which a
	// tag matches no variant of.
	refuses(t, decodeEnvelope, eventWith(t, "metadata", "a1 616b c1 01"))
}

func TestDecodeRejectsTaggedDetailValue(t *testing.T) {
	// {code: 6, detail: {"k": 1(1)}}.
	refuses(t, decodeErrorBody, unhex(t, "a2 64636f6465 06 6664657461696c a1 616b c1 01"))
}

func TestDecodeRejectsTaggedBody(t *testing.T) {
	// body 24(h'70'): byte fields take a byte string or an array of u8, not
	// a tagged item.
	refuses(t, decodeEnvelope, eventWith(t, "body", "d818 41 70"))
}

func TestDecodeRejectsTaggedDeadLetterPayload(t *testing.T) {
	refuses(t, decodeDeadLetter, deadLetterWith(t, "54"+strings.Repeat("00", 20), "d818 41 70"))
}

func TestDecodeRejectsTaggedSignatureKeyID(t *testing.T) {
	sig := "a3 66736368656d65 01 666b65795f6964 d818 48 0000000000000000 656279746573 5840" + strings.Repeat("00", 64)
	refuses(t, decodeEnvelope, eventWith(t, "signature", sig))
}

func TestDecodeRejectsTagBeforeNullOnOptionalField(t *testing.T) {
	// {code: 6, detail: 1(null)}: only a bare null (or undefined) means
	// absent; behind a tag it is read as the field's type, which null is not.
	refuses(t, decodeErrorBody, unhex(t, "a2 64636f6465 06 6664657461696c c1 f6"))
	refuses(t, decodeEnvelope, eventWith(t, "target", "c1 f6"))
}

func TestDecodeRejectsUTF8SplitAcrossTextChunks(t *testing.T) {
	// (_ "\xc3", "\xa9"): RFC 8949 §3.2.3 makes each chunk of an indefinite
	// text string valid UTF-8 on its own, and the reference checks so.
	refuses(t, decodeErrorBody, unhex(t, "a2 64636f6465 06 6178 7f 61c3 61a9 ff"))
	refuses(t, decodeErrorBody, unhex(t, "a2 64636f6465 06 676d657373616765 7f 61c3 61a9 ff"))
}

func TestDecodeRejectsTag2BeforePlainInteger(t *testing.T) {
	// {code: 2(6)}: tag 2 marks a bignum, whose content must be a byte string.
	refuses(t, decodeErrorBody, unhex(t, "a1 64636f6465 c2 06"))
}

func TestDecodeRejectsTag3BeforePlainInteger(t *testing.T) {
	refuses(t, decodeErrorBody, unhex(t, "a1 64636f6465 c3 06"))
}

// ---- we rejected, the reference accepts ----

func TestDecodeAcceptsBignumInIntegerField(t *testing.T) {
	// {code: 2(h'06')}: a bignum reads as the integer it spells.
	body := reencodesErrorBody(t, "a1 64636f6465 c2 41 06", "a2 64636f6465 06 69726574727961626c65 f4")
	if body.Code != wire.ErrorToolFailure {
		t.Fatalf("code %v, want tool_failure", body.Code)
	}
}

func TestDecodeReadsByteStringMetadataValueAsText(t *testing.T) {
	// {code: 6, detail: {"k": h'616263'}}: the reference's text variant
	// takes UTF-8 bytes, so the value is "abc" and re-encodes as text.
	body := reencodesErrorBody(t, "a2 64636f6465 06 6664657461696c a1 616b 43 616263",
		"a3 64636f6465 06 69726574727961626c65 f4 6664657461696c a1 616b 63 616263")
	if s, ok := body.Detail.Get("k").AsStr(); !ok || s != "abc" {
		t.Fatalf("detail k = %s, want the text \"abc\"", body.Detail.Get("k"))
	}
}

// ---- both accept, the bytes differed ----

func TestDecodeQuietsSignalingNaN(t *testing.T) {
	// {code: 6, detail: {"k": f16 7c01}}: the reference widens half and single
	// floats as the hardware does, setting the quiet bit, so the signaling
	// NaN comes back as the quiet f16 7e01.
	reencodesErrorBody(t, "a2 64636f6465 06 6664657461696c a1 616b f9 7c01",
		"a3 64636f6465 06 69726574727961626c65 f4 6664657461696c a1 616b f9 7e01")
	reencodesErrorBody(t, "a2 64636f6465 06 6664657461696c a1 616b fa 7f800001",
		"a3 64636f6465 06 69726574727961626c65 f4 6664657461696c a1 616b fa 7fc00001")
}

// ---- found by the differential test (make wirediff) beyond the list ----

func TestDecodeRejectsStructKeyLongerThanTheReferencesScratch(t *testing.T) {
	// {code: 6, "aaa…" (4097 bytes): 1}: the reference reads a field name
	// into a 4 KiB buffer, and a longer one fails even when unknown.
	long := func(n int) []byte {
		in := append(unhex(t, "a2 64636f6465 06 79"), byte(n>>8), byte(n))
		return append(append(in, bytes.Repeat([]byte{'a'}, n)...), 0x01)
	}
	if err := decodeErrorBody(long(4096)); err != nil {
		t.Fatalf("a 4096-byte key rejected: %v", err)
	}
	refuses(t, decodeErrorBody, long(4097))
}

func TestDecodeRejectsNegativeBignumBelowI128InUnknownField(t *testing.T) {
	// {code: 6, x: 3(h'ffff…ff')}: skipping it, the reference reads a bignum
	// of up to 16 bytes as an i128, and -1 - (2^128 - 1) is below its range;
	// one of 17 bytes is skipped as a tagged byte string.
	refuses(t, decodeErrorBody, unhex(t, "a2 64636f6465 06 6178 c3 50"+strings.Repeat("ff", 16)))
	if err := decodeErrorBody(unhex(t, "a2 64636f6465 06 6178 c3 50 7f"+strings.Repeat("ff", 15))); err != nil {
		t.Fatalf("a negative bignum inside the i128 range rejected: %v", err)
	}
	if err := decodeErrorBody(unhex(t, "a2 64636f6465 06 6178 c3 51"+strings.Repeat("ff", 17))); err != nil {
		t.Fatalf("a 17-byte negative bignum rejected: %v", err)
	}
}

// cardWithInput is an agent card with one capability, skill "a", whose
// input is the given item (hex).
func cardWithInput(t testing.TB, input string) []byte {
	t.Helper()
	return unhex(t, "a1 6c6361706162696c6974696573 81 a2 68736b696c6c5f6964 6161 65696e707574"+input)
}

func decodeCard(b []byte) error { _, err := wire.DecodeAgentCard(b); return err }

func TestDecodeRejectsIndefiniteMapAsContentRef(t *testing.T) {
	// input {_ "content_type": "json"}: an enum with data is read from a
	// definite map of one entry only.
	refuses(t, decodeCard, cardWithInput(t, "bf 6c636f6e74656e745f74797065 646a736f6e ff"))
}

func TestDecodeRejectsIndefiniteTextAsContentType(t *testing.T) {
	// input {"content_type": (_ "js", "on")}: a content type is an enum, its
	// name a definite string.
	refuses(t, decodeCard, cardWithInput(t, "a1 6c636f6e74656e745f74797065 7f 626a73 626f6e ff"))
}

func TestDecodeRejectsNullCapabilities(t *testing.T) {
	// {capabilities: null}: the list is no option, so null is not "absent".
	refuses(t, decodeCard, unhex(t, "a1 6c6361706162696c6974696573 f6"))
}

func TestDecodeReadsEmptyByteStringAsNoCapabilities(t *testing.T) {
	// {capabilities: h''}: the reference reads a byte string as a list of
	// its bytes, so an empty one is an empty list, and re-encodes {}.
	card, err := wire.DecodeAgentCard(unhex(t, "a1 6c6361706162696c6974696573 40"))
	if err != nil {
		t.Fatalf("rejected, the reference accepts: %v", err)
	}
	if got, err := card.Marshal(); err != nil || !bytes.Equal(got, []byte{0xa0}) {
		t.Fatalf("re-encoded %x, %v; the reference writes a0", got, err)
	}
	refuses(t, decodeCard, unhex(t, "a1 6c6361706162696c6974696573 41 00"))
}

// ---- the reference accepts, we refuse on purpose (docs/wire.md) ----

func TestDecodeRefusesTwoByteSimpleValuesBelow32(t *testing.T) {
	// f8 15 and f8 16 spell true and null in a form RFC 8949 §3.3 makes
	// not well-formed; the reference reads them as true and null.
	refuses(t, decodeErrorBody, unhex(t, "a2 64636f6465 06 69726574727961626c65 f815"))
	refuses(t, decodeErrorBody, unhex(t, "a2 64636f6465 06 676d657373616765 f816"))
}

func TestDecodeRefusesNestedIndefiniteChunk(t *testing.T) {
	// message (_ (_ "a")): a chunk of an indefinite string must be definite
	// (RFC 8949 §3.2.3); the reference flattens the nesting.
	refuses(t, decodeErrorBody, unhex(t, "a2 64636f6465 06 676d657373616765 7f 7f 6161 ff ff"))
}

func TestDecodeRefusesMapInKindsPlace(t *testing.T) {
	// kind {"event": …}: the reference reads the map's key as the kind and
	// leaves its value in the stream, where it is read as the next field
	// name: here the map hides "tool": "abc" in an envelope that claims six
	// fields, and the reference decodes a tool nobody wrote as a field.
	in := eventWith(t, "kind", "a1 656576656e74 64746f6f6c 63616263")
	in[0]++ // the smuggled pair is one more than the map claims
	refuses(t, decodeEnvelope, in)
}

func TestDecodeRefusesContentRefAsBareName(t *testing.T) {
	// input "schema_id": the reference reads the name as the variant and the
	// next item in the stream as its content, here the "x" after the
	// capability map's two entries, which its count does not cover.
	refuses(t, decodeCard, cardWithInput(t, "69736368656d615f6964 6178"))
}

func TestDecodeRefusesDuplicateMetadataKey(t *testing.T) {
	// metadata {"k": 1, "k": 2}: the reference keeps the last value; a
	// signed record with two values for one key reads differently to a
	// reader that keeps the first.
	err := decodeEnvelope(eventWith(t, "metadata", "a2 616b 01 616b 02"))
	if !errors.Is(err, wire.ErrDuplicateKey) {
		t.Fatalf("error %v, want ErrDuplicateKey", err)
	}
}
