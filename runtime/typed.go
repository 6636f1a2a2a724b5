package runtime

import (
	"context"
	"encoding/json"
	"fmt"
	"iter"

	"github.com/fxamacker/cbor/v2"

	"github.com/lasergo/laser/wire"
)

// bodyCBOR encodes typed bodies canonically (sorted map keys, shortest
// floats), so equal values produce equal bytes and signatures.
var bodyCBOR, _ = cbor.CoreDetEncOptions().EncMode()

// encodeFailed makes an encoder's err permanent: a value that does not
// encode (a NaN in JSON) will not encode on a retry either.
func encodeFailed(v any, ct wire.ContentType, err error) error {
	if err == nil {
		return nil
	}
	return &Error{Code: CodeCodec, Msg: fmt.Sprintf("encode %T as %s", v, ct), Err: err}
}

// EncodeBody encodes a typed body in content type ct (CBOR or JSON). A
// value that does not encode fails with a permanent CodeCodec *Error.
func EncodeBody(v any, ct wire.ContentType) ([]byte, error) {
	switch ct {
	case wire.ContentCBOR:
		b, err := bodyCBOR.Marshal(v)
		return b, encodeFailed(v, ct, err)
	case wire.ContentJSON:
		b, err := json.Marshal(v)
		return b, encodeFailed(v, ct, err)
	}
	return nil, &Error{Code: CodeUnsupported, Msg: fmt.Sprintf("cannot encode a typed body as %s", ct)}
}

// Decode decodes the message body into v by the message's content type,
// or by def when the message states none or states raw: raw says the bytes
// are opaque, not how they are encoded, and it is what the reference SDKs'
// contracts and ctx.respond stamp on every body. Failures are permanent
// errors: a body that does not decode will not decode on a retry either.
func (m *Message) Decode(v any, def wire.ContentType) error {
	ct := def
	if m.HasContentType && m.ContentType != wire.ContentRaw {
		ct = m.ContentType
	}
	var err error
	switch ct {
	case wire.ContentCBOR:
		err = cbor.Unmarshal(m.Body(), v)
	case wire.ContentJSON:
		err = json.Unmarshal(m.Body(), v)
	default:
		return Reject(fmt.Errorf("cannot decode a %s body into %T", ct, v))
	}
	if err != nil {
		return Reject(fmt.Errorf("decode %s body into %T: %w", ct, v, err))
	}
	return nil
}

// Call sends a typed request for operation op and decodes the typed reply.
// An AGDX error reply comes back as a remote *Error; no reply in time as an
// error of CodeTimeout. Called with a handler's *Ctx (or a context
// derived from it), it continues the handled conversation (see continue.go).
func Call[T any](ctx context.Context, client *Client, msg Out, op string, ct wire.ContentType, in any, opts ...Option) (T, error) {
	var out T
	body, err := EncodeBody(in, ct)
	if err != nil {
		return out, err
	}
	msg.Body = body
	opts = append([]Option{WithOperation(op), WithContentType(ct)}, continuing(ctx, opts)...)
	reply, err := client.Request(ctx, msg, opts...)
	if err != nil {
		return out, err
	}
	if err := reply.Decode(&out, ct); err != nil {
		return out, fmt.Errorf("reply to %s: %w", op, err)
	}
	return out, nil
}

// Tell sends a typed command (or, when msg's Kind says so, an event) for
// operation op without waiting for a reply; from a handler, in the handled
// conversation (see Call), and with no From, as the handling agent (see
// Out).
func Tell(ctx context.Context, client *Client, msg Out, op string, ct wire.ContentType, in any, opts ...Option) error {
	body, err := EncodeBody(in, ct)
	if err != nil {
		return err
	}
	msg.Body = body
	opts = append([]Option{WithOperation(op), WithContentType(ct)}, continuing(ctx, opts)...)
	_, err = client.Send(ctx, msg, opts...)
	return err
}

// CallStream sends a typed request for streaming operation op and yields
// the items of the answer, decoded from ct, as they arrive in sequence
// order. Errors are those of Client.Stream, or a codec error for an item
// that does not decode.
func CallStream[T any](ctx context.Context, client *Client, msg Out, op string, ct wire.ContentType, in any, opts ...Option) iter.Seq2[T, error] {
	body, err := EncodeBody(in, ct)
	if err != nil {
		return func(yield func(T, error) bool) {
			var zero T
			yield(zero, err)
		}
	}
	msg.Body = body
	opts = append([]Option{WithOperation(op), WithContentType(ct)}, continuing(ctx, opts)...)
	return streamOf(client.Stream(ctx, msg, opts...), func(b []byte) (T, error) {
		var v T
		return v, (&Message{Payload: b}).Decode(&v, ct) // a bare body: no envelope, no content-type header
	})
}
