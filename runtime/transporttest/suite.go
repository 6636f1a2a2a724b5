// Package transporttest holds test helpers for runtime.Transport
// implementations and their users: a conformance suite every transport must
// pass, and Faulty, a wrapper that injects failures.
package transporttest

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/lasergo/laser/internal/xxh32"
	"github.com/lasergo/laser/runtime"
	"github.com/lasergo/laser/wire"
)

// Within is how long the suite waits for an eventually consistent outcome
// (records arriving, a rebalance settling) before it fails.
const Within = 5 * time.Second

// Run runs the conformance suite: one subtest per behaviour, each calling
// newTransport for a transport and using fresh topic names, so the
// transports may share one backend.
//
// Two Joins on one transport must make two distinct group members, and a
// fresh topic's offsets must start at 0. Polls may be eventually
// consistent: the suite polls until the expected records arrive or Within
// passes.
func Run(t *testing.T, newTransport func(t *testing.T) runtime.Transport) {
	t.Helper()
	cases := []struct {
		name string
		fn   func(*testing.T, runtime.Transport)
	}{
		{"PublishPollRoundTrip", testPublishPollRoundTrip},
		{"PublishReturnsPositions", testPublishReturnsPositions},
		{"HeadersByteExact", testHeadersByteExact},
		{"KeyPlacement", testKeyPlacement},
		{"SameKeySamePartition", testSameKeySamePartition},
		{"GroupSplitsPartitions", testGroupSplitsPartitions},
		{"GroupRebalancesOnLeave", testGroupRebalancesOnLeave},
		{"StoredOffsetSurvivesNewSubscription", testStoredOffsetSurvivesNewSubscription},
		{"UncommittedRedeliveredToNewMember", testUncommittedRedelivered},
		{"LostCommitRedeliveredWhenPartitionReturns", testLostCommitRedelivered},
		{"PollNeverCommits", testPollNeverCommits},
		{"CommitPastEndFails", testCommitPastEndFails},
		{"StoredOffsetReportsCommit", testStoredOffsetReportsCommit},
		{"ReadRangeReturnsExactWindow", testReadRange},
		{"NextOffsetFollowsAppends", testNextOffset},
		{"ClosedSubscriptionFails", testClosedSubscriptionFails},
		{"PublishToMissingTopicFails", testPublishToMissingTopic},
		{"TopicIDsStable", testTopicIDsStable},
		{"Partitions", testPartitions},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			c.fn(t, newTransport(t))
		})
	}
}

// Eventually calls cond until it reports true, failing the test with what
// once within has passed. It re-checks on a short backoff, never sleeping in
// place of the condition.
func Eventually(t testing.TB, within time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(within)
	wait := time.Millisecond
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("not within %v: %s", within, what)
		}
		timer := time.NewTimer(wait)
		<-timer.C
		wait = min(2*wait, 50*time.Millisecond)
	}
}

// PollUntil polls sub until at least n records arrived (failing after
// Within) and returns them in arrival order.
func PollUntil(t testing.TB, sub runtime.Subscription, n int) []runtime.Incoming {
	t.Helper()
	var got []runtime.Incoming
	ctx := t.Context()
	Eventually(t, Within, fmt.Sprintf("%d records polled", n), func() bool {
		recs, err := sub.Poll(ctx, n-len(got))
		if err != nil {
			t.Fatalf("poll: %v", err)
		}
		got = append(got, recs...)
		return len(got) >= n
	})
	return got
}

// freshName returns a topic or group name no other run has used.
func freshName(t testing.TB, what string) string {
	var b [4]byte
	_, _ = rand.Read(b[:])
	base := strings.ToLower(t.Name())
	base = strings.Map(func(r rune) rune {
		if (r >= 'a' && r <= 'z') || (r >= '0' && r <= '9') {
			return r
		}
		return '-'
	}, base)
	if len(base) > 80 {
		base = base[len(base)-80:]
	}
	return fmt.Sprintf("tt.%s.%s.%s", base, what, hex.EncodeToString(b[:]))
}

// setup creates a fresh topic with the given partitions.
func setup(t *testing.T, tr runtime.Transport, partitions uint32) (context.Context, string) {
	t.Helper()
	ctx := t.Context()
	topic := freshName(t, "topic")
	if err := tr.EnsureTopics(ctx, partitions, topic); err != nil {
		t.Fatalf("EnsureTopics(%d, %q): %v", partitions, topic, err)
	}
	return ctx, topic
}

func join(t *testing.T, ctx context.Context, tr runtime.Transport, topic, group string) runtime.Subscription {
	t.Helper()
	sub, err := tr.Join(ctx, topic, group)
	if err != nil {
		t.Fatalf("Join(%q, %q): %v", topic, group, err)
	}
	t.Cleanup(func() { _ = sub.Close() })
	return sub
}

func publish(t *testing.T, ctx context.Context, tr runtime.Transport, topic string, recs ...runtime.Outgoing) []runtime.Position {
	t.Helper()
	pos, err := tr.Publish(ctx, topic, recs...)
	if err != nil {
		t.Fatalf("Publish(%q, %d records): %v", topic, len(recs), err)
	}
	if len(pos) != len(recs) {
		t.Fatalf("Publish returned %d positions for %d records", len(pos), len(recs))
	}
	return pos
}

// numbered returns n records with payloads "<prefix>-0".. under key.
func numbered(prefix, key string, n int) []runtime.Outgoing {
	out := make([]runtime.Outgoing, n)
	for i := range out {
		out[i] = runtime.Outgoing{Key: key, Payload: fmt.Appendf(nil, "%s-%d", prefix, i)}
	}
	return out
}

func payloads(recs []runtime.Incoming) []string {
	out := make([]string, len(recs))
	for i, r := range recs {
		out[i] = string(r.Payload)
	}
	return out
}

func wantPayloads(recs []runtime.Outgoing) []string {
	out := make([]string, len(recs))
	for i, r := range recs {
		out[i] = string(r.Payload)
	}
	return out
}

// keysForPartitions returns one key per partition, key i landing on
// partition i by Iggy's rule.
func keysForPartitions(n uint32) []string {
	keys := make([]string, n)
	found := uint32(0)
	for i := 0; found < n; i++ {
		k := fmt.Sprintf("key-%d", i)
		p := xxh32.Sum32([]byte(k), 0) % n
		if keys[p] == "" {
			keys[p] = k
			found++
		}
	}
	return keys
}

func testPublishPollRoundTrip(t *testing.T, tr runtime.Transport) {
	ctx, topic := setup(t, tr, 1)
	recs := numbered("round", "k", 3)
	publish(t, ctx, tr, topic, recs...)
	sub := join(t, ctx, tr, topic, freshName(t, "group"))
	got := PollUntil(t, sub, 3)
	if !slices.Equal(payloads(got), wantPayloads(recs)) {
		t.Fatalf("polled payloads %q, want %q", payloads(got), wantPayloads(recs))
	}
	for i, r := range got {
		if r.Partition != 0 || r.Offset != uint64(i) {
			t.Errorf("record %d at %v, want 0:%d", i, r.Position, i)
		}
		if r.Timestamp == 0 {
			t.Errorf("record %d has no broker timestamp", i)
		}
	}
}

func testPublishReturnsPositions(t *testing.T, tr runtime.Transport) {
	ctx, topic := setup(t, tr, 3)
	keys := keysForPartitions(3)
	var recs []runtime.Outgoing
	for round := range 2 {
		for _, k := range keys {
			recs = append(recs, runtime.Outgoing{Key: k, Payload: fmt.Appendf(nil, "%s/%d", k, round)})
		}
	}
	pos := publish(t, ctx, tr, topic, recs...)
	for i, p := range pos {
		got, err := tr.ReadRange(ctx, topic, p.Partition, p.Offset, 1)
		if err != nil {
			t.Fatalf("ReadRange at %v: %v", p, err)
		}
		if len(got) != 1 || !bytes.Equal(got[0].Payload, recs[i].Payload) || got[0].Position != p {
			t.Errorf("record %d: Publish said %v, but the log holds %v there", i, p, got)
		}
	}
}

func testHeadersByteExact(t *testing.T, tr runtime.Transport) {
	ctx, topic := setup(t, tr, 1)
	id := wire.IDFromUint128(0x0102030405060708, 0x090a0b0c0d0e0f10)
	headers := wire.Headers{
		{Key: wire.HeaderContentType, Value: wire.Uint8Value(3)},
		{Key: wire.HeaderAgentVersion, Value: wire.Uint32Value(wire.AgentOpVersion)},
		{Key: wire.HeaderConversationID, Value: wire.Uint128Value(id)},
		{Key: wire.HeaderTarget, Value: wire.StringValue("agent-ä")},
		{Key: wire.HeaderDeadline, Value: wire.HeaderValue{Kind: wire.HeaderKindUint64, Data: []byte{1, 2, 3, 4, 5, 6, 7, 8}}},
		{Key: "raw", Value: wire.HeaderValue{Kind: wire.HeaderKindRaw, Data: []byte{0, 0xff, 0x80}}},
	}
	want := headers.Clone()
	publish(t, ctx, tr, topic, runtime.Outgoing{Key: "k", Headers: headers, Payload: []byte("with headers")})
	headers[0].Value.Data[0] = 99 // the transport must have copied what it published
	sub := join(t, ctx, tr, topic, freshName(t, "group"))
	got := PollUntil(t, sub, 1)[0]
	if got.Headers.Len() != len(want) {
		t.Fatalf("got %d headers, want %d: %v", got.Headers.Len(), len(want), got.Headers)
	}
	// Order is not part of the contract (Iggy may not keep it); kinds and
	// bytes are.
	for _, w := range want {
		v, ok := got.Headers.Get(w.Key)
		if !ok {
			t.Errorf("header %q missing", w.Key)
			continue
		}
		if v.Kind != w.Value.Kind || !bytes.Equal(v.Data, w.Value.Data) {
			t.Errorf("header %q = %s %x, want %s %x", w.Key, v.Kind, v.Data, w.Value.Kind, w.Value.Data)
		}
	}
	v, _ := got.Headers.Get(wire.HeaderConversationID)
	if back, err := v.AsUint128(); err != nil || back != id {
		t.Errorf("conversation header decodes to %v (%v), want %v", back, err, id)
	}
}

func testKeyPlacement(t *testing.T, tr runtime.Transport) {
	const parts = 4
	ctx, topic := setup(t, tr, parts)
	for i := range 16 {
		key := fmt.Sprintf("conversation-%d", i)
		pos := publish(t, ctx, tr, topic, runtime.Outgoing{Key: key, Payload: []byte(key)})
		want := xxh32.Sum32([]byte(key), 0) % parts
		if pos[0].Partition != want {
			t.Errorf("key %q placed on partition %d, want xxh32 %% %d = %d", key, pos[0].Partition, parts, want)
		}
	}
}

func testSameKeySamePartition(t *testing.T, tr runtime.Transport) {
	ctx, topic := setup(t, tr, 5)
	recs := append(numbered("a", "same-key", 4), numbered("b", "other-key", 4)...)
	pos := publish(t, ctx, tr, topic, recs...)
	for i := 1; i < 4; i++ {
		if pos[i].Partition != pos[0].Partition {
			t.Errorf("record %d of one key on partition %d, first on %d", i, pos[i].Partition, pos[0].Partition)
		}
		if pos[4+i].Partition != pos[4].Partition {
			t.Errorf("record %d of the other key on partition %d, first on %d", i, pos[4+i].Partition, pos[4].Partition)
		}
		if pos[i].Partition == pos[i-1].Partition && pos[i].Offset != pos[i-1].Offset+1 {
			t.Errorf("records of one key at %v then %v, want consecutive offsets", pos[i-1], pos[i])
		}
	}
}

// collect polls every subscription until the wanted payloads all arrived,
// returning who got which records.
func collect(t *testing.T, ctx context.Context, want []string, subs ...runtime.Subscription) [][]runtime.Incoming {
	t.Helper()
	got := make([][]runtime.Incoming, len(subs))
	seen := make(map[string]bool)
	Eventually(t, Within, fmt.Sprintf("%d records across %d members", len(want), len(subs)), func() bool {
		for i, s := range subs {
			recs, err := s.Poll(ctx, 100)
			if err != nil {
				t.Fatalf("member %d poll: %v", i, err)
			}
			for _, r := range recs {
				got[i] = append(got[i], r)
				seen[string(r.Payload)] = true
			}
		}
		for _, w := range want {
			if !seen[w] {
				return false
			}
		}
		return true
	})
	return got
}

func partitionsOf(recs []runtime.Incoming) map[uint32]bool {
	out := make(map[uint32]bool)
	for _, r := range recs {
		out[r.Partition] = true
	}
	return out
}

func commitAll(t *testing.T, ctx context.Context, sub runtime.Subscription, recs []runtime.Incoming) {
	t.Helper()
	last := make(map[uint32]uint64)
	for _, r := range recs {
		last[r.Partition] = max(last[r.Partition], r.Offset)
	}
	for p, off := range last {
		if err := sub.Commit(ctx, p, off); err != nil {
			t.Fatalf("Commit(%d, %d): %v", p, off, err)
		}
	}
}

// onePerPartition publishes one record per partition, payloads tagged.
func onePerPartition(t *testing.T, ctx context.Context, tr runtime.Transport, topic string, parts uint32, tag string) []string {
	t.Helper()
	var recs []runtime.Outgoing
	for _, k := range keysForPartitions(parts) {
		recs = append(recs, runtime.Outgoing{Key: k, Payload: []byte(tag + "/" + k)})
	}
	publish(t, ctx, tr, topic, recs...)
	return wantPayloads(recs)
}

func testGroupSplitsPartitions(t *testing.T, tr runtime.Transport) {
	const parts = 4
	ctx, topic := setup(t, tr, parts)
	group := freshName(t, "group")
	a := join(t, ctx, tr, topic, group)
	b := join(t, ctx, tr, topic, group)
	want := onePerPartition(t, ctx, tr, topic, parts, "split")
	got := collect(t, ctx, want, a, b)
	pa, pb := partitionsOf(got[0]), partitionsOf(got[1])
	if len(pa) == 0 || len(pb) == 0 {
		t.Fatalf("one member got nothing: a from %v, b from %v", pa, pb)
	}
	for p := range pa {
		if pb[p] {
			t.Errorf("partition %d delivered to both members", p)
		}
	}
}

func testGroupRebalancesOnLeave(t *testing.T, tr runtime.Transport) {
	const parts = 4
	ctx, topic := setup(t, tr, parts)
	group := freshName(t, "group")
	a := join(t, ctx, tr, topic, group)
	b := join(t, ctx, tr, topic, group)
	first := onePerPartition(t, ctx, tr, topic, parts, "before")
	got := collect(t, ctx, first, a, b)
	commitAll(t, ctx, a, got[0])
	commitAll(t, ctx, b, got[1])
	if err := b.Leave(ctx); err != nil {
		t.Fatalf("Leave: %v", err)
	}
	second := onePerPartition(t, ctx, tr, topic, parts, "after")
	after := collect(t, ctx, second, a)[0]
	if n := len(partitionsOf(after)); n != parts {
		t.Errorf("after the other member left, the remaining one read %d partitions, want %d", n, parts)
	}
	for _, r := range after {
		if strings.HasPrefix(string(r.Payload), "before/") {
			t.Errorf("committed record %q redelivered after rebalance", r.Payload)
		}
	}
}

func testStoredOffsetSurvivesNewSubscription(t *testing.T, tr runtime.Transport) {
	ctx, topic := setup(t, tr, 1)
	recs := numbered("resume", "k", 5)
	publish(t, ctx, tr, topic, recs...)
	group := freshName(t, "group")
	first := join(t, ctx, tr, topic, group)
	got := PollUntil(t, first, 5)
	if err := first.Commit(ctx, got[2].Partition, got[2].Offset); err != nil {
		t.Fatalf("Commit: %v", err)
	}
	if err := first.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	second := join(t, ctx, tr, topic, group)
	again := PollUntil(t, second, 2)
	if want := wantPayloads(recs[3:]); !slices.Equal(payloads(again), want) {
		t.Fatalf("new member read %q, want the uncommitted %q", payloads(again), want)
	}
}

func testUncommittedRedelivered(t *testing.T, tr runtime.Transport) {
	ctx, topic := setup(t, tr, 1)
	recs := numbered("redeliver", "k", 3)
	publish(t, ctx, tr, topic, recs...)
	group := freshName(t, "group")
	first := join(t, ctx, tr, topic, group)
	PollUntil(t, first, 3)
	if err := first.Leave(ctx); err != nil {
		t.Fatalf("Leave: %v", err)
	}
	second := join(t, ctx, tr, topic, group)
	again := PollUntil(t, second, 3)
	if want := wantPayloads(recs); !slices.Equal(payloads(again), want) {
		t.Fatalf("new member read %q, want every uncommitted record %q", payloads(again), want)
	}
}

// A commit refused because another member took the partition is dropped
// by the consumer, which counts on the partition's next owner to start at
// the stored offset; when that owner is the same member again, it must see
// the records again, or nobody ever commits them.
func testLostCommitRedelivered(t *testing.T, tr runtime.Transport) {
	const parts = 2
	ctx, topic := setup(t, tr, parts)
	group := freshName(t, "group")
	a := join(t, ctx, tr, topic, group)
	want := onePerPartition(t, ctx, tr, topic, parts, "lost")
	got := PollUntil(t, a, len(want))
	b := join(t, ctx, tr, topic, group)
	var lost []runtime.Incoming
	for _, r := range got {
		switch err := a.Commit(ctx, r.Partition, r.Offset); {
		case errors.Is(err, runtime.ErrPartitionLost):
			lost = append(lost, r)
		case err != nil:
			t.Fatalf("Commit(%d, %d): %v", r.Partition, r.Offset, err)
		}
	}
	if len(lost) == 0 {
		// The precondition is the transport's: the in-process servers move a
		// partition to the joining member at once, a real Iggy server only
		// once the members next poll, by which time a's commits went through.
		t.Skip("no commit was refused after a second member joined: this server had not moved a partition yet, so there is nothing to redeliver")
	}
	if err := b.Leave(ctx); err != nil {
		t.Fatalf("Leave: %v", err)
	}
	again := PollUntil(t, a, len(lost))
	if !slices.Equal(payloads(again), payloads(lost)) {
		t.Fatalf("after the partition came back a read %q, want the records of its refused commits %q", payloads(again), payloads(lost))
	}
}

func testPollNeverCommits(t *testing.T, tr runtime.Transport) {
	ctx, topic := setup(t, tr, 1)
	publish(t, ctx, tr, topic, numbered("nocommit", "k", 2)...)
	group := freshName(t, "group")
	sub := join(t, ctx, tr, topic, group)
	PollUntil(t, sub, 2)
	if off, ok, err := tr.StoredOffset(ctx, topic, group, 0); err != nil || ok {
		t.Fatalf("StoredOffset after polling = %d, %v, %v; want nothing stored", off, ok, err)
	}
}

func testCommitPastEndFails(t *testing.T, tr runtime.Transport) {
	ctx, topic := setup(t, tr, 1)
	publish(t, ctx, tr, topic, numbered("pastend", "k", 2)...)
	group := freshName(t, "group")
	sub := join(t, ctx, tr, topic, group)
	got := PollUntil(t, sub, 2)
	last := got[1].Offset
	if err := sub.Commit(ctx, 0, last+1); err == nil {
		t.Fatalf("Commit(0, %d) past the last offset %d succeeded", last+1, last)
	}
	if off, ok, err := tr.StoredOffset(ctx, topic, group, 0); err != nil || ok {
		t.Errorf("after a failed commit StoredOffset = %d, %v, %v; want nothing stored", off, ok, err)
	}
}

func testStoredOffsetReportsCommit(t *testing.T, tr runtime.Transport) {
	ctx, topic := setup(t, tr, 1)
	publish(t, ctx, tr, topic, numbered("stored", "k", 4)...)
	group := freshName(t, "group")
	if off, ok, err := tr.StoredOffset(ctx, topic, group, 0); err != nil || ok {
		t.Fatalf("StoredOffset before any commit = %d, %v, %v; want ok=false", off, ok, err)
	}
	sub := join(t, ctx, tr, topic, group)
	got := PollUntil(t, sub, 4)
	if err := sub.Commit(ctx, 0, got[2].Offset); err != nil {
		t.Fatalf("Commit: %v", err)
	}
	off, ok, err := tr.StoredOffset(ctx, topic, group, 0)
	if err != nil || !ok || off != got[2].Offset {
		t.Fatalf("StoredOffset = %d, %v, %v; want %d, true", off, ok, err, got[2].Offset)
	}
	if _, ok, err := tr.StoredOffset(ctx, topic, freshName(t, "other"), 0); err != nil || ok {
		t.Errorf("another group sees a stored offset (ok=%v, err=%v)", ok, err)
	}
}

func testReadRange(t *testing.T, tr runtime.Transport) {
	ctx, topic := setup(t, tr, 1)
	recs := numbered("range", "k", 10)
	pos := publish(t, ctx, tr, topic, recs...)
	base := pos[0].Offset
	cases := []struct {
		from, count int
		want        []string
	}{
		{2, 5, wantPayloads(recs[2:7])},
		{8, 100, wantPayloads(recs[8:])},
		{0, 1, wantPayloads(recs[:1])},
		{10, 5, nil},
	}
	for _, c := range cases {
		var got []runtime.Incoming
		Eventually(t, Within, fmt.Sprintf("ReadRange(%d, %d)", c.from, c.count), func() bool {
			var err error
			got, err = tr.ReadRange(ctx, topic, 0, base+uint64(c.from), c.count)
			if err != nil {
				t.Fatalf("ReadRange(%d, %d): %v", c.from, c.count, err)
			}
			return len(got) >= len(c.want)
		})
		if !slices.Equal(payloads(got), c.want) {
			t.Errorf("ReadRange(%d, %d) = %q, want %q", c.from, c.count, payloads(got), c.want)
		}
		for i, r := range got {
			if want := base + uint64(c.from+i); r.Offset != want || r.Partition != 0 {
				t.Errorf("ReadRange(%d, %d)[%d] at %v, want 0:%d", c.from, c.count, i, r.Position, want)
			}
		}
	}
}

func testClosedSubscriptionFails(t *testing.T, tr runtime.Transport) {
	ctx, topic := setup(t, tr, 1)
	sub := join(t, ctx, tr, topic, freshName(t, "group"))
	if err := sub.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if _, err := sub.Poll(ctx, 10); err == nil {
		t.Fatal("Poll after Close succeeded")
	}
}

func testPublishToMissingTopic(t *testing.T, tr runtime.Transport) {
	ctx := t.Context()
	topic := freshName(t, "missing")
	_, err := tr.Publish(ctx, topic, runtime.Outgoing{Key: "k", Payload: []byte("x")})
	if err == nil {
		t.Fatalf("Publish to missing topic %q succeeded", topic)
	}
	if errors.Is(err, runtime.ErrTransient) {
		t.Errorf("Publish to a missing topic failed with a transient error: %v", err)
	}
}

func testTopicIDsStable(t *testing.T, tr runtime.Transport) {
	ctx := t.Context()
	a, b := freshName(t, "a"), freshName(t, "b")
	if err := tr.EnsureTopics(ctx, 1, a, b); err != nil {
		t.Fatalf("EnsureTopics: %v", err)
	}
	sa, ta, err := tr.TopicIDs(ctx, a)
	if err != nil {
		t.Fatalf("TopicIDs(%q): %v", a, err)
	}
	sa2, ta2, err := tr.TopicIDs(ctx, a)
	if err != nil || sa2 != sa || ta2 != ta {
		t.Errorf("TopicIDs changed between calls: %d/%d then %d/%d (%v)", sa, ta, sa2, ta2, err)
	}
	sb, tb, err := tr.TopicIDs(ctx, b)
	if err != nil {
		t.Fatalf("TopicIDs(%q): %v", b, err)
	}
	if sb != sa {
		t.Errorf("topics of one stream report stream ids %d and %d", sa, sb)
	}
	if tb == ta {
		t.Errorf("two topics share topic id %d", ta)
	}
	if _, _, err := tr.TopicIDs(ctx, freshName(t, "missing")); err == nil {
		t.Error("TopicIDs of a missing topic succeeded")
	}
}

func testPartitions(t *testing.T, tr runtime.Transport) {
	ctx, topic := setup(t, tr, 3)
	n, err := tr.Partitions(ctx, topic)
	if err != nil || n != 3 {
		t.Fatalf("Partitions = %d, %v; want 3", n, err)
	}
	if err := tr.EnsureTopics(ctx, 5, topic); err != nil {
		t.Fatalf("EnsureTopics on an existing topic: %v", err)
	}
	if n, err := tr.Partitions(ctx, topic); err != nil || n != 3 {
		t.Errorf("after EnsureTopics(5) on an existing topic Partitions = %d, %v; want 3", n, err)
	}
	if _, err := tr.Partitions(ctx, freshName(t, "missing")); err == nil {
		t.Error("Partitions of a missing topic succeeded")
	}
}

func testNextOffset(t *testing.T, tr runtime.Transport) {
	ctx, topic := setup(t, tr, 2)
	keys := keysForPartitions(2)
	next := func(p uint32) uint64 {
		t.Helper()
		off, err := tr.NextOffset(ctx, topic, p)
		if err != nil {
			t.Fatalf("NextOffset(%d): %v", p, err)
		}
		return off
	}
	if n := next(0); n != 0 {
		t.Fatalf("NextOffset of an empty partition = %d, want 0", n)
	}
	pos := publish(t, ctx, tr, topic, numbered("next", keys[0], 3)...)
	Eventually(t, Within, "NextOffset to follow 3 appends", func() bool { return next(0) == pos[2].Offset+1 })
	if n := next(1); n != 0 {
		t.Errorf("NextOffset of the untouched partition = %d, want 0", n)
	}
	later := publish(t, ctx, tr, topic, runtime.Outgoing{Key: keys[0], Payload: []byte("later")})
	if later[0].Offset != pos[2].Offset+1 {
		t.Errorf("record appended after NextOffset=%d landed at %v", pos[2].Offset+1, later[0])
	}
}
