package a2a

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"iter"
	"net/http"
	"strings"

	"github.com/a2aproject/a2a-go/a2a"
	"github.com/a2aproject/a2a-go/a2asrv"

	"github.com/lasergo/laser/bridge"
	"github.com/lasergo/laser/operation"
	"github.com/lasergo/laser/wire"
)

// ProtocolVersion is the A2A version the card declares (a2a-go v0.3).
const ProtocolVersion = "0.3.0"

// Card is the bridge's A2A agent card: named after the laser card (or the
// bridge), one skill per operation with its doc comment as the
// description, streaming advertised, JSON-RPC at Config.URL.
func (b *Bridge) Card() *a2a.AgentCard {
	name := b.cfg.ID
	if b.cfg.Card != nil && b.cfg.Card.Name != "" {
		name = b.cfg.Card.Name
	}
	desc := b.cfg.Description
	if desc == "" {
		desc = "A laser-go agent over a durable log, bridged to A2A."
	}
	version := b.cfg.Version
	if version == "" {
		version = "0.1.0"
	}
	card := &a2a.AgentCard{
		Name: name, Description: desc, URL: b.cfg.URL, Version: version,
		ProtocolVersion:    ProtocolVersion,
		PreferredTransport: a2a.TransportProtocolJSONRPC,
		Capabilities:       a2a.AgentCapabilities{Streaming: true},
		DefaultInputModes:  []string{"application/json", "text/plain"},
		DefaultOutputModes: []string{"application/json", "text/plain"},
		Skills:             []a2a.AgentSkill{},
	}
	for _, n := range b.order {
		op := b.ops[n]
		desc := op.Doc
		if desc == "" {
			desc = fmt.Sprintf("%s operation %q of agent %s", op.Kind, op.Name, op.Agent)
		}
		card.Skills = append(card.Skills, a2a.AgentSkill{
			ID: op.Name, Name: op.Name, Description: desc, Tags: []string{op.Agent, op.Kind.String()},
			InputModes: []string{"application/json"}, OutputModes: outputModes(op.Kind),
		})
	}
	if len(b.ops) == 0 && b.cfg.Card != nil {
		for _, c := range b.cfg.Card.Capabilities {
			card.Skills = append(card.Skills, a2a.AgentSkill{ID: c.SkillID, Name: c.SkillID, Description: c.SkillID, Tags: []string{name},
				InputModes: modes(c.Input), OutputModes: modes(c.Output)})
		}
	}
	return card
}

func outputModes(k operation.Kind) []string {
	if k == operation.Request || k == operation.Stream {
		return []string{"application/json"}
	}
	return nil
}

// modes is a laser content reference as A2A media types.
func modes(ref *wire.ContentReference) []string {
	if ref == nil {
		return nil
	}
	if ref.SchemaID != nil {
		return []string{"application/x-agdx-schema;id=" + *ref.SchemaID}
	}
	switch ref.ContentType {
	case wire.ContentJSON:
		return []string{"application/json"}
	case wire.ContentCBOR:
		return []string{"application/cbor"}
	}
	return []string{"application/octet-stream"}
}

// Handler serves the bridge over HTTP with a2a-go: JSON-RPC at every path
// but the well-known agent card.
func (b *Bridge) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.Handle(a2asrv.WellKnownAgentCardPath, a2asrv.NewAgentCardHandler(a2asrv.AgentCardProducerFn(func(context.Context) (*a2a.AgentCard, error) {
		card := b.Card()
		if b.cfg.CardKey != nil {
			if err := SignCard(card, b.cfg.CardKey, b.cfg.CardKeyID); err != nil {
				return nil, err
			}
		}
		return card, nil
	})))
	v03 := detailErrors(a2asrv.NewJSONRPCHandler(RequestHandler(b)))
	rpc := limitBody(b.cfg.MaxBodyBytes, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// limitBody left the body in memory: peeking at the method is free.
		body, _ := io.ReadAll(r.Body)
		if isV1(body) {
			b.serveV1(w, r, body)
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		v03.ServeHTTP(w, r)
	}))
	mux.Handle("/", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !bridge.RefuseCrossSite(w, r, "a2a", b.cfg.AllowedOrigins) {
			rpc.ServeHTTP(w, r)
		}
	}))
	return mux
}

// limitBody reads at most max bytes of a request body before next sees it,
// answering 413 for a longer one: the JSON-RPC handler decodes a body whole,
// so without a bound one request could hold any amount of memory and
// publish it to the log.
func limitBody(max int64, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.ContentLength > max {
			http.Error(w, fmt.Sprintf("a2a: request body of %d bytes exceeds the limit of %d", r.ContentLength, max), http.StatusRequestEntityTooLarge)
			return
		}
		body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, max))
		if err != nil {
			var tooLarge *http.MaxBytesError
			if errors.As(err, &tooLarge) {
				http.Error(w, fmt.Sprintf("a2a: request body exceeds the limit of %d bytes", max), http.StatusRequestEntityTooLarge)
				return
			}
			http.Error(w, "a2a: read request body: "+err.Error(), http.StatusBadRequest)
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		next.ServeHTTP(w, r)
	})
}

// RequestHandler is the bridge as a2a-go's transport-agnostic handler, for
// serving it over another a2a-go transport (gRPC).
func RequestHandler(b *Bridge) a2asrv.RequestHandler { return handler{b} }

type handler struct{ b *Bridge }

func (h handler) OnGetTask(ctx context.Context, q *a2a.TaskQueryParams) (*a2a.Task, error) {
	return h.b.Task(ctx, q.ID)
}

func (h handler) OnCancelTask(ctx context.Context, id *a2a.TaskIDParams) (*a2a.Task, error) {
	token, _ := id.Metadata[MetaCancelToken].(string)
	return h.b.Cancel(ctx, id.ID, token)
}

func (h handler) OnSendMessage(ctx context.Context, p *a2a.MessageSendParams) (a2a.SendMessageResult, error) {
	return h.b.Send(ctx, p)
}

func (h handler) OnResubscribeToTask(ctx context.Context, id *a2a.TaskIDParams) iter.Seq2[a2a.Event, error] {
	return h.b.Resubscribe(ctx, id.ID)
}

func (h handler) OnSendMessageStream(ctx context.Context, p *a2a.MessageSendParams) iter.Seq2[a2a.Event, error] {
	return h.b.Stream(ctx, p)
}

func (h handler) OnGetTaskPushConfig(context.Context, *a2a.GetTaskPushConfigParams) (*a2a.TaskPushConfig, error) {
	return nil, a2a.ErrPushNotificationNotSupported
}

func (h handler) OnListTaskPushConfig(context.Context, *a2a.ListTaskPushConfigParams) ([]*a2a.TaskPushConfig, error) {
	return nil, a2a.ErrPushNotificationNotSupported
}

func (h handler) OnSetTaskPushConfig(context.Context, *a2a.TaskPushConfig) (*a2a.TaskPushConfig, error) {
	return nil, a2a.ErrPushNotificationNotSupported
}

func (h handler) OnDeleteTaskPushConfig(context.Context, *a2a.DeleteTaskPushConfigParams) error {
	return a2a.ErrPushNotificationNotSupported
}

func (h handler) OnGetExtendedAgentCard(context.Context) (*a2a.AgentCard, error) {
	return nil, a2a.ErrAuthenticatedExtendedCardNotConfigured
}

// detailErrors puts what was wrong into a JSON-RPC error's message: a2a-go
// answers every error with its code's fixed text ("invalid params") and the
// cause in error.data, which clients do not show. Streamed (SSE) answers
// pass through untouched.
func detailErrors(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		bw := &bufferedJSON{ResponseWriter: w, status: http.StatusOK}
		next.ServeHTTP(bw, r)
		if !bw.buffering {
			return
		}
		body := bw.buf.Bytes()
		var resp map[string]json.RawMessage
		if json.Unmarshal(body, &resp) == nil && resp["error"] != nil {
			var e struct {
				Code    int            `json:"code"`
				Message string         `json:"message"`
				Data    map[string]any `json:"data,omitempty"`
			}
			if json.Unmarshal(resp["error"], &e) == nil {
				if cause, ok := e.Data["error"].(string); ok && cause != "" {
					e.Message = cause
					if raw, err := json.Marshal(e); err == nil {
						resp["error"] = raw
						if out, err := json.Marshal(resp); err == nil {
							body = out
						}
					}
				}
			}
		}
		w.Header().Del("Content-Length")
		w.WriteHeader(bw.status)
		_, _ = w.Write(body)
	})
}

// bufferedJSON holds a response back unless it is an event stream.
type bufferedJSON struct {
	http.ResponseWriter
	buf       bytes.Buffer
	status    int
	decided   bool
	buffering bool
}

func (w *bufferedJSON) WriteHeader(code int) {
	if w.decided {
		return
	}
	w.decided, w.status = true, code
	w.buffering = !strings.HasPrefix(w.Header().Get("Content-Type"), "text/event-stream")
	if !w.buffering {
		w.ResponseWriter.WriteHeader(code)
	}
}

func (w *bufferedJSON) Write(b []byte) (int, error) {
	if !w.decided {
		w.WriteHeader(http.StatusOK)
	}
	if w.buffering {
		return w.buf.Write(b)
	}
	return w.ResponseWriter.Write(b)
}

// Flush passes a stream's flushes on.
func (w *bufferedJSON) Flush() {
	if w.decided && !w.buffering {
		if f, ok := w.ResponseWriter.(http.Flusher); ok {
			f.Flush()
		}
	}
}
