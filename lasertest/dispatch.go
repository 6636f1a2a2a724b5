package lasertest

import (
	"context"
	"errors"

	"github.com/lasergo/laser/runtime"
	"github.com/lasergo/laser/wire"
)

// Dispatch runs handler, usually a generated dispatcher (XHandler(impl)),
// on one AGDX command asking for h.Operation with in as its body (encoded
// in h's content type), as a consumer would hand it over, and returns the
// handler's error and every record it published, its answer included. It
// tests what Run and RunRequest skip: routing by operation, decoding the
// input, encoding the answer and answering failures. Answer reads the
// answer back.
func Dispatch(ctx context.Context, h Handler, handler runtime.Handler, in any) ([]Sent, error) {
	var sent []Sent
	err := h.run(ctx, in, &sent, handler.Handle)
	return sent, err
}

// ErrNoAnswer is Answer's error when the handler published no answer.
var ErrNoAnswer = errors.New("lasertest: the handler published no answer")

// Answer returns the answer among sent, as a caller's typed client would:
// the first reply's body decoded into Out (by its content type, CBOR when
// it states none), or the first AGDX error as a remote *runtime.Error. A
// reply is an AGDX response, or the plain message echoing the request's
// correlation that an agent without a signing key answers with. Without
// either it returns ErrNoAnswer.
func Answer[Out any](sent []Sent) (Out, error) {
	var out Out
	for _, s := range sent {
		m := s.Message
		switch {
		case m.Kind() == wire.KindError:
			return out, m.RemoteError()
		case m.Kind() == wire.KindResponse, m.Envelope == nil && m.Correlation() != "":
			return out, m.Decode(&out, wire.ContentCBOR)
		}
	}
	return out, ErrNoAnswer
}
