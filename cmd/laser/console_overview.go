package main

import (
	"cmp"
	"context"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/lasergo/laser/registry"
	"github.com/lasergo/laser/runtime"
	"github.com/lasergo/laser/wire"
)

// The overview answers "is anything wrong": dead letters waiting for a
// redrive, requests waiting for a human, groups behind their topics, and
// which agents were seen, each a count that links to its page.

// overviewView is what the overview page shows.
type overviewView struct {
	DeadLetters reasonCounts
	Approvals   []approvalView
	// ApprovalsVerified says answers were judged with the console's keys.
	ApprovalsVerified bool
	Behind            []groupLag
	Agents            []agentView
	Topics            []topicView
	// Depth is how many of the newest records of each partition the counts
	// read.
	Depth int
}

// reasonCounts counts the dead letters not yet redriven, by reason.
type reasonCounts struct {
	Total    int
	Redriven int
	ByReason []reasonCount
}

// reasonCount is how many capsules were parked for one reason.
type reasonCount struct {
	Reason string
	N      int
}

// groupLag is one group's place on one topic.
type groupLag struct {
	Group string
	Topic string
	Lag   []lagView
	// Behind is the sum of the partitions' lags.
	Behind uint64
}

// behind sums lag over partitions.
func behind(lag []lagView) uint64 {
	var n uint64
	for _, l := range lag {
		n += l.Lag
	}
	return n
}

func (c *console) overviewPage(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	release, ok := c.scanning(w, r)
	if !ok {
		return
	}
	defer release()
	v, err := c.overview(ctx)
	if err != nil {
		c.failErr(w, r, err)
		return
	}
	c.render(w, http.StatusOK, "overview", v)
}

func (c *console) overview(ctx context.Context) (*overviewView, error) {
	v := &overviewView{Depth: scanDepth, ApprovalsVerified: c.cfg.keys != nil}
	var err error
	if v.DeadLetters, err = c.deadLetterCounts(ctx, runtime.TopicDLQ); err != nil {
		return nil, err
	}
	if l, err := c.listApprovals(ctx, runtime.TopicHumanInput); err == nil {
		v.Approvals = c.approvalViews(l)
	}
	if v.Topics, err = c.topics(ctx); err != nil {
		return nil, err
	}
	if v.Agents, err = c.agents(ctx); err != nil {
		return nil, err
	}
	for _, a := range v.Agents {
		for _, g := range a.Groups {
			if g.Behind > 0 {
				v.Behind = append(v.Behind, g)
			}
		}
	}
	return v, nil
}

// deadLetterCounts counts the capsules among the newest scanDepth records
// of each partition of dlq, by reason, leaving out those redriven.
func (c *console) deadLetterCounts(ctx context.Context, dlq string) (reasonCounts, error) {
	var out reasonCounts
	parts, err := c.t.Partitions(ctx, dlq)
	if err != nil {
		return out, nil // no dead-letter topic: nothing parked
	}
	redriven, err := readRedrives(ctx, c.t, dlq)
	if err != nil {
		return out, err
	}
	by := map[string]int{}
	for p := range parts {
		next, err := c.t.NextOffset(ctx, dlq, p)
		if err != nil {
			return out, err
		}
		from := next - min(next, scanDepth)
		for from < next {
			recs, err := c.t.ReadRange(ctx, dlq, p, from, int(min(next-from, 500)))
			if err != nil {
				return out, err
			}
			if len(recs) == 0 {
				break
			}
			for i := range recs {
				d, err := wire.DecodeDeadLetter(recs[i].Payload)
				switch {
				case err != nil:
				case redriven[recs[i].Position.String()] != "":
					out.Redriven++
				default:
					out.Total++
					by[d.Reason.String()]++
				}
			}
			from = recs[len(recs)-1].Offset + 1
		}
	}
	for reason, n := range by {
		out.ByReason = append(out.ByReason, reasonCount{Reason: reason, N: n})
	}
	slices.SortFunc(out.ByReason, func(a, b reasonCount) int { return cmp.Or(cmp.Compare(b.N, a.N), cmp.Compare(a.Reason, b.Reason)) })
	return out, nil
}

// ---- agents ----

// agentView is one agent: its card when it holds one, when it was last
// seen (sending, or publishing its card) and its groups' progress.
type agentView struct {
	Agent       string
	Card        bool
	Name        string
	Version     string
	Skills      []string
	Observed    time.Time
	Fresh       bool
	TTL         string
	Quarantined bool
	// LastSeen is the newest of its card and the records it sent.
	LastSeen time.Time
	// Seen is LastSeen for people: how long ago, or never.
	Seen string
	// Sent counts the records it sent among those read.
	Sent   int
	Groups []groupLag
}

// lagView is a group's place in one partition of a topic.
type lagView struct {
	Topic     string
	Partition uint32
	Next      uint64
	Stored    string
	Lag       uint64
}

// maxAgents bounds the agents a page lists: agent ids come from what anyone
// wrote on the log.
const maxAgents = 256

// agents are the agents that hold a card and those seen sending among the
// newest scanDepth records of each partition of every topic, with their
// groups' lag on every topic they read.
func (c *console) agents(ctx context.Context) ([]agentView, error) {
	reg := registry.New(c.t, registry.Config{})
	if err := reg.Refresh(ctx); err != nil {
		return nil, err
	}
	now := c.cfg.now()
	byID := map[string]*agentView{}
	for _, e := range reg.Cards() {
		v := &agentView{Agent: e.Agent, Card: e.Card != nil, Observed: e.ObservedAt, LastSeen: e.ObservedAt, Fresh: e.Fresh(now), Quarantined: reg.Quarantined(e.Agent)}
		if e.Card != nil {
			v.Name, v.Version = e.Card.Name, e.Card.Version
			for _, cap := range e.Card.Capabilities {
				v.Skills = append(v.Skills, cap.SkillID)
			}
			if e.Card.TTLMicros != nil {
				v.TTL = (time.Duration(*e.Card.TTLMicros) * time.Microsecond).String()
			}
		}
		byID[e.Agent] = v
	}
	topics := c.topicNames(ctx)
	for _, topic := range topics {
		rows, err := c.scan(ctx, topic, scanDepth, nil, nil)
		if err != nil {
			continue
		}
		for _, rw := range rows {
			if rw.From == "" {
				continue
			}
			v := byID[rw.From]
			if v == nil {
				if len(byID) >= maxAgents {
					continue
				}
				v = &agentView{Agent: rw.From}
				byID[rw.From] = v
			}
			v.Sent++
			if at := time.UnixMicro(int64(rw.timestamp)); at.After(v.LastSeen) {
				v.LastSeen = at
			}
		}
	}
	out := make([]agentView, 0, len(byID))
	for _, v := range byID {
		for _, topic := range topics {
			lag, err := c.groupLag(ctx, topic, v.Agent)
			if err != nil {
				return nil, err
			}
			if slices.ContainsFunc(lag, func(l lagView) bool { return l.Stored != "-" }) {
				v.Groups = append(v.Groups, groupLag{Group: v.Agent, Topic: topic, Lag: lag, Behind: behind(lag)})
			}
		}
		v.Seen = "never"
		if !v.LastSeen.IsZero() {
			v.Seen = age(now, v.LastSeen)
		}
		out = append(out, *v)
	}
	slices.SortFunc(out, func(a, b agentView) int { return cmp.Compare(a.Agent, b.Agent) })
	return out, nil
}

// groupLag is group's stored offset against the end of each partition of
// topic.
func (c *console) groupLag(ctx context.Context, topic, group string) ([]lagView, error) {
	n, err := c.t.Partitions(ctx, topic)
	if err != nil {
		return nil, nil // no such topic: nothing to lag behind
	}
	var out []lagView
	for p := range n {
		next, err := c.t.NextOffset(ctx, topic, p)
		if err != nil {
			return nil, err
		}
		v := lagView{Topic: topic, Partition: p, Next: next, Stored: "-", Lag: next}
		stored, ok, err := c.t.StoredOffset(ctx, topic, group, p)
		if err != nil {
			return nil, err
		}
		if ok {
			v.Stored = fmt.Sprint(stored)
			v.Lag = next - min(next, stored+1)
		}
		out = append(out, v)
	}
	return out, nil
}

// lagText says how far a group is behind in one partition, for people.
func lagText(l lagView) string {
	if l.Stored == "-" && l.Lag == 0 {
		return fmt.Sprintf("p%d: empty", l.Partition)
	}
	if l.Stored == "-" {
		return fmt.Sprintf("p%d: %d behind (nothing read yet)", l.Partition, l.Lag)
	}
	if l.Lag == 0 {
		return fmt.Sprintf("p%d: up to date", l.Partition)
	}
	return fmt.Sprintf("p%d: %d behind", l.Partition, l.Lag)
}

func (c *console) agentsPage(w http.ResponseWriter, r *http.Request) {
	release, ok := c.scanning(w, r)
	if !ok {
		return
	}
	defer release()
	agents, err := c.agents(r.Context())
	if err != nil {
		c.failErr(w, r, err)
		return
	}
	c.render(w, http.StatusOK, "agents", agents)
}

// joinLag is a group's lag on one topic in one line.
func joinLag(lag []lagView) string {
	parts := make([]string, len(lag))
	for i, l := range lag {
		parts[i] = lagText(l)
	}
	return strings.Join(parts, ", ")
}
