package featuretest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"strings"
	"testing"

	"github.com/lasergo/laser/internal/rawsend"
	"github.com/lasergo/laser/runtime"
	"github.com/lasergo/laser/wire"
)

// Conversation runs the rules of reading a conversation back (package
// conversation) and of log-backed memory (package memory), each scenario on
// a fresh transport from newTransport and with topic names of its own.
func Conversation(t *testing.T, newTransport func(t *testing.T) runtime.Transport) {
	t.Helper()
	RunScenarios(t, newTransport, newConversationWorld, []Scenario[*conversationWorld]{
		{"OrdersByBrokerTimestampThenTopicPartitionOffset", conversationOrder},
		{"KeepsOnlyTheConversationPlainAndEnveloped", conversationScope},
		{"AcrossSubconversationsMatchesRootOrParent", conversationSubconversations},
		{"SkipsUndecodableRecords", conversationUndecodable},
		{"DefaultPolicyKeepsTheLastFifty", conversationDefaultPolicy},
		{"PoliciesByAgentTokenBudgetAndChain", conversationPolicies},
		{"ReadingNeverCommitsNorMovesAGroup", conversationNoGroup},
		{"FromOffsetsStartsEachPartitionThere", conversationFromOffsets},
		{"WindowEndsAtThePartitionTail", conversationWindow},
		{"FullReplayFoldsEveryEventAndCommitsNothing", conversationFoldFull},
		{"LastReplayFoldsTheLastN", conversationFoldLast},
		{"FromOffsetsReplayFoldsFromThere", conversationFoldFromOffsets},
		{"FoldWithoutABoundIsRefused", conversationFoldNoBound},
		{"SnapshotSeedsTheFoldAndReplaysOnlyAfterIt", conversationSnapshotMemory},
		{"TopicSnapshotsSurviveANewStore", conversationSnapshotTopic},
		{"SnapshotsRefuseAFoldOfSeveralTopics", conversationSnapshotSeveralTopics},
		{"PerUserSessionReadsOneConversationAcrossClients", conversationSession},
		{"MemoryRemembersAndRecalls", conversationMemoryRecall},
		{"MemoryForgetHidesAnItemEvenBeforeItArrives", conversationMemoryForget},
		{"MemoryFeedbackReranks", conversationMemoryFeedback},
		{"MemoryNamedItems", conversationMemoryNamed},
		{"MemoryRecallIsIncremental", conversationMemoryIncremental},
		{"MemoryTopicsAndNamespacesAreIsolated", conversationMemoryIsolation},
		{"MemoryRecordsAreTheReferenceEncoding", conversationMemoryWire},
		{"RememberingRemembersOnlyAfterSuccess", conversationRememberingSuccess},
		{"RememberingLogsAFailedWriteAndSucceeds", conversationRememberingFailure},
	})
}

// conversationWorld is one scenario's transport, client and helpers.
type conversationWorld struct {
	t      *testing.T
	tr     runtime.Transport
	client *runtime.Client
	ctx    context.Context
	n      uint64
	salt   uint64
}

func newConversationWorld(w *World) *conversationWorld {
	var b [8]byte
	_, _ = rand.Read(b[:])
	var salt uint64
	for _, c := range b {
		salt = salt<<8 | uint64(c)
	}
	return &conversationWorld{t: w.T, tr: w.Tr, client: w.Client, ctx: w.Ctx, salt: salt}
}

// topic creates a topic with a fresh name.
func (w *conversationWorld) topic(what string, partitions uint32) string {
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
func (w *conversationWorld) conv() wire.ID {
	w.n++
	return wire.IDFromUint128(w.salt, w.n)
}

// plain publishes a plain message and returns where it landed.
func (w *conversationWorld) plain(topic string, prov wire.Provenance, body string) runtime.Position {
	w.t.Helper()
	pos, err := w.client.SendPlain(w.ctx, topic, prov, []byte(body))
	if err != nil {
		w.t.Fatal(err)
	}
	return pos
}

// say publishes a plain message of conv from agent.
func (w *conversationWorld) say(topic string, conv wire.ID, agent, body string) runtime.Position {
	w.t.Helper()
	return w.plain(topic, wire.Provenance{Conversation: conv, Agent: agent}, body)
}

// envelope publishes an AGDX event of conv from source.
func (w *conversationWorld) envelope(topic string, conv wire.ID, source, body string) runtime.Position {
	w.t.Helper()
	env := &wire.Envelope{Kind: wire.KindEvent, Conversation: conv, Source: wire.AgentID(source), Body: []byte(body)}
	pos, err := rawsend.Envelope(w.ctx, w.client, topic, env, wire.ContentRaw)
	if err != nil {
		w.t.Fatal(err)
	}
	return pos
}

// raw publishes records as they are.
func (w *conversationWorld) raw(topic string, recs ...runtime.Outgoing) []runtime.Position {
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
