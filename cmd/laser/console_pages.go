package main

import (
	"bytes"
	"cmp"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"html/template"
	"io/fs"
	"net/http"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/fxamacker/cbor/v2"

	"github.com/lasergo/laser/govern"
	"github.com/lasergo/laser/humaninput"
	"github.com/lasergo/laser/runtime"
	"github.com/lasergo/laser/wire"
)

// scanDepth bounds how many of the newest records of each partition a page
// that searches the log reads: the console answers in a moment on any log.
const scanDepth = 2000

// consoleTopics are the topics pages read: the well-known ones and the
// registry.
var consoleTopics = append(append([]string(nil), runtime.BootstrapTopics...), runtime.TopicRegistry)

// reflectMapStringAny makes CBOR maps decode as JSON objects.
var reflectMapStringAny = reflect.TypeFor[map[string]any]()

var pageFuncs = template.FuncMap{
	"since": func(t time.Time) string { return t.UTC().Format(time.DateTime) },
	"micros": func(us uint64) string {
		if us == 0 {
			return "-"
		}
		return time.UnixMicro(int64(us)).UTC().Format("2006-01-02 15:04:05.000")
	},
	"short": func(s string, n int) string { return truncate(s, n) },
	"navItems": func() []string {
		return []string{"agents", "topics", "conversations", "dlq", "approvals", "workflows", "audit"}
	},
	"list":   func(r recordRow) []recordRow { return []recordRow{r} },
	"lag":    joinLag,
	"indent": func(depth int) string { return strings.Repeat("    ", depth) },
}

func mustSub(f fs.FS, dir string) fs.FS {
	sub, err := fs.Sub(f, dir)
	if err != nil {
		panic(err) // the directory is embedded at build time
	}
	return sub
}

func randomToken() string {
	var b [16]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails on supported platforms
	return hex.EncodeToString(b[:])
}

// ---- topics ----

// topicView is one topic's partitions.
type topicView struct {
	Name       string
	Partitions []partitionView
	Records    uint64
}

type partitionView struct {
	ID   uint32
	Next uint64
}

func (c *console) topics(ctx context.Context) ([]topicView, error) {
	var out []topicView
	for _, name := range c.topicNames(ctx) {
		n, err := c.t.Partitions(ctx, name)
		if err != nil {
			continue // listed by the server a moment ago, or never created
		}
		v := topicView{Name: name}
		for p := range n {
			next, err := c.t.NextOffset(ctx, name, p)
			if err != nil {
				return nil, err
			}
			v.Partitions = append(v.Partitions, partitionView{ID: p, Next: next})
			v.Records += next
		}
		out = append(out, v)
	}
	return out, nil
}

// topicNames are the stream's topics as the server lists them, the
// well-known ones when it will not say.
func (c *console) topicNames(ctx context.Context) []string {
	_, names, err := c.t.StreamTopics(ctx)
	if err != nil || len(names) == 0 {
		return consoleTopics
	}
	out := make([]string, 0, len(names))
	for _, n := range names {
		out = append(out, n)
	}
	slices.Sort(out)
	return out
}

func (c *console) topicsPage(w http.ResponseWriter, r *http.Request) {
	topics, err := c.topics(r.Context())
	if err != nil {
		c.failErr(w, r, err)
		return
	}
	c.render(w, http.StatusOK, "topics", topics)
}

// topicDetail is one topic's newest records and the groups reading it.
type topicDetail struct {
	topicView
	Newest []recordRow
	Groups map[string][]lagView
}

func (c *console) topicPage(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	name := r.PathValue("topic")
	topics, err := c.topics(ctx)
	if err != nil {
		c.failErr(w, r, err)
		return
	}
	i := slices.IndexFunc(topics, func(t topicView) bool { return t.Name == name })
	if i < 0 {
		c.fail(w, r, http.StatusNotFound, "there is no topic %q in this stream", name)
		return
	}
	d := topicDetail{topicView: topics[i], Groups: map[string][]lagView{}}
	release, ok := c.scanning(w, r)
	if !ok {
		return
	}
	defer release()
	recs, err := c.newest(ctx, name, 50, newBodyBudget())
	if err != nil {
		c.failErr(w, r, err)
		return
	}
	d.Newest = recs
	agents, err := c.agents(ctx)
	if err != nil {
		c.failErr(w, r, err)
		return
	}
	for _, a := range agents {
		for _, g := range a.Groups {
			if g.Topic == name {
				d.Groups[a.Agent] = g.Lag
			}
		}
	}
	c.render(w, http.StatusOK, "topic", d)
}

// ---- records ----

// recordRow is one record decoded for a page.
type recordRow struct {
	Topic        string
	Position     string
	Time         string
	Kind         string
	Operation    string
	From, To     string
	Conversation string
	Record       string
	Cause        string
	Correlation  string
	Signed       string
	Body         string
	BodyFormat   string
	Error        string
	Channel      string
	Sequence     uint64
	Last         bool
	// Truncated says the body shown is a part of the record's.
	Truncated bool
	timestamp uint64
}

// Bounds on what one page holds: a request over records of 60 KiB each
// must not hold them all.
const (
	// shownBody is how much of one record's rendered body a page shows.
	shownBody = 4 << 10
	// pageBodies is how many body bytes one request keeps in all.
	pageBodies = 1 << 20
	// maxScans is how many requests scan the log at once; more are told
	// to come back.
	maxScans = 2
	// auditPageBytes is how many decision record bytes the audit page
	// holds.
	auditPageBytes = 8 << 20
)

// bodyBudget is what is left of one request's body bytes.
type bodyBudget struct{ left int }

func newBodyBudget() *bodyBudget { return &bodyBudget{left: pageBodies} }

// pendingBody is a record's body before it is rendered, so a scan that
// drops the row never decodes it.
type pendingBody struct {
	raw     []byte
	ct      wire.ContentType
	errText string
	isError bool
}

// row decodes rec of topic for a page, as the consumer would, never failing;
// its body is cut to shownBody.
func row(topic string, rec *runtime.Incoming) recordRow {
	v, body := rowHead(topic, rec)
	newBodyBudget().show(&v, body)
	return v
}

// show renders body into v, cut to shownBody and to what is left of b
// (v.Truncated says so).
func (b *bodyBudget) show(v *recordRow, body pendingBody) {
	if b.left <= 0 {
		v.Body, v.BodyFormat, v.Truncated = "", "omitted", true
		return
	}
	if body.isError {
		v.Body, v.BodyFormat = body.errText, "error"
	} else {
		// Render only a bounded prefix of a huge body.
		raw := body.raw
		if len(raw) > 4*shownBody {
			raw, v.Truncated = raw[:4*shownBody], true
		}
		v.Body, v.BodyFormat = showBody(raw, body.ct)
	}
	if n := min(shownBody, b.left); len(v.Body) > n {
		v.Body, v.Truncated = strings.Clone(truncate(v.Body, n)), true // not the whole body behind it
	}
	b.left -= len(v.Body)
}

// rowHead decodes everything of rec but its body, which it returns for
// show.
func rowHead(topic string, rec *runtime.Incoming) (recordRow, pendingBody) {
	v := recordRow{Topic: topic, Position: rec.Position.String(), Time: pageFuncs["micros"].(func(uint64) string)(rec.Timestamp), timestamp: rec.Timestamp}
	m, err := runtime.DecodeRecord(topic, rec, ^uint64(0))
	if err != nil {
		v.Kind, v.Error = "undecodable", err.Error()
		return v, pendingBody{raw: rec.Payload, ct: wire.ContentRaw}
	}
	p := m.Provenance
	v.Kind, v.From, v.To, v.Conversation, v.Correlation = "plain", p.Agent, p.Target, p.Conversation.String(), p.Correlation
	if p.CausalParent != nil {
		v.Cause = p.CausalParent.String()
	}
	ct := wire.ContentRaw
	if m.HasContentType {
		ct = m.ContentType
	}
	if env := m.Envelope; env != nil {
		v.Kind, v.Operation = string(env.Kind), m.Operation()
		if env.Record != nil {
			v.Record = env.Record.String()
		}
		if env.Cause != nil {
			v.Cause = env.Cause.String()
		}
		if env.Signature != nil {
			v.Signed = "signed, not verified here"
		}
		if env.Channel != nil {
			v.Channel = env.Channel.String()
			if env.Sequence != nil {
				v.Sequence = *env.Sequence
			}
			v.Last = env.Last
		}
		if env.Kind == wire.KindError {
			if text, ok := errorText(env.Body); ok {
				v.detach()
				return v, pendingBody{errText: text, isError: true}
			}
		}
	}
	v.detach()
	return v, pendingBody{raw: m.Body(), ct: ct}
}

// detach copies the strings decoded from the record, which may share its
// payload's memory: a kept row must not keep a large record alive.
func (v *recordRow) detach() {
	for _, f := range []*string{&v.Kind, &v.Operation, &v.From, &v.To, &v.Conversation, &v.Record, &v.Cause, &v.Correlation, &v.Channel} {
		*f = strings.Clone(*f)
	}
}

// showBody renders a body for people: JSON and CBOR as indented JSON, UTF-8
// as text, anything else as hex.
func showBody(b []byte, ct wire.ContentType) (string, string) {
	switch ct {
	case wire.ContentJSON:
		var out bytes.Buffer
		if json.Indent(&out, b, "", "  ") == nil {
			return out.String(), "json"
		}
	case wire.ContentCBOR:
		var v any
		dm, _ := cbor.DecOptions{DefaultMapType: reflectMapStringAny}.DecMode()
		if dm.Unmarshal(b, &v) == nil {
			if j, err := json.MarshalIndent(v, "", "  "); err == nil {
				return string(j), "cbor as json"
			}
		}
	}
	if utf8.Valid(b) && !strings.ContainsFunc(string(b), func(r rune) bool { return r < 0x20 && r != '\n' && r != '\t' }) {
		if json.Valid(b) && len(b) > 0 && (b[0] == '{' || b[0] == '[') {
			var out bytes.Buffer
			_ = json.Indent(&out, b, "", "  ")
			return out.String(), "json"
		}
		return string(b), "text"
	}
	return hex.EncodeToString(b), "hex"
}

// newest reads up to n of the newest records of each partition of topic,
// oldest first, with their bodies (within b).
func (c *console) newest(ctx context.Context, topic string, n int, b *bodyBudget) ([]recordRow, error) {
	return c.scan(ctx, topic, n, nil, b)
}

// scan reads up to n of the newest records of each partition of topic and
// keeps, oldest first, those keep accepts (all when nil); their bodies are
// rendered within b, or dropped when b is nil.
func (c *console) scan(ctx context.Context, topic string, n int, keep func(*recordRow) bool, b *bodyBudget) ([]recordRow, error) {
	parts, err := c.t.Partitions(ctx, topic)
	if err != nil {
		return nil, notFoundf("there is no topic %q in this stream", topic)
	}
	var out []recordRow
	for p := range parts {
		next, err := c.t.NextOffset(ctx, topic, p)
		if err != nil {
			return nil, err
		}
		from := next - min(next, uint64(n))
		for from < next {
			recs, err := c.t.ReadRange(ctx, topic, p, from, int(min(next-from, 500)))
			if err != nil {
				return nil, err
			}
			if len(recs) == 0 {
				break
			}
			for i := range recs {
				v, body := rowHead(topic, &recs[i])
				if keep != nil && !keep(&v) {
					continue
				}
				if b != nil {
					b.show(&v, body)
				}
				out = append(out, v)
			}
			from = recs[len(recs)-1].Offset + 1
		}
	}
	slices.SortStableFunc(out, func(a, b recordRow) int { return cmp.Compare(a.timestamp, b.timestamp) })
	return out, nil
}

// scanning takes one of the console's scan slots, answering 503 when all
// are taken; the caller calls the returned release.
func (c *console) scanning(w http.ResponseWriter, r *http.Request) (release func(), ok bool) {
	select {
	case c.scans <- struct{}{}:
		return func() { <-c.scans }, true
	default:
		w.Header().Set("Retry-After", "1")
		c.fail(w, r, http.StatusServiceUnavailable, "the console is busy reading the log for other pages: try again in a moment")
		return nil, false
	}
}

// ---- conversations ----

// conversationHit is one conversation a search found.
type conversationHit struct {
	ID         string
	Agents     []string
	Operations []string
	Records    int
	Last       string
}

func (c *console) conversationsPage(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	q := strings.TrimSpace(r.URL.Query().Get("q"))
	if len(q) > 256 {
		c.fail(w, r, http.StatusBadRequest, "a search of %d bytes is longer than any id, agent or operation", len(q))
		return
	}
	if id, err := wire.ParseID(q); err == nil {
		http.Redirect(w, r, "/conversations/"+id.String(), http.StatusSeeOther)
		return
	}
	release, ok := c.scanning(w, r)
	if !ok {
		return
	}
	defer release()
	hits := map[string]*conversationHit{}
	for _, topic := range c.topicNames(ctx) {
		rows, err := c.scan(ctx, topic, scanDepth, nil, nil) // a search shows no bodies
		if err != nil {
			continue
		}
		for _, rw := range rows {
			if rw.Conversation == "" || rw.Conversation == (wire.ID{}).String() {
				continue
			}
			if q != "" && !strings.Contains(rw.From, q) && !strings.Contains(rw.To, q) && !strings.Contains(rw.Operation, q) {
				continue
			}
			h := hits[rw.Conversation]
			if h == nil {
				h = &conversationHit{ID: rw.Conversation}
				hits[rw.Conversation] = h
			}
			h.Records++
			h.Last = max(h.Last, rw.Time)
			for _, a := range []string{rw.From, rw.To} {
				if a != "" && !slices.Contains(h.Agents, a) {
					h.Agents = append(h.Agents, a)
				}
			}
			if rw.Operation != "" && !slices.Contains(h.Operations, rw.Operation) {
				h.Operations = append(h.Operations, rw.Operation)
			}
		}
	}
	out := make([]conversationHit, 0, len(hits))
	for _, h := range hits {
		out = append(out, *h)
	}
	slices.SortFunc(out, func(a, b conversationHit) int { return cmp.Compare(b.Last, a.Last) })
	c.render(w, http.StatusOK, "conversations", struct {
		Query string
		Hits  []conversationHit
	}{q, out})
}

// conversationView is one conversation as a timeline, a causal tree, its
// assembled streams and its crash context.
type conversationView struct {
	ID       string
	Timeline []recordRow
	Tree     []treeNode
	Streams  []streamView
	Crash    crashSection
}

// treeNode is a record and its depth in the causal tree.
type treeNode struct {
	Depth int
	Row   recordRow
}

func (c *console) conversationPage(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	id, err := wire.ParseID(r.PathValue("id"))
	if err != nil {
		c.fail(w, r, http.StatusBadRequest, "%q is not a conversation id (a 26-character ULID): %v", r.PathValue("id"), err)
		return
	}
	v := conversationView{ID: id.String()}
	release, ok := c.scanning(w, r)
	if !ok {
		return
	}
	defer release()
	bodies := newBodyBudget()
	for _, topic := range c.topicNames(ctx) {
		rows, err := c.scan(ctx, topic, scanDepth, func(rw *recordRow) bool { return rw.Conversation == v.ID }, bodies)
		if err != nil {
			continue
		}
		v.Timeline = append(v.Timeline, rows...)
	}
	// The crash context reads deeper than the timeline (the newest
	// conversation.Window records of each partition), so it may find a
	// conversation the timeline does not.
	v.Crash = c.crashContext(ctx, id, bodies)
	if len(v.Timeline) == 0 && !v.Crash.Found && v.Crash.Error == "" {
		c.fail(w, r, http.StatusNotFound, "no record of conversation %s among the newest %d of each partition, and no journal record, dead letter or decision of it on the log", v.ID, scanDepth)
		return
	}
	slices.SortStableFunc(v.Timeline, func(a, b recordRow) int { return cmp.Compare(a.timestamp, b.timestamp) })
	v.Tree = causalTree(v.Timeline)
	v.Streams = assembleStreams(v.Timeline)
	c.render(w, http.StatusOK, "conversation", v)
}

// causalTree orders rows depth first from their causes; a reply, error or
// chunk naming no cause hangs under the command it answers (the one with its
// correlation), since the runtime answers without one; any other row whose
// cause is not in the conversation is a root.
func causalTree(rows []recordRow) []treeNode {
	children := map[string][]int{}
	known := map[string]bool{}
	asked := map[string]string{} // correlation → the first command's record
	for _, r := range rows {
		if r.Record == "" {
			continue
		}
		known[r.Record] = true
		if r.Kind == string(wire.KindCommand) && r.Correlation != "" && asked[r.Correlation] == "" {
			asked[r.Correlation] = r.Record
		}
	}
	var roots []int
	for i, r := range rows {
		parent := r.Cause
		if parent == "" && r.Correlation != "" && answers(r.Kind) {
			parent = asked[r.Correlation]
		}
		if parent != "" && known[parent] && parent != r.Record {
			children[parent] = append(children[parent], i)
		} else {
			roots = append(roots, i)
		}
	}
	var out []treeNode
	seen := make([]bool, len(rows))
	var walk func(i, depth int)
	walk = func(i, depth int) {
		if seen[i] {
			return // a cycle of forged causes
		}
		seen[i] = true
		out = append(out, treeNode{Depth: depth, Row: rows[i]})
		if rows[i].Record != "" {
			for _, ch := range children[rows[i].Record] {
				walk(ch, depth+1)
			}
		}
	}
	for _, i := range roots {
		walk(i, 0)
	}
	return out
}

// answers reports whether a record of kind answers a command.
func answers(kind string) bool {
	switch wire.Kind(kind) {
	case wire.KindResponse, wire.KindError, wire.KindChunk:
		return true
	}
	return false
}

// ---- live tail ----

func (c *console) tailPage(w http.ResponseWriter, r *http.Request) {
	topic := r.URL.Query().Get("topic")
	if topic == "" {
		topic = runtime.TopicCommands
	}
	if _, err := c.t.Partitions(r.Context(), topic); err != nil {
		c.fail(w, r, http.StatusNotFound, "there is no topic %q in this stream", topic)
		return
	}
	from := "now"
	if r.URL.Query().Get("from") == "start" {
		from = "start"
	}
	c.render(w, http.StatusOK, "tail", struct{ Topic, From string }{topic, from})
}

// tailEvents streams topic's new records as server-sent events until the
// browser leaves.
func (c *console) tailEvents(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	topic := r.URL.Query().Get("topic")
	if _, err := c.t.Partitions(ctx, topic); err != nil {
		http.Error(w, fmt.Sprintf("there is no topic %q in this stream", topic), http.StatusNotFound)
		return
	}
	o := followOptions{fromStart: r.URL.Query().Get("from") == "start", interval: 200 * time.Millisecond}
	// A reconnecting EventSource names the last event it had: go on from
	// there instead of replaying or skipping.
	if last := r.Header.Get("Last-Event-ID"); last != "" {
		from, err := parseTailCursor(last)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		o.from = from
	}
	// The cursors are fixed before the stream opens, so a record sent once
	// the browser sees it open is shown.
	cursors, err := startCursors(ctx, c.t, topic, o)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	o.from = cursors
	rc := http.NewResponseController(w)
	_ = rc.SetWriteDeadline(time.Time{}) // a tail stays open as long as the browser does
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(http.StatusOK)
	if err := rc.Flush(); err != nil {
		return
	}
	err = follow(ctx, c.t, topic, o, func(rec *runtime.Incoming) error {
		cursors[rec.Partition] = rec.Offset + 1
		j, err := json.Marshal(row(topic, rec))
		if err != nil {
			return err
		}
		if _, err := fmt.Fprintf(w, "event: record\nid: %s\ndata: %s\n\n", tailCursor(cursors), j); err != nil {
			return err
		}
		return rc.Flush()
	})
	if err != nil && ctx.Err() == nil {
		c.cfg.logger.Warn("console: tail ended", "topic", topic, "err", err)
	}
}

// tailCursor is the SSE event id of a tail: each partition's next offset,
// comma-separated.
func tailCursor(cursors []uint64) string {
	parts := make([]string, len(cursors))
	for i, c := range cursors {
		parts[i] = strconv.FormatUint(c, 10)
	}
	return strings.Join(parts, ",")
}

// parseTailCursor reads an event id tailCursor wrote.
func parseTailCursor(s string) ([]uint64, error) {
	fields := strings.Split(s, ",")
	if len(fields) > 1<<16 {
		return nil, fmt.Errorf("Last-Event-ID names %d partitions", len(fields))
	}
	out := make([]uint64, len(fields))
	for i, f := range fields {
		v, err := strconv.ParseUint(f, 10, 64)
		if err != nil {
			return nil, fmt.Errorf("Last-Event-ID %q is not a tail cursor (next offsets, comma-separated)", truncate(s, 64))
		}
		out[i] = v
	}
	return out, nil
}

// ---- dead letters ----

func (c *console) dlqPage(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	topic := cmp.Or(r.URL.Query().Get("topic"), runtime.TopicDLQ)
	caps, err := readCapsules(ctx, c.t, topic)
	if err != nil {
		c.fail(w, r, http.StatusNotFound, "%s", err)
		return
	}
	vw, err := newViewer(ctx, c.t, topic)
	if err != nil {
		c.failErr(w, r, err)
		return
	}
	views := make([]capsuleView, len(caps))
	for i, cp := range caps {
		views[i] = vw.view(cp)
		views[i].Error = c.cfg.redact(views[i].Error)
	}
	ledger, err := readLedger(ctx, c, topic, views)
	if err != nil {
		c.failErr(w, r, err)
		return
	}
	c.render(w, http.StatusOK, "dlq", struct {
		Topic    string
		Capsules []capsuleView
		Ledger   []ledgerRow
	}{topic, views, ledger})
}

// ledgerRow is one redrive and what became of the republished record.
type ledgerRow struct {
	Capsule     string
	Republished string
	Outcome     string
}

// readLedger lists the redrives of the dead-letter topic with what became
// of each republished record: parked again (by a capsule of caps naming it
// as its source), or not.
func readLedger(ctx context.Context, c *console, dlq string, caps []capsuleView) ([]ledgerRow, error) {
	done, err := readRedrives(ctx, c.t, dlq)
	if err != nil {
		return nil, err
	}
	parkedAs := map[string]string{}
	for _, cp := range caps {
		parkedAs[cp.Source] = cp.Capsule
	}
	out := make([]ledgerRow, 0, len(done))
	for cp, to := range done {
		outcome := "not parked again: handled, or not yet read"
		if again, ok := parkedAs[to]; ok {
			outcome = "parked again as capsule " + again
		}
		out = append(out, ledgerRow{Capsule: cp, Republished: to, Outcome: outcome})
	}
	slices.SortFunc(out, func(a, b ledgerRow) int { return cmp.Compare(a.Capsule, b.Capsule) })
	return out, nil
}

func (c *console) capsulePage(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	topic := cmp.Or(r.URL.Query().Get("topic"), runtime.TopicDLQ)
	pos, err := parsePosition(r.PathValue("pos"))
	if err != nil {
		c.fail(w, r, http.StatusBadRequest, "%s", err)
		return
	}
	cp, err := findCapsule(ctx, c.t, topic, pos)
	if err != nil {
		c.fail(w, r, http.StatusNotFound, "%s", err)
		return
	}
	vw, err := newViewer(ctx, c.t, topic)
	if err != nil {
		c.failErr(w, r, err)
		return
	}
	original := parkedRecord(cp.Capsule)
	c.render(w, http.StatusOK, "capsule", struct {
		Topic    string
		Capsule  capsuleView
		Original recordRow
	}{topic, vw.view(cp), row("source", &original)})
}

// redriveAction republishes the capsules a form names, after the form's
// confirmation step.
func (c *console) redriveAction(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	if err := r.ParseForm(); err != nil {
		c.fail(w, r, http.StatusBadRequest, "the form does not parse: %v", err)
		return
	}
	topic := cmp.Or(r.PostForm.Get("topic"), runtime.TopicDLQ)
	var positions []runtime.Position
	for _, s := range r.PostForm["capsule"] {
		pos, err := parsePosition(s)
		if err != nil {
			c.fail(w, r, http.StatusBadRequest, "%s", err)
			return
		}
		positions = append(positions, pos)
	}
	if len(positions) == 0 {
		c.fail(w, r, http.StatusBadRequest, "choose at least one capsule to redrive")
		return
	}
	if r.PostForm.Get("confirm") != "yes" {
		c.render(w, http.StatusOK, "confirm", struct {
			Topic    string
			Capsules []string
		}{topic, r.PostForm["capsule"]})
		return
	}
	src, err := loadSources(ctx, c.t)
	if err != nil {
		c.failErr(w, r, err)
		return
	}
	done, err := readRedrives(ctx, c.t, topic)
	if err != nil {
		c.failErr(w, r, err)
		return
	}
	if c.cfg.keys == nil && !c.cfg.unverified {
		c.fail(w, r, http.StatusForbidden, "this console redrives only verified capsules: start it with --keys FILE, or --unverified")
		return
	}
	rd := redriver{t: c.t, src: src, done: done, keys: c.cfg.keys, topic: topic, again: r.PostForm.Get("again") == "yes"}
	var results []redriveResult
	for _, pos := range positions {
		cp, err := findCapsule(ctx, c.t, topic, pos)
		if err != nil {
			cp = capsule{Position: pos, Err: err}
		}
		res := rd.redrive(ctx, cp)
		res.Error = c.cfg.redact(res.Error) // a transport error may name the server's address
		results = append(results, res)
	}
	c.cfg.logger.Info("console: redrive", "topic", topic, "capsules", len(positions))
	c.render(w, http.StatusOK, "redriven", struct {
		Topic   string
		Results []redriveResult
	}{topic, results})
}

// ---- approvals ----

// listApprovals folds topic's pending requests as their askers judge
// answers: with the console's keys, only an answer an asker would accept
// counts, so an unsigned one cannot hide a request.
func (c *console) listApprovals(ctx context.Context, topic string) (*humaninput.Listing, error) {
	opts := humaninput.ListOptions{Topic: topic, Now: c.cfg.now()}
	if c.cfg.keys != nil {
		opts.Verifier = c.cfg.keys
	}
	return humaninput.List(ctx, c.t, opts)
}

// approvalViews describes the pending requests of l for a page: who asks,
// how long ago and until when.
func (c *console) approvalViews(l *humaninput.Listing) []approvalView {
	now := c.cfg.now()
	views := make([]approvalView, len(l.Pending))
	for i, m := range l.Pending {
		views[i] = approvalView{Correlation: m.Envelope.Correlation.String(), From: string(m.Envelope.Source),
			Conversation: m.Envelope.Conversation.String(), Position: m.Position.String(), Prompt: string(m.Body()),
			Duplicate: l.Shared[*m.Envelope.Correlation] > 0}
		if m.Timestamp != 0 {
			views[i].Age = age(now, time.UnixMicro(int64(m.Timestamp)))
		}
		if d := m.Envelope.DeadlineMicros; d != nil {
			views[i].Deadline = pageFuncs["micros"].(func(uint64) string)(*d)
			views[i].Left = time.UnixMicro(int64(*d)).Sub(now).Round(time.Second).String()
		}
	}
	return views
}

// age is how long before now t was, to the second, for people.
func age(now, t time.Time) string {
	d := max(now.Sub(t), 0).Round(time.Second)
	return d.String() + " ago"
}

func (c *console) approvalsPage(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	topic := cmp.Or(r.URL.Query().Get("topic"), runtime.TopicHumanInput)
	l, err := c.listApprovals(ctx, topic)
	if err != nil {
		c.fail(w, r, http.StatusNotFound, "%s", err)
		return
	}
	c.render(w, http.StatusOK, "approvals", struct {
		Topic    string
		Pending  []approvalView
		Verified bool
		Refused  int
	}{topic, c.approvalViews(l), c.cfg.keys != nil, l.RefusedAnswers})
}

func (c *console) answerAction(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	if err := r.ParseForm(); err != nil {
		c.fail(w, r, http.StatusBadRequest, "the form does not parse: %v", err)
		return
	}
	topic := cmp.Or(r.PostForm.Get("topic"), runtime.TopicHumanInput)
	corr, verdict, text := r.PostForm.Get("correlation"), r.PostForm.Get("verdict"), r.PostForm.Get("text")
	if verdict != "approve" && verdict != "refuse" {
		c.fail(w, r, http.StatusBadRequest, "the verdict is approve or refuse, not %q", verdict)
		return
	}
	l, err := c.listApprovals(ctx, topic)
	if err != nil {
		c.failErr(w, r, err)
		return
	}
	var matching []*runtime.Message
	for _, m := range l.Pending {
		if m.Envelope.Correlation.String() == corr {
			matching = append(matching, m)
		}
	}
	switch {
	case len(matching) == 0:
		c.fail(w, r, http.StatusNotFound, "no pending request with correlation %q in %s", corr, topic)
		return
	case l.Shared[*matching[0].Envelope.Correlation] > 0:
		c.fail(w, r, http.StatusConflict, "other requests share correlation %s, so an answer could approve a prompt other than the one you read; none was answered", corr)
		return
	}
	refuse := verdict == "refuse"
	if text == "" && !refuse {
		text = "approved"
	}
	client := runtime.NewClient(c.t, runtime.ClientConfig{Logger: c.cfg.logger})
	defer client.Close()
	if err := humaninput.Answer(ctx, client, topic, "console", matching[0], refuse, []byte(text), nil); err != nil {
		c.failErr(w, r, err)
		return
	}
	http.Redirect(w, r, "/approvals?answered="+corr, http.StatusSeeOther)
}

// ---- audit ----

// auditPage shows the governance decisions per agent, the newest decisions
// and what the chain check finds (without trusted keys: signatures are
// shown, not required).
func (c *console) auditPage(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	topic := cmp.Or(r.URL.Query().Get("topic"), runtime.TopicAudit)
	if _, err := c.t.Partitions(ctx, topic); err != nil {
		c.fail(w, r, http.StatusNotFound, "there is no topic %q in this stream", topic)
		return
	}
	release, ok := c.scanning(w, r)
	if !ok {
		return
	}
	defer release()
	// Like every page that scans, the newest scanDepth records of each
	// partition, holding at most a page's bytes of them.
	l, err := govern.ListAudit(ctx, c.t, govern.AuditOptions{Topic: topic, Newest: scanDepth, MaxBytes: auditPageBytes})
	if err != nil {
		c.failErr(w, r, err)
		return
	}
	entries := l.Entries
	type decision struct {
		At, Time, Agent, Verdict, Mode, Outcome, Action, Reason, Policy string
	}
	var recent []decision
	for i := len(entries) - 1; i >= 0 && len(recent) < 100; i-- {
		e := entries[i]
		if e.Evidence == nil {
			recent = append(recent, decision{At: e.At.String(), Reason: fmt.Sprintf("undecodable: %v", e.Err)})
			continue
		}
		ev := e.Evidence
		recent = append(recent, decision{At: e.At.String(), Time: ev.At.UTC().Format("2006-01-02 15:04:05.000"), Agent: ev.Action.Agent,
			Verdict: string(ev.Verdict), Mode: string(ev.Mode), Outcome: string(ev.Outcome), Action: strings.TrimSpace(ev.Action.Kind + " " + ev.Action.Topic + " " + ev.Action.Operation),
			Reason: ev.Reason, Policy: strings.TrimSpace(ev.PolicyID + " " + ev.PolicyVersion)})
	}
	// A window that starts mid-chain would read as records removed: the
	// whole chain is laser audit verify's.
	whole := !l.Partial && l.Unread == 0
	var findings []string
	if whole {
		for _, f := range govern.Verify(entries, govern.VerifyOptions{}) {
			findings = append(findings, f.String())
		}
	}
	c.render(w, http.StatusOK, "audit", struct {
		Topic    string
		Records  int
		Unread   int
		Whole    bool
		Depth    int
		Agents   []activityView
		Recent   []decision
		Findings []string
	}{topic, len(entries), l.Unread, whole, scanDepth, auditActivity(entries), recent, findings})
}
