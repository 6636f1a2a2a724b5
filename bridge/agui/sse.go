package agui

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/lasergo/laser/bridge"
	"github.com/lasergo/laser/runtime"
	"github.com/lasergo/laser/wire"
)

// DefaultPollInterval is how often a followed stream looks for new records.
const DefaultPollInterval = 20 * time.Millisecond

// DefaultMaxStreamsPerClient is Handler.MaxStreamsPerClient's default.
const DefaultMaxStreamsPerClient = 8

// followBatch is the most records a followed stream reads in one call.
const followBatch = 256

// Handler serves one conversation's AG-UI events as server-sent events,
// one "data:" line of event JSON each, in log order. The conversation is
// the threadId query parameter of a GET, or the threadId of a POSTed AG-UI
// RunAgentInput. With Follow it keeps the stream open, sending new records
// as they land, until a run finishes or errs or the client goes away.
//
// When the client verifies (runtime.ClientConfig.Verifier) only records
// whose signature verifies are shown, so an unsigned chunk never appears
// as the assistant's text. Use a Handler by pointer; it counts the streams
// it holds open.
type Handler struct {
	Client *runtime.Client
	// Topic the conversation's records are read from (e.g. agent.llm_io).
	Topic string
	// Follow keeps streaming after the records already on the log: it reads
	// the read window once, then only what lands after the last record read.
	Follow bool
	// PollInterval is how often Follow looks for new records, on the
	// client's clock; default DefaultPollInterval.
	PollInterval time.Duration
	// MaxStreamsPerClient bounds the followed streams one client (remote
	// host) holds open at once; a further one is refused with 429. Default
	// DefaultMaxStreamsPerClient.
	MaxStreamsPerClient int
	// Run, when set, starts the run a POSTed RunAgentInput asks for (an
	// AG-UI client's runAgent): typically a command carrying the last user
	// message to the agent, on the thread's conversation, and it returns
	// that command (what runtime.Client.Send returns). It is called once
	// the stream knows where to follow from, so nothing the run writes is
	// missed, and the POST is then followed (as with Follow) until the run
	// finishes or errs. The run is its command's: only records carrying the
	// command's correlation are shown and end it, so another run on the
	// same thread neither shows here nor finishes this one. A nil command
	// (or one without a correlation) follows everything that lands on the
	// thread. An error is logged and answered with a 502 and no stream.
	// Without Run a POST only shows the thread.
	Run func(ctx context.Context, in RunInput) (command *wire.Envelope, err error)
	// AllowedOrigins are the browser origins (scheme://host[:port]), besides
	// the server's own, whose requests are served; a request carrying any
	// other Origin header is refused with 403. Default none.
	AllowedOrigins []string

	mu   sync.Mutex
	open map[string]int
}

// ServeHTTP implements http.Handler.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if bridge.RefuseCrossSite(w, r, "agui", h.AllowedOrigins) {
		return
	}
	in, err := runInput(w, r)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	conv := in.Thread
	run := r.Method == http.MethodPost && h.Run != nil
	follow := h.Follow || run
	flusher, ok := w.(http.Flusher)
	if !ok {
		http.Error(w, "streaming unsupported", http.StatusInternalServerError)
		return
	}
	if follow {
		release, ok := h.admit(r)
		if !ok {
			http.Error(w, "agui: too many live streams from this client", http.StatusTooManyRequests)
			return
		}
		defer release()
	}
	ctx := r.Context()
	s := &sseStream{h: h, w: w, flusher: flusher, conv: conv}
	// Where a follow continues: the tails before the first read, so nothing
	// landing during it is missed (what it did read is skipped by offset).
	if follow {
		if s.next, err = h.tails(ctx); err != nil {
			h.Client.Logger().Warn("agui: read conversation", "conversation", conv, "err", err)
			http.Error(w, "agui: read conversation", http.StatusServiceUnavailable)
			return
		}
	}
	if run {
		cmd, err := h.Run(ctx, in)
		if err != nil {
			h.Client.Logger().Warn("agui: start the run", "conversation", conv, "err", err)
			// The detail stays in the log: it may name topics and agents.
			http.Error(w, "agui: the run could not start", http.StatusBadGateway)
			return
		}
		s.run = &runFrame{thread: conv.String(), id: in.RunID}
		if cmd != nil && cmd.Correlation != nil {
			s.run.correlation = cmd.Correlation
		}
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	flusher.Flush()
	if run {
		// The client holds the thread's history; the stream is this run's.
		if !s.write(Event{Type: RunStarted, ThreadID: s.run.thread, RunID: s.run.id}) {
			return
		}
	} else if !s.window(ctx, follow) {
		return
	}
	if follow {
		s.follow(ctx)
	}
}

// window sends the conversation's records in the read window; it returns
// false when the stream is over (the client left, or a followed run
// finished).
func (s *sseStream) window(ctx context.Context, follow bool) bool {
	msgs, err := bridge.ReadTrusted(ctx, s.h.Client, s.conv, s.h.Topic)
	if err != nil {
		s.fail(ctx, err)
		return false
	}
	for _, m := range msgs {
		if follow && m.Position.Offset >= s.next[m.Position.Partition] {
			s.next[m.Position.Partition] = m.Position.Offset + 1
		}
		if done, ok := s.send(m); !ok || (done && follow) {
			return false
		}
	}
	return true
}

// follow sends what lands on the conversation, every PollInterval, until
// the run finishes or the client leaves.
func (s *sseStream) follow(ctx context.Context) {
	poll := s.h.PollInterval
	if poll <= 0 {
		poll = DefaultPollInterval
	}
	for {
		select {
		case <-ctx.Done():
			return
		case <-s.h.Client.Clock().After(poll):
		}
		if !s.tail(ctx) {
			return
		}
	}
}

// sseStream is one response's state: what was rendered and where each
// partition's next unread record is.
type sseStream struct {
	h       *Handler
	w       http.ResponseWriter
	flusher http.Flusher
	conv    wire.ID
	r       Renderer
	next    map[uint32]uint64
	// run frames the events of a run the handler started; nil otherwise.
	run *runFrame
	// live is whether a run started on the stream and has not ended.
	live bool
}

// send writes the events m renders as; done is whether a run finished or
// erred, ok false when the client is gone.
func (s *sseStream) send(m *runtime.Message) (done, ok bool) {
	if s.run != nil && !s.run.owns(m) {
		return false, true
	}
	events := s.r.Next(nil, m)
	if s.run != nil {
		events = s.run.frame(events, m)
	}
	for _, e := range events {
		if !s.write(e) {
			return false, false
		}
		if e.Type == RunFinished || e.Type == RunError {
			done = true
		}
	}
	return done, true
}

// write sends one event; false when the client is gone.
func (s *sseStream) write(e Event) bool {
	b, err := json.Marshal(e)
	if err != nil {
		return false
	}
	if _, err := fmt.Fprintf(s.w, "data: %s\n\n", b); err != nil {
		return false
	}
	s.flusher.Flush()
	switch e.Type {
	case RunStarted:
		s.live = true
	case RunFinished, RunError:
		s.live = false
	}
	return true
}

// fail ends a stream the log failed under: the error is logged and a run
// still live gets its RUN_ERROR, as an AG-UI client waits for a run's end.
// Nothing is sent once the client has gone.
func (s *sseStream) fail(ctx context.Context, err error) {
	if ctx.Err() != nil {
		return
	}
	s.h.Client.Logger().Warn("agui: read conversation", "conversation", s.conv, "err", err)
	if !s.live {
		return
	}
	e := Event{Type: RunError, Message: "agui: the conversation could not be read"}
	if s.run != nil {
		e.ThreadID, e.RunID = s.run.thread, s.run.id
	}
	s.write(e)
}

// tail sends the conversation's records appended since the last read: per
// partition from the offset after the last record read, never the window
// again. It returns false when the stream is over.
func (s *sseStream) tail(ctx context.Context) bool {
	t, v := s.h.Client.Transport(), s.h.Client.Verifier()
	for p, from := range s.next {
		end, err := t.NextOffset(ctx, s.h.Topic, p)
		if err != nil {
			s.fail(ctx, err)
			return false
		}
		for from < end {
			recs, err := t.ReadRange(ctx, s.h.Topic, p, from, int(min(end-from, followBatch)))
			if err != nil {
				s.fail(ctx, err)
				return false
			}
			if len(recs) == 0 {
				// Nothing readable below the tail yet: the next pass
				// retries, and the other partitions still get theirs.
				break
			}
			for i := range recs {
				from = recs[i].Offset + 1
				s.next[p] = from
				m, err := runtime.DecodeRecord(s.h.Topic, &recs[i], 0)
				if err != nil || m.Provenance.Conversation != s.conv {
					continue
				}
				if v != nil {
					if _, err := m.Verify(v); err != nil {
						continue
					}
				}
				if done, ok := s.send(m); !ok || done {
					return false
				}
			}
		}
	}
	return true
}

// tails are the next offsets of every partition of the topic.
func (h *Handler) tails(ctx context.Context) (map[uint32]uint64, error) {
	t := h.Client.Transport()
	n, err := t.Partitions(ctx, h.Topic)
	if err != nil {
		return nil, fmt.Errorf("agui: partitions of %s: %w", h.Topic, err)
	}
	next := make(map[uint32]uint64, n)
	for p := range n {
		if next[p], err = t.NextOffset(ctx, h.Topic, p); err != nil {
			return nil, fmt.Errorf("agui: tail of %s/%d: %w", h.Topic, p, err)
		}
	}
	return next, nil
}

// admit counts a followed stream against its client's bound; release
// gives the place back.
func (h *Handler) admit(r *http.Request) (release func(), ok bool) {
	limit := h.MaxStreamsPerClient
	if limit <= 0 {
		limit = DefaultMaxStreamsPerClient
	}
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		host = r.RemoteAddr
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.open == nil {
		h.open = make(map[string]int)
	}
	if h.open[host] >= limit {
		return nil, false
	}
	h.open[host]++
	return func() {
		h.mu.Lock()
		defer h.mu.Unlock()
		if h.open[host]--; h.open[host] == 0 {
			delete(h.open, host)
		}
	}, true
}

// runInput reads the conversation a request names and, from a POST, the
// run it asks for.
func runInput(w http.ResponseWriter, r *http.Request) (RunInput, error) {
	var in struct {
		ThreadID string         `json:"threadId"`
		RunID    string         `json:"runId"`
		Messages []InputMessage `json:"messages"`
	}
	in.ThreadID = r.URL.Query().Get("threadId")
	if r.Method == http.MethodPost {
		if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, 1<<20)).Decode(&in); err != nil {
			return RunInput{}, fmt.Errorf("agui: a POST carries an AG-UI RunAgentInput: %w", err)
		}
	}
	id, err := wire.ParseID(in.ThreadID)
	if err != nil {
		return RunInput{}, fmt.Errorf("agui: threadId %q is no conversation id: %w", in.ThreadID, err)
	}
	return RunInput{Thread: id, RunID: in.RunID, Messages: in.Messages}, nil
}
