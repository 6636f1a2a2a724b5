package runtime

import (
	"cmp"
	"context"

	"github.com/lasergo/laser/sign"
	"github.com/lasergo/laser/wire"
)

// Answer is what a client answers to a request it read from a log outside
// a handler (Client.Answer): a person approving a pending request, a tool
// replaying a decision.
type Answer struct {
	// From is the answering agent's id (required).
	From string
	// Body is the response body, sent when Error is nil.
	Body []byte
	// Error, when set, makes the answer an AGDX error, which a waiting
	// caller receives as a remote *Error; Body is then not sent.
	Error *wire.ErrorBody
	// Key, when set, signs the answer, which a caller with a Verifier
	// requires. Default unsigned.
	Key *sign.Key
}

// Answer answers req, an AGDX request (a command with a correlation) read
// from a log, on topic (default agent.responses): an AGDX response or error
// in req's conversation,
// echoing its correlation, targeted at its sender. It is the client's form
// of Ctx.Respond and Ctx.Fail, for answers decided outside a handler. It
// fails with CodeInvalid when req is not such a request.
func (c *Client) Answer(ctx context.Context, topic string, req *Message, a Answer, opts ...ReplyOption) (Position, error) {
	if req == nil {
		return Position{}, &Error{Code: CodeInvalid, Msg: "answer: no request given"}
	}
	env := req.Envelope
	if env == nil || env.Correlation == nil || env.Kind != wire.KindCommand {
		return Position{}, &Error{Code: CodeInvalid, Msg: req.Position.String() + " is not a request (an AGDX command with a correlation)"}
	}
	spec := specOf(opts, ReplyOption.applyReply)
	kind, body, ct := wire.KindResponse, a.Body, wire.ContentRaw
	if a.Error != nil {
		if spec.hasCT {
			return Position{}, &Error{Code: CodeConfig, Msg: "an error answer is a CBOR error body; WithContentType does not apply to it"}
		}
		b, err := a.Error.Marshal()
		if err != nil {
			return Position{}, &Error{Code: CodeCodec, Msg: "encode error body", Err: err}
		}
		kind, body, ct = wire.KindError, b, wire.ContentCBOR
	}
	o := answerTo(req, a.From, *env.Correlation, kind, body, spec, ct, a.Key)
	_, pos, err := c.post(ctx, cmp.Or(topic, TopicResponses), o)
	return pos, err
}

// RemoteError returns the remote *Error an AGDX error message carries, as
// Request returns it for an error reply, or nil when m is no AGDX error.
func (m *Message) RemoteError() error { return remoteError(m) }
