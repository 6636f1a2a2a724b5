// Package wire implements the AGDX wire format byte for byte as the reference
// (laser-sdk's laser-wire crate) writes it: the agent envelope and its
// per-kind validation, the dead-letter, error-body, signature, agent-card and
// claim-check capsules, the Iggy header binding of enveloped messages, and the
// string-header provenance of plain messages.
//
// Every payload is one CBOR data item with no framing. Structs are maps with
// text keys in declaration order, absent fields are omitted, integers and
// floats take their shortest exact form and metadata keys are sorted
// bytewise; signatures cover a re-encoding, so these rules are load-bearing.
// The codec uses no reflection: encoding appends heads directly, and every
// record decodes through one mechanism, a table of its fields (fields.go,
// with the dispatch generated into fields_gen.go) that one map walk reads
// in a single pass over the buffer. Decoding
// accepts and refuses what the reference's decoder does, field type by
// field type (tags, indefinite
// lengths, non-shortest heads and bignums where it reads them; trailing
// bytes, unknown kinds, bad agent ids, wrong id lengths and invalid UTF-8
// are errors), save four shapes refused on purpose (two-byte simple values,
// nested indefinite chunks, enums in an ambiguous form such as a map for
// the kind, duplicate metadata keys):
// docs/wire.md has the table and the reasons, and TestWireDiff checks it
// against the reference's crate. Nothing panics on bad input.
package wire
