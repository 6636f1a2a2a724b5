package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/lasergo/laser/bridge"
	"github.com/lasergo/laser/effect"
	"github.com/lasergo/laser/operation"
	"github.com/lasergo/laser/runtime"
	"github.com/lasergo/laser/wire"
)

// handler runs a tool call on the log. A refused bridge path is a protocol
// error; arguments that do not fit the input schema, an agent's failure and
// a missed deadline are tool results with isError, so the model can read
// them and try again.
func (b *Bridge) handler(t *tool) mcp.ToolHandler {
	return func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		hops, err := b.hops(req.Params.Meta)
		if err != nil {
			return nil, err
		}
		args, err := t.arguments(req.Params.Arguments)
		if err != nil {
			return failure(err), nil
		}
		body, err := t.op.EncodeInput(args)
		if err != nil {
			if errors.Is(err, bridge.ErrInput) {
				return failure(err), nil
			}
			return nil, err
		}
		deadline, err := b.deadline(ctx, req.Params.Meta)
		if err != nil {
			return failure(err), nil
		}
		ctx, cancel := context.WithDeadline(ctx, deadline)
		defer cancel()
		c := call{b: b, t: t, conv: b.client.IDs().NewID(), body: body, hops: hops, deadline: deadline}
		// The call is the bridge's effect on the log: the gate may refuse it
		// (a tool result the model reads) or replace its body.
		effect := &effect.Effect{Kind: effect.BridgeCall, Topic: t.op.Topic, Operation: t.op.Name, Agent: b.cfg.ID, Target: t.op.Agent, Conversation: c.conv, Body: body}
		if err := b.client.Govern(ctx, effect); err != nil {
			return failure(err), nil
		}
		c.body = effect.Body
		var res *mcp.CallToolResult
		switch t.op.Kind {
		case operation.Request:
			res, err = c.request(ctx)
		case operation.Stream:
			res, err = c.stream(ctx, req)
		default:
			res, err = c.oneWay(ctx)
		}
		if err != nil {
			return nil, err
		}
		if res.Meta == nil {
			res.Meta = mcp.Meta{}
		}
		res.Meta[MetaConversation] = c.conv.String()
		return res, nil
	}
}

// call is one tools/call on its way to the log.
type call struct {
	b    *Bridge
	t    *tool
	conv wire.ID
	body []byte
	hops []string
	// deadline is the call's, sent as the envelope's.
	deadline time.Time
}

func (c *call) command() runtime.Out {
	return runtime.Out{Topic: c.t.op.Topic, From: c.b.cfg.ID, Target: c.t.op.Agent, Body: c.body}
}

// requestOptions carry the operation, the call's deadline (to the agent and
// as the wait), the conversation and the bridge path.
func (c *call) requestOptions() []runtime.Option {
	deadline := c.deadline
	opts := []runtime.Option{
		runtime.WithOperation(c.t.op.Name), runtime.WithContentType(c.t.op.ContentType),
		runtime.WithDeadline(deadline), runtime.WithTimeout(deadline.Sub(c.b.client.Clock().Now())),
		runtime.WithConversation(c.conv), bridge.WithHops(c.hops),
	}
	if c.b.cfg.Key != nil {
		opts = append(opts, runtime.WithSigningKey(c.b.cfg.Key))
	}
	if c.t.op.ReplyTopic != "" {
		opts = append(opts, runtime.WithReplyTopic(c.t.op.ReplyTopic))
	}
	return opts
}

func (c *call) request(ctx context.Context) (*mcp.CallToolResult, error) {
	m, err := c.b.client.Request(ctx, c.command(), c.requestOptions()...)
	if err != nil {
		return c.failure(ctx, err)
	}
	out, err := c.t.op.OutputJSON(m)
	if err != nil {
		return failure(err), nil
	}
	return c.success(out, c.t.wrapOut)
}

func (c *call) stream(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	token := req.Params.GetProgressToken()
	items := []json.RawMessage{}
	for chunk, err := range c.b.client.Stream(ctx, c.command(), c.requestOptions()...) {
		if err != nil {
			res, perr := c.failure(ctx, err)
			if res != nil {
				// The items before the failure, as text and in _meta: an
				// error result carries no structured content (see failure).
				raw, _ := json.Marshal(map[string]any{itemsProperty: items})
				res.Content = append(res.Content, &mcp.TextContent{Text: string(raw)})
				res.Meta[MetaItems] = items
			}
			return res, perr
		}
		item, err := c.t.op.ItemJSON(chunk)
		if err != nil {
			return failure(err), nil
		}
		items = append(items, item)
		if token != nil {
			if err := req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{
				ProgressToken: token, Progress: float64(len(items)), Message: progressText(item),
			}); err != nil {
				return nil, fmt.Errorf("mcp: progress of %s: %w", c.t.def.Name, err)
			}
		}
	}
	raw, err := json.Marshal(items)
	if err != nil {
		return nil, err
	}
	return c.success(raw, itemsProperty)
}

// oneWay puts a command (or an event) on the log and reports it accepted.
func (c *call) oneWay(ctx context.Context) (*mcp.CallToolResult, error) {
	opts := []runtime.Option{runtime.WithOperation(c.t.op.Name), runtime.WithContentType(c.t.op.ContentType),
		runtime.WithConversation(c.conv), bridge.WithHops(c.hops)}
	if c.b.cfg.Key != nil {
		opts = append(opts, runtime.WithSigningKey(c.b.cfg.Key))
	}
	msg := c.command()
	if c.t.op.Kind == operation.Event {
		msg = runtime.Out{Kind: wire.KindEvent, Topic: c.t.op.Topic, From: c.b.cfg.ID, Body: c.body}
	} else {
		opts = append(opts, runtime.WithDeadline(c.deadline))
	}
	if _, err := c.b.client.Send(ctx, msg, opts...); err != nil {
		return nil, fmt.Errorf("mcp: %s: %w", c.t.def.Name, err)
	}
	out, _ := json.Marshal(map[string]any{"accepted": true, "conversation": c.conv.String()})
	return c.success(out, "")
}

// success is a result carrying out as structured content (under property
// when set) and as its JSON text.
func (c *call) success(out json.RawMessage, property string) (*mcp.CallToolResult, error) {
	var structured any
	if err := json.Unmarshal(out, &structured); err != nil {
		return nil, err
	}
	if property != "" {
		structured = map[string]any{property: structured}
	}
	return &mcp.CallToolResult{
		Content:           []mcp.Content{&mcp.TextContent{Text: jsonText(structured)}},
		StructuredContent: structured,
	}, nil
}

// progressText is a stream item as a progress message: a string item as
// its text, any other item as its JSON.
func progressText(item json.RawMessage) string {
	var s string
	if json.Unmarshal(item, &s) == nil {
		return s
	}
	return string(item)
}

// failure turns what the agent answered with (an AGDX error, or no answer
// in time) into a tool error; other errors (the log is down) stay protocol
// errors. The AGDX error's code, message and retryability ride the
// result's _meta (MetaError), not its structured content. A call nothing
// answered says why when the agent dead-lettered it (see refusal).
func (c *call) failure(ctx context.Context, err error) (*mcp.CallToolResult, error) {
	var re *runtime.Error
	switch {
	case errors.As(err, &re) && re.Remote():
		res := failure(err)
		res.Meta[MetaError] = map[string]any{"code": re.Wire.String(), "message": re.Msg, "retryable": re.Retryable}
		return res, nil
	case runtime.CodeOf(err) == runtime.CodeTimeout, errors.Is(err, context.DeadlineExceeded):
		if why := c.refusal(ctx); why != "" {
			return failure(fmt.Errorf("no answer before the call's deadline: %s", why)), nil
		}
		return failure(fmt.Errorf("no answer before the call's deadline: %w", err)), nil
	}
	return nil, err
}

// failure is a tool error a model reads: the error as text, and no
// structured content. Clients check structured content against the tool's
// output schema even on an error (the TypeScript SDK throws -32602 when it
// does not match), and an error is not the tool's output.
func failure(err error) *mcp.CallToolResult {
	return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: err.Error()}}, Meta: mcp.Meta{}}
}
