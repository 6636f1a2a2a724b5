package runtime

import (
	"context"
	"errors"
	"fmt"
	"iter"

	"github.com/lasergo/laser/wire"
)

// OpenTypedStream opens a chat chunk stream answering the handled request
// whose items are encoded in ct (CBOR or JSON); generated handlers of
// streaming operations pass it to the method.
func OpenTypedStream[T any](c *Ctx, ct wire.ContentType) (*Stream[T], error) {
	w, err := c.OpenStream(wire.OperationChat, ct)
	if err != nil {
		return nil, err
	}
	return NewStream(w, func(v T) ([]byte, error) { return EncodeBody(v, ct) }), nil
}

// FinishStream ends s after its handler returned err. Success closes the
// stream with its terminal chunk. A failure ends it with an AGDX error on
// the channel (its code chosen as FailRequest does, retryable as err is),
// so the caller stops at once with a *RemoteError; the handler is not run
// again, since a rerun would stream its answer a second time. A Failf error
// is the handler's answer, as in a request: once sent the message was
// handled and FinishStream returns nil. Any other error is returned as a
// rejection for the consumer to dead-letter.
func FinishStream[T any](s *Stream[T], err error) error {
	if err == nil {
		return s.w.Close()
	}
	if ferr := s.w.Fail(answerCode(err), err.Error(), IsRetryable(err)); ferr != nil {
		return &Error{Code: CodeRejected, Err: errors.Join(err, fmt.Errorf("ending the stream failed: %w", ferr))}
	}
	if isAnswer(err) {
		return nil
	}
	return Reject(err)
}

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
	return StreamOf(client.RequestStream(ctx, cmd, opts...), func(b []byte) (T, error) {
		var v T
		return v, DecodeBody(&Message{Payload: b}, &v, ct) // a bare body: no envelope, no content-type header
	})
}
