package agui

import (
	"encoding/json"
	"fmt"
	"net/http"
	"time"

	"github.com/lasergo/laser/runtime"
	"github.com/lasergo/laser/wire"
)

// DefaultPollInterval is how often a followed stream re-reads its
// conversation.
const DefaultPollInterval = 20 * time.Millisecond

// Handler serves one conversation's AG-UI events as server-sent events,
// one "data:" line of event JSON each, in log order. The conversation is
// the threadId query parameter of a GET, or the threadId of a POSTed AG-UI
// RunAgentInput. With Follow it keeps the stream open, sending new records
// as they land, until a run finishes or errs or the client goes away.
type Handler struct {
	Client *runtime.Client
	// Topic the conversation's records are read from (e.g. agent.llm_io).
	Topic string
	// Follow keeps streaming after the records already on the log.
	Follow bool
	// PollInterval is how often Follow re-reads, on the client's clock;
	// default DefaultPollInterval.
	PollInterval time.Duration
}

// ServeHTTP implements http.Handler.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	conv, err := threadOf(w, r)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	flusher, ok := w.(http.Flusher)
	if !ok {
		http.Error(w, "streaming unsupported", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	flusher.Flush()
	poll := h.PollInterval
	if poll <= 0 {
		poll = DefaultPollInterval
	}
	ctx := r.Context()
	sent := 0
	for {
		events, err := Events(ctx, h.Client.Transport(), conv, h.Topic)
		if err != nil {
			if ctx.Err() == nil {
				h.Client.Logger().Warn("agui: read conversation", "conversation", conv, "err", err)
			}
			return
		}
		for ; sent < len(events); sent++ {
			b, err := json.Marshal(events[sent])
			if err != nil {
				return
			}
			if _, err := fmt.Fprintf(w, "data: %s\n\n", b); err != nil {
				return
			}
			flusher.Flush()
			if t := events[sent].Type; t == RunFinished || t == RunError {
				if h.Follow {
					return
				}
			}
		}
		if !h.Follow {
			return
		}
		select {
		case <-ctx.Done():
			return
		case <-h.Client.Clock().After(poll):
		}
	}
}

// threadOf reads the conversation a request names.
func threadOf(w http.ResponseWriter, r *http.Request) (wire.ID, error) {
	thread := r.URL.Query().Get("threadId")
	if r.Method == http.MethodPost {
		var in struct {
			ThreadID string `json:"threadId"`
		}
		if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, 1<<20)).Decode(&in); err != nil {
			return wire.ID{}, fmt.Errorf("agui: a POST carries an AG-UI RunAgentInput: %w", err)
		}
		thread = in.ThreadID
	}
	id, err := wire.ParseID(thread)
	if err != nil {
		return wire.ID{}, fmt.Errorf("agui: threadId %q is no conversation id: %w", thread, err)
	}
	return id, nil
}
