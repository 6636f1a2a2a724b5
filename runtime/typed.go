package runtime

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/fxamacker/cbor/v2"

	"github.com/lasergo/laser/wire"
)

// bodyCBOR encodes typed bodies canonically (sorted map keys, shortest
// floats), so equal values produce equal bytes and signatures.
var bodyCBOR, _ = cbor.CoreDetEncOptions().EncMode()

// EncodeBody encodes a typed body in content type ct (CBOR or JSON).
func EncodeBody(v any, ct wire.ContentType) ([]byte, error) {
	switch ct {
	case wire.ContentCBOR:
		return bodyCBOR.Marshal(v)
	case wire.ContentJSON:
		return json.Marshal(v)
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

// RespondValue encodes out in ct and answers the handled message with it.
func (c *Ctx) RespondValue(out any, ct wire.ContentType) error {
	body, err := EncodeBody(out, ct)
	if err != nil {
		return Reject(err)
	}
	return c.Respond(body, WithContentType(ct))
}

// Call sends a typed request for operation op and decodes the typed reply.
// An AGDX error reply comes back as a remote *Error; no reply in time as an
// error of CodeTimeout. Called with a handler's *Ctx (or a context
// derived from it), it continues the handled conversation (see continue.go).
func Call[Out any](ctx context.Context, client *Client, cmd Command, op string, ct wire.ContentType, in any, opts ...RequestOption) (Out, error) {
	var out Out
	body, err := EncodeBody(in, ct)
	if err != nil {
		return out, err
	}
	cmd.Body = body
	opts = append([]RequestOption{WithOperation(op), WithContentType(ct)}, continuing(ctx, opts)...)
	reply, err := client.Request(ctx, cmd, opts...)
	if err != nil {
		return out, err
	}
	if err := reply.Decode(&out, ct); err != nil {
		return out, fmt.Errorf("reply to %s: %w", op, err)
	}
	return out, nil
}

// Tell sends a typed command for operation op without waiting for a reply;
// from a handler, in the handled conversation (see Call).
func Tell(ctx context.Context, client *Client, cmd Command, op string, ct wire.ContentType, in any, opts ...CommandOption) error {
	body, err := EncodeBody(in, ct)
	if err != nil {
		return err
	}
	cmd.Body = body
	opts = append([]CommandOption{WithOperation(op), WithContentType(ct)}, continuing(ctx, opts)...)
	_, err = client.SendCommand(ctx, cmd, opts...)
	return err
}

// EmitEvent emits a typed AGDX event for operation op from agent from on
// topic (the typed form of Client.Emit; Transport.Publish appends raw
// records).
func EmitEvent(ctx context.Context, client *Client, topic, from, op string, ct wire.ContentType, in any, opts ...SendOption) error {
	body, err := EncodeBody(in, ct)
	if err != nil {
		return err
	}
	opts = append([]SendOption{WithOperation(op), WithContentType(ct)}, continuing(ctx, opts)...)
	_, err = client.Emit(ctx, topic, from, body, opts...)
	return err
}
