// Package conversationtest runs the rules of reading a conversation back
// (package conversation) and of log-backed memory (package memory) over a
// transport, so each holds whatever log is underneath: the embedded log,
// Iggy over the in-process test server, and a real Iggy server.
package conversationtest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"strings"
	"testing"
	"time"

	"github.com/lasergo/laser/internal/rawsend"
	"github.com/lasergo/laser/runtime"
	"github.com/lasergo/laser/wire"
)

// Run runs every scenario, each on a fresh transport from newTransport and
// with topic names of its own.
func Run(t *testing.T, newTransport func(t *testing.T) runtime.Transport) {
	t.Helper()
	cases := []struct {
		name string
		fn   func(*world)
	}{
		{"OrdersByBrokerTimestampThenTopicPartitionOffset", scenarioOrder},
		{"KeepsOnlyTheConversationPlainAndEnveloped", scenarioScope},
		{"AcrossSubconversationsMatchesRootOrParent", scenarioSubconversations},
		{"SkipsUndecodableRecords", scenarioUndecodable},
		{"DefaultPolicyKeepsTheLastFifty", scenarioDefaultPolicy},
		{"PoliciesByAgentTokenBudgetAndChain", scenarioPolicies},
		{"ReadingNeverCommitsNorMovesAGroup", scenarioNoGroup},
		{"FromOffsetsStartsEachPartitionThere", scenarioFromOffsets},
		{"WindowEndsAtThePartitionTail", scenarioWindow},
		{"FullReplayFoldsEveryEventAndCommitsNothing", scenarioFoldFull},
		{"LastReplayFoldsTheLastN", scenarioFoldLast},
		{"FromOffsetsReplayFoldsFromThere", scenarioFoldFromOffsets},
		{"FoldWithoutABoundIsRefused", scenarioFoldNoBound},
		{"SnapshotSeedsTheFoldAndReplaysOnlyAfterIt", scenarioSnapshotMemory},
		{"TopicSnapshotsSurviveANewStore", scenarioSnapshotTopic},
		{"SnapshotsRefuseAFoldOfSeveralTopics", scenarioSnapshotSeveralTopics},
		{"PerUserSessionReadsOneConversationAcrossClients", scenarioSession},
		{"MemoryRemembersAndRecalls", scenarioMemoryRecall},
		{"MemoryForgetHidesAnItemEvenBeforeItArrives", scenarioMemoryForget},
		{"MemoryFeedbackReranks", scenarioMemoryFeedback},
		{"MemoryNamedItems", scenarioMemoryNamed},
		{"MemoryRecallIsIncremental", scenarioMemoryIncremental},
		{"MemoryTopicsAndNamespacesAreIsolated", scenarioMemoryIsolation},
		{"MemoryRecordsAreTheReferenceEncoding", scenarioMemoryWire},
		{"RememberingRemembersOnlyAfterSuccess", scenarioRememberingSuccess},
		{"RememberingLogsAFailedWriteAndSucceeds", scenarioRememberingFailure},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			c.fn(newWorld(t, newTransport(t)))
		})
	}
}

// world is one scenario's transport, client and helpers.
type world struct {
	t      *testing.T
	tr     runtime.Transport
	client *runtime.Client
	ctx    context.Context
	n      uint64
	salt   uint64
}

func newWorld(t *testing.T, tr runtime.Transport) *world {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	var b [8]byte
	_, _ = rand.Read(b[:])
	var salt uint64
	for _, c := range b {
		salt = salt<<8 | uint64(c)
	}
	client := runtime.NewClient(tr, runtime.ClientOptions{})
	t.Cleanup(func() { _ = client.Close() })
	return &world{t: t, tr: tr, client: client, ctx: ctx, salt: salt}
}

// topic creates a topic with a fresh name.
func (w *world) topic(what string, partitions uint32) string {
	w.t.Helper()
	var b [4]byte
	_, _ = rand.Read(b[:])
	name := "conv-" + what + "-" + hex.EncodeToString(b[:])
	if err := w.tr.EnsureTopics(w.ctx, partitions, name); err != nil {
		w.t.Fatal(err)
	}
	return name
}

// conv returns a fresh conversation id.
func (w *world) conv() wire.ID {
	w.n++
	return wire.IDFromUint128(w.salt, w.n)
}

// plain publishes a plain message and returns where it landed.
func (w *world) plain(topic string, prov wire.Provenance, body string) runtime.Position {
	w.t.Helper()
	pos, err := w.client.SendPlain(w.ctx, topic, prov, []byte(body))
	if err != nil {
		w.t.Fatal(err)
	}
	return pos
}

// say publishes a plain message of conv from agent.
func (w *world) say(topic string, conv wire.ID, agent, body string) runtime.Position {
	w.t.Helper()
	return w.plain(topic, wire.Provenance{Conversation: conv, Agent: agent}, body)
}

// envelope publishes an AGDX event of conv from source.
func (w *world) envelope(topic string, conv wire.ID, source, body string) runtime.Position {
	w.t.Helper()
	env := &wire.Envelope{Kind: wire.KindEvent, Conversation: conv, Source: wire.AgentID(source), Body: []byte(body)}
	pos, err := rawsend.Envelope(w.ctx, w.client, topic, env, wire.ContentRaw)
	if err != nil {
		w.t.Fatal(err)
	}
	return pos
}

// raw publishes records as they are.
func (w *world) raw(topic string, recs ...runtime.Outgoing) []runtime.Position {
	w.t.Helper()
	pos, err := w.tr.Publish(w.ctx, topic, recs...)
	if err != nil {
		w.t.Fatal(err)
	}
	return pos
}

// bodies returns the history's bodies as strings.
func bodies[M interface{ Body() []byte }](h []M) []string {
	out := make([]string, len(h))
	for i, m := range h {
		out[i] = string(m.Body())
	}
	return out
}

func sameStrings(got, want []string) bool {
	return strings.Join(got, "\x00") == strings.Join(want, "\x00") && len(got) == len(want)
}
