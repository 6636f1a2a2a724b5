package runtime

import (
	"context"
	"iter"

	"github.com/lasergo/laser/wire"
)

// CallStream sends a typed request for streaming operation op and yields
// the items of the answer, decoded from ct, as they arrive in sequence
// order. Errors are those of Client.RequestStream, or a codec error for an
// item that does not decode.
func CallStream[T any](ctx context.Context, client *Client, cmd Command, op string, ct wire.ContentType, in any, opts ...StreamOption) iter.Seq2[T, error] {
	body, err := EncodeBody(in, ct)
	if err != nil {
		return func(yield func(T, error) bool) {
			var zero T
			yield(zero, err)
		}
	}
	cmd.Body = body
	opts = append([]StreamOption{WithOperation(op), WithContentType(ct)}, continuing(ctx, opts)...)
	return streamOf(client.RequestStream(ctx, cmd, opts...), func(b []byte) (T, error) {
		var v T
		return v, (&Message{Payload: b}).Decode(&v, ct) // a bare body: no envelope, no content-type header
	})
}
