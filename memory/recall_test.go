package memory_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/lasergo/laser/conversation"
	"github.com/lasergo/laser/memory"
	"github.com/lasergo/laser/runtime"
	"github.com/lasergo/laser/wire"
)

func remember(t *testing.T, mem *memory.Store, scope memory.Scope, body string, opts ...memory.RememberOption) wire.ID {
	t.Helper()
	id, err := mem.Remember(t.Context(), scope, memory.Fact, []byte(body), opts...)
	if err != nil {
		t.Fatal(err)
	}
	return id
}

func recallQ(t *testing.T, mem *memory.Store, scope memory.Scope, q memory.Query) []memory.Item {
	t.Helper()
	items, err := mem.Recall(t.Context(), scope, q)
	if err != nil {
		t.Fatal(err)
	}
	return items
}

func bodies(items []memory.Item) []string {
	out := make([]string, len(items))
	for i, it := range items {
		out[i] = string(it.Body)
	}
	return out
}

func TestContentIDMatchesTheReferenceGoldenID(t *testing.T) {
	// The cross-SDK vector: no stream, agent "agent", kind fact, body "x".
	if got := memory.ContentID("", "agent", memory.Fact, []byte("x")).String(); got != "1A9GVS6SJ6SNS4KY0H19130WCW" {
		t.Fatalf("content id %s, want the reference's 1A9GVS6SJ6SNS4KY0H19130WCW", got)
	}
	a := memory.ContentID("", "agent", memory.Fact, []byte("the budget is 5000"))
	for name, other := range map[string]wire.ID{
		"another body":  memory.ContentID("", "agent", memory.Fact, []byte("the budget is 6000")),
		"another kind":  memory.ContentID("", "agent", memory.Summary, []byte("the budget is 5000")),
		"another agent": memory.ContentID("", "planner", memory.Fact, []byte("the budget is 5000")),
	} {
		if other == a {
			t.Fatalf("%s gives the same content id", name)
		}
	}
}

func TestRememberWithDedupStoresOneItem(t *testing.T) {
	client := newClient(t)
	mem := memory.New(client, memory.Config{})
	scope := memory.Scope{Conversation: conversation.Derive("ada"), Agent: "agent"}
	first := remember(t, mem, scope, "the budget is 5000", memory.Dedup())
	recallQ(t, mem, scope, memory.Query{}) // folded, so the second is known locally
	second := remember(t, mem, scope, "the budget is 5000", memory.Dedup())
	// Another process that has folded nothing appends it again: the fold
	// still keeps one.
	third := remember(t, memory.New(client, memory.Config{}), scope, "the budget is 5000", memory.Dedup())
	if first != second || first != third || first != memory.ContentID("", "agent", memory.Fact, []byte("the budget is 5000")) {
		t.Fatalf("ids %s %s %s, want one content id", first, second, third)
	}
	for name, m := range map[string]*memory.Store{"the Store": mem, "a fresh Store": memory.New(client, memory.Config{})} {
		if items := recallQ(t, m, scope, memory.Query{}); len(items) != 1 {
			t.Fatalf("%s holds %d items, want 1", name, len(items))
		}
	}
}

func TestRememberWithoutDedupStoresTwoItems(t *testing.T) {
	mem := memory.New(newClient(t), memory.Config{})
	scope := memory.Scope{Conversation: conversation.Derive("ada")}
	a, b := remember(t, mem, scope, "the budget is 5000"), remember(t, mem, scope, "the budget is 5000")
	if a == b {
		t.Fatal("two remembers without dedup share an id")
	}
	if items := recallQ(t, mem, scope, memory.Query{}); len(items) != 2 {
		t.Fatalf("holds %d items, want 2", len(items))
	}
}

func TestRecentRecallReturnsTheNewestFirst(t *testing.T) {
	mem := memory.New(newClient(t), memory.Config{})
	scope := memory.Scope{Conversation: conversation.Derive("ada")}
	for _, b := range []string{"first", "second", "third"} {
		remember(t, mem, scope, b)
	}
	if got := bodies(recallQ(t, mem, scope, memory.Query{Strategy: memory.Recent, Limit: 2})); !slices.Equal(got, []string{"third", "second"}) {
		t.Fatalf("recent recall %q, want third then second", got)
	}
	if got := bodies(recallQ(t, mem, scope, memory.Query{})); !slices.Equal(got, []string{"third", "second", "first"}) {
		t.Fatalf("a query without text recalls %q, want recent order", got)
	}
}

func TestFeedbackPromotesAndDemotesInRecentRecall(t *testing.T) {
	ctx := t.Context()
	mem := memory.New(newClient(t), memory.Config{})
	scope := memory.Scope{Conversation: conversation.Derive("ada")}
	cat := remember(t, mem, scope, "cat")
	remember(t, mem, scope, "dog")
	fish := remember(t, mem, scope, "fish")
	if _, err := mem.Feedback(ctx, scope, cat, 5); err != nil {
		t.Fatal(err)
	}
	if _, err := mem.Feedback(ctx, scope, fish, -1); err != nil {
		t.Fatal(err)
	}
	items := recallQ(t, mem, scope, memory.Query{Strategy: memory.Recent})
	if got := bodies(items); !slices.Equal(got, []string{"cat", "dog", "fish"}) {
		t.Fatalf("recall %q, want cat promoted and fish demoted", got)
	}
	if items[0].Feedback != 5 || !items[0].Scored || items[1].Scored {
		t.Fatalf("feedback %+v", items)
	}
}

func TestForgetRemovesTheItemFromEveryStrategy(t *testing.T) {
	mem := memory.New(newClient(t), memory.Config{})
	scope := memory.Scope{Conversation: conversation.Derive("ada")}
	remember(t, mem, scope, "keep the invoice")
	drop := remember(t, mem, scope, "drop the invoice")
	if err := mem.Forget(t.Context(), scope, drop); err != nil {
		t.Fatal(err)
	}
	for _, s := range []memory.Strategy{memory.Recent, memory.Keyword, memory.Semantic, memory.Hybrid} {
		if got := bodies(recallQ(t, mem, scope, memory.Query{Text: "drop invoice", Strategy: s})); !slices.Equal(got, []string{"keep the invoice"}) {
			t.Fatalf("%s recall after forget: %q", s, got)
		}
	}
}

func TestTokensKeepJoinedTermsAndTheirParts(t *testing.T) {
	got := memory.Tokens("The invoice INV-77 (v1.2) was disputed; see db.pool. Größe-3")
	want := []string{"the", "invoice", "inv-77", "v1.2", "was", "disputed", "see", "db.pool", "größe-3", "inv", "77", "v1", "2", "db", "pool", "größe", "3"}
	if !slices.Equal(got, want) {
		t.Fatalf("tokens %q\nwant   %q", got, want)
	}
}

func TestKeywordRecallRanksTheExactTermFirst(t *testing.T) {
	mem := memory.New(newClient(t), memory.Config{})
	scope := memory.Scope{Conversation: conversation.Derive("ada")}
	remember(t, mem, scope, "inv 77 inv 77 inv 77: parts of the term, many times")
	remember(t, mem, scope, "the invoice INV-77 was disputed by the customer after a long delay")
	remember(t, mem, scope, "a routine turn with nothing notable")
	items := recallQ(t, mem, scope, memory.Query{Text: "INV-77", Strategy: memory.Keyword})
	if got := bodies(items); len(got) != 2 || got[0] != "the invoice INV-77 was disputed by the customer after a long delay" {
		t.Fatalf("keyword recall %q, want the exact term first and no unmatched item", got)
	}
	if s := items[0].Signals; len(s) != 1 || s[0].Strategy != memory.Keyword || s[0].Rank != 0 || s[0].Score <= 0 {
		t.Fatalf("signals %+v", s)
	}
}

func TestKeywordRecallRanksByBM25(t *testing.T) {
	mem := memory.New(newClient(t), memory.Config{})
	scope := memory.Scope{Conversation: conversation.Derive("ada")}
	// "pool" is rare, "the" everywhere: the rare term's match ranks first,
	// and a short item beats a long one with the same match.
	remember(t, mem, scope, "the the the the the the")
	remember(t, mem, scope, "the database pool ran dry while the nightly batch and the reports and the exports were running")
	remember(t, mem, scope, "the pool ran dry")
	remember(t, mem, scope, "the cat")
	got := bodies(recallQ(t, mem, scope, memory.Query{Text: "the pool", Strategy: memory.Keyword}))
	if len(got) != 4 || got[0] != "the pool ran dry" || got[1] != "the database pool ran dry while the nightly batch and the reports and the exports were running" {
		t.Fatalf("keyword recall %q", got)
	}
}

func TestSemanticRecallRanksBySimilarity(t *testing.T) {
	mem := memory.New(newClient(t), memory.Config{})
	scope := memory.Scope{Conversation: conversation.Derive("ada")}
	remember(t, mem, scope, "checkout latency traces to the database pool")
	remember(t, mem, scope, "a routine turn with nothing notable")
	remember(t, mem, scope, "the customer prefers email")
	items := recallQ(t, mem, scope, memory.Query{Text: "latencies at checkout", Strategy: memory.Semantic})
	if len(items) != 3 || string(items[0].Body) != "checkout latency traces to the database pool" {
		t.Fatalf("semantic recall %q", bodies(items))
	}
	if s := items[0].Signals; len(s) != 1 || s[0].Strategy != memory.Semantic || s[0].Score <= items[1].Signals[0].Score {
		t.Fatalf("signals %+v then %+v", s, items[1].Signals)
	}
}

// tableEmbedder gives each known text a fixed vector, and counts the texts
// it embeds.
type tableEmbedder struct {
	vectors map[string][]float32
	texts   atomic.Int64
	fail    atomic.Bool
}

func (e *tableEmbedder) Embed(_ context.Context, texts []string) ([][]float32, error) {
	if e.fail.Load() {
		return nil, errors.New("model unavailable")
	}
	e.texts.Add(int64(len(texts)))
	out := make([][]float32, len(texts))
	for i, t := range texts {
		v, ok := e.vectors[t]
		if !ok {
			v = []float32{0, 0, 0, 1}
		}
		out[i] = slices.Clone(v)
	}
	return out, nil
}

func TestHybridRecallFusesKeywordAndSemanticWhenTheyDisagree(t *testing.T) {
	const (
		lexical  = "INV-77 INV-77 INV-77"
		semantic = "the customer wants their money back"
		both     = "INV-77 refund requested, the customer wants money back for the disputed invoice"
	)
	emb := &tableEmbedder{vectors: map[string][]float32{
		"INV-77":     {1, 0, 0, 0},
		lexical:      {0, 0, 1, 0},
		semantic:     {1, 0, 0, 0},
		both:         {0.8, 0.6, 0, 0},
		"filler one": {0.5, 0.5, 0.5, 0},
		"filler two": {0.4, 0.4, 0.6, 0},
		"filler 3":   {0.3, 0.3, 0.7, 0},
	}}
	mem := memory.New(newClient(t), memory.Config{Embedder: emb, Model: "table", Dims: 4})
	scope := memory.Scope{Conversation: conversation.Derive("ada")}
	ids := map[string]wire.ID{}
	for _, b := range []string{lexical, semantic, both, "filler one", "filler two", "filler 3"} {
		ids[b] = remember(t, mem, scope, b)
	}
	q := func(s memory.Strategy) []memory.Item {
		return recallQ(t, mem, scope, memory.Query{Text: "INV-77", Strategy: s})
	}
	if got := bodies(q(memory.Keyword)); got[0] != lexical || got[1] != both {
		t.Fatalf("keyword recall %q: want the repeated term first", got)
	}
	if got := bodies(q(memory.Semantic)); got[0] != semantic || got[1] != both {
		t.Fatalf("semantic recall %q: want the paraphrase first", got)
	}
	hybrid := q(memory.Hybrid)
	if string(hybrid[0].Body) != both {
		t.Fatalf("hybrid recall %q: want the item both rank second, top of neither", bodies(hybrid))
	}
	sig := hybrid[0].Signals
	if len(sig) != 2 || sig[0] != (memory.Signal{Strategy: memory.Keyword, Rank: 1, Score: sig[0].Score}) || sig[1] != (memory.Signal{Strategy: memory.Semantic, Rank: 1, Score: sig[1].Score}) {
		t.Fatalf("signals of the fused item %+v", sig)
	}
	if want := float32(2.0 / 62); hybrid[0].Score != want {
		t.Fatalf("fused score %v, want 2/62", hybrid[0].Score)
	}
	// Feedback is a third signal: demoting the fused item lets the
	// single-signal tops overtake it.
	if _, err := mem.Feedback(t.Context(), scope, ids[both], -3); err != nil {
		t.Fatal(err)
	}
	if got := bodies(q(memory.Hybrid)); got[0] == both {
		t.Fatalf("hybrid recall after negative feedback %q", got)
	}
}

func TestAutoRecallWithTextIsHybrid(t *testing.T) {
	mem := memory.New(newClient(t), memory.Config{})
	scope := memory.Scope{Conversation: conversation.Derive("ada")}
	remember(t, mem, scope, "checkout latency traces to the database pool")
	remember(t, mem, scope, "a routine turn with nothing notable")
	items := recallQ(t, mem, scope, memory.Query{Text: "checkout latency"})
	if string(items[0].Body) != "checkout latency traces to the database pool" || len(items[0].Signals) != 2 {
		t.Fatalf("auto recall %q, signals %+v", bodies(items), items[0].Signals)
	}
}

func TestARestartedLogUsesTheStoredVectors(t *testing.T) {
	client := newClient(t)
	emb := &tableEmbedder{vectors: map[string][]float32{"a": {1, 0, 0, 0}, "b": {0, 1, 0, 0}, "q": {0, 1, 0, 0}}}
	opts := memory.Config{Embedder: emb, Model: "table", Dims: 4}
	scope := memory.Scope{Conversation: conversation.Derive("ada")}
	remember(t, memory.New(client, opts), scope, "a")
	remember(t, memory.New(client, opts), scope, "b")
	emb.texts.Store(0)
	items := recallQ(t, memory.New(client, opts), scope, memory.Query{Text: "q", Strategy: memory.Semantic})
	if got := bodies(items); !slices.Equal(got, []string{"b", "a"}) {
		t.Fatalf("semantic recall %q", got)
	}
	if n := emb.texts.Load(); n != 1 {
		t.Fatalf("a fresh Store embedded %d texts, want only the query", n)
	}
	// A Store of another model does not trust them: it embeds the items again.
	emb.texts.Store(0)
	recallQ(t, memory.New(client, memory.Config{Embedder: emb, Model: "table-v2", Dims: 4}), scope, memory.Query{Text: "q", Strategy: memory.Semantic})
	if n := emb.texts.Load(); n != 3 {
		t.Fatalf("a Store of another model embedded %d texts, want the query and both items", n)
	}
}

func TestAnItemRememberedWhileTheEmbedderFailsIsEmbeddedAtRecall(t *testing.T) {
	emb := &tableEmbedder{vectors: map[string][]float32{"a": {1, 0, 0, 0}, "b": {0, 1, 0, 0}, "q": {0, 1, 0, 0}}}
	mem := memory.New(newClient(t), memory.Config{Embedder: emb, Model: "table", Dims: 4})
	scope := memory.Scope{Conversation: conversation.Derive("ada")}
	remember(t, mem, scope, "a")
	emb.fail.Store(true)
	remember(t, mem, scope, "b") // remembered, without a vector
	if _, err := mem.Recall(t.Context(), scope, memory.Query{Text: "q", Strategy: memory.Semantic}); err == nil {
		t.Fatal("a semantic recall with a failing embedder succeeded")
	}
	emb.fail.Store(false)
	if got := bodies(recallQ(t, mem, scope, memory.Query{Text: "q", Strategy: memory.Semantic})); !slices.Equal(got, []string{"b", "a"}) {
		t.Fatalf("semantic recall %q, want b embedded at recall", got)
	}
}

func TestAnEmbedderOfTheWrongDimensionIsAnError(t *testing.T) {
	emb := &tableEmbedder{vectors: map[string][]float32{}}
	mem := memory.New(newClient(t), memory.Config{Embedder: emb, Model: "table", Dims: 8})
	_, err := mem.Recall(t.Context(), memory.Scope{}, memory.Query{Text: "q", Strategy: memory.Semantic})
	if err == nil {
		t.Fatal("a 4-dimensional vector passed as 8")
	}
}

func TestAnUnknownStrategyIsInvalid(t *testing.T) {
	mem := memory.New(newClient(t), memory.Config{})
	if _, err := mem.Recall(t.Context(), memory.Scope{}, memory.Query{Strategy: "graph"}); runtime.CodeOf(err) != runtime.CodeInvalid {
		t.Fatalf("err = %v, want CodeInvalid", err)
	}
}

func TestDurableItemsAreRecalledFromEveryConversation(t *testing.T) {
	mem := memory.New(newClient(t), memory.Config{})
	ada, bob := conversation.Derive("ada"), conversation.Derive("bob")
	remember(t, mem, memory.Scope{Conversation: ada, Lifetime: memory.Durable}, "the budget is 5000")
	remember(t, mem, memory.Scope{Conversation: ada}, "ada said hello")
	items := recallQ(t, mem, memory.Scope{Conversation: bob}, memory.Query{})
	if got := bodies(items); !slices.Equal(got, []string{"the budget is 5000"}) || items[0].Lifetime != memory.Durable {
		t.Fatalf("bob's recall %q, want only ada's durable fact", got)
	}
	if got := recallQ(t, mem, memory.Scope{Conversation: ada}, memory.Query{}); len(got) != 2 {
		t.Fatalf("ada's recall %q", bodies(got))
	}
}

func TestRecallNarrowsToUserAndApp(t *testing.T) {
	mem := memory.New(newClient(t), memory.Config{})
	conv := conversation.Derive("ada")
	remember(t, mem, memory.Scope{Conversation: conv, User: "alice", App: "shop"}, "alice secret")
	remember(t, mem, memory.Scope{Conversation: conv, User: "bob", App: "shop"}, "bob secret")
	if got := bodies(recallQ(t, mem, memory.Scope{Conversation: conv, User: "alice"}, memory.Query{Text: "secret", Strategy: memory.Keyword})); !slices.Equal(got, []string{"alice secret"}) {
		t.Fatalf("alice recalls %q", got)
	}
	if got := recallQ(t, mem, memory.Scope{App: "shop"}, memory.Query{}); len(got) != 2 {
		t.Fatalf("the app recalls %q", bodies(got))
	}
}

func TestKindsReadAsTheReferenceDoes(t *testing.T) {
	if memory.KindOf("procedure") != memory.Procedure || memory.KindOf("graph-edge") != memory.Fact {
		t.Fatal("KindOf: a known word keeps its kind, an unknown reads as fact")
	}
	for k, c := range map[memory.Kind]memory.Class{memory.Message: memory.ClassEpisodic, memory.Procedure: memory.ClassProcedural, memory.Fact: memory.ClassSemantic, memory.Summary: memory.ClassSemantic} {
		if k.Class() != c {
			t.Fatalf("%s is %s, want %s", k, k.Class(), c)
		}
	}
}

func TestMaxItemsKeepsTheNewestInTheProjection(t *testing.T) {
	client := newClient(t)
	scope := memory.Scope{Conversation: conversation.Derive("ada")}
	writer := memory.New(client, memory.Config{})
	for i := range 200 {
		remember(t, writer, scope, fmt.Sprintf("item %d", i))
	}
	mem := memory.New(client, memory.Config{MaxItems: 3})
	items := recallQ(t, mem, scope, memory.Query{Limit: 10})
	if got := bodies(items); !slices.Equal(got, []string{"item 199", "item 198", "item 197"}) {
		t.Fatalf("a Store bounded to 3 recalls %q", got)
	}
	if got := bodies(recallQ(t, mem, scope, memory.Query{Text: "item 5", Strategy: memory.Keyword})); len(got) != 3 {
		t.Fatalf("keyword recall over evicted items %q", got)
	}
	if got := recallQ(t, memory.New(client, memory.Config{MaxItems: -1}), scope, memory.Query{Limit: 1000}); len(got) != 200 {
		t.Fatalf("an unbounded Store recalls %d items", len(got))
	}
}

// nanEmbedder returns a vector whose first value is NaN for every text.
type nanEmbedder struct{}

func (nanEmbedder) Embed(_ context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, len(texts))
	for i := range out {
		out[i] = []float32{float32(math.NaN()), 1, 0, 0}
	}
	return out, nil
}

func TestRecallRejectsNaNFromEmbedder(t *testing.T) {
	mem := memory.New(newClient(t), memory.Config{Embedder: nanEmbedder{}, Model: "m", Dims: 4})
	scope := memory.Scope{Conversation: conversation.Derive("ada")}
	_, err := mem.Recall(t.Context(), scope, memory.Query{Text: "latency", Strategy: memory.Semantic})
	if err == nil || !strings.Contains(err.Error(), "NaN") {
		t.Fatalf("Recall with a NaN-returning embedder: err = %v, want a NaN error", err)
	}
}

func TestSemanticRecallOfZeroQueryIsEmpty(t *testing.T) {
	mem := memory.New(newClient(t), memory.Config{})
	scope := memory.Scope{Conversation: conversation.Derive("ada")}
	remember(t, mem, scope, "latency of the database pool")
	remember(t, mem, scope, "refund policy")
	if items := recallQ(t, mem, scope, memory.Query{Text: "???", Strategy: memory.Semantic}); len(items) != 0 {
		t.Fatalf("semantic recall of %q = %q, want nothing", "???", bodies(items))
	}
}

// signalOf returns the item's signal of strategy s, failing when it has none.
func signalOf(t *testing.T, it memory.Item, s memory.Strategy) memory.Signal {
	t.Helper()
	for _, sig := range it.Signals {
		if sig.Strategy == s {
			return sig
		}
	}
	t.Fatalf("no %v signal in %+v", s, it.Signals)
	return memory.Signal{}
}

func TestHybridSignalScoresExcludeFeedback(t *testing.T) {
	mem := memory.New(newClient(t), memory.Config{})
	scope := memory.Scope{Conversation: conversation.Derive("ada")}
	id := remember(t, mem, scope, "latency of the database pool")
	bare := recallQ(t, mem, scope, memory.Query{Text: "latency", Strategy: memory.Hybrid})
	if _, err := mem.Feedback(t.Context(), scope, id, 5); err != nil {
		t.Fatal(err)
	}
	kw := recallQ(t, mem, scope, memory.Query{Text: "latency", Strategy: memory.Keyword})
	hy := recallQ(t, mem, scope, memory.Query{Text: "latency", Strategy: memory.Hybrid})
	if got, want := signalOf(t, hy[0], memory.Keyword).Score, kw[0].Signals[0].Score; got != want {
		t.Errorf("hybrid keyword signal score = %v, want the keyword ranking's %v", got, want)
	}
	// Adding and taking back the weight may move the float by an ulp.
	if got, want := signalOf(t, hy[0], memory.Semantic).Score, signalOf(t, bare[0], memory.Semantic).Score; math.Abs(float64(got-want)) > 1e-5 {
		t.Errorf("hybrid semantic signal score = %v after feedback, want the cosine %v it had before", got, want)
	}
	if got := signalOf(t, hy[0], memory.FeedbackRank).Score; got != 5 {
		t.Errorf("feedback signal score = %v, want the weight 5", got)
	}
}
