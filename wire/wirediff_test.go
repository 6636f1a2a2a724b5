package wire_test

import (
	"bufio"
	"bytes"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/fxamacker/cbor/v2"

	"github.com/lasergo/laser/wire"
)

// TestWireDiff is the differential test against the reference's decoder:
// tools/wireoracle decodes, validates and re-encodes each input with the
// published laser-wire crate, and every answer must equal ours, save the
// refusals docs/wire.md documents. LASER_WIRE_ORACLE names the oracle's
// binary (make wirediff builds it), LASER_WIRE_DIFF_COUNT the number of
// mutated inputs (default 5000) and LASER_WIRE_DIFF_SEED the RNG seed.
func TestWireDiff(t *testing.T) {
	path := os.Getenv("LASER_WIRE_ORACLE")
	if path == "" {
		t.Skip("LASER_WIRE_ORACLE is not set: `make wirediff` builds tools/wireoracle and runs this test against it")
	}
	count := envInt(t, "LASER_WIRE_DIFF_COUNT", 5000)
	seed := envInt(t, "LASER_WIRE_DIFF_SEED", 1)
	t.Logf("seed %d, %d mutations (LASER_WIRE_DIFF_SEED, LASER_WIRE_DIFF_COUNT)", seed, count)
	o := startOracle(t, path)
	rng := rand.New(rand.NewPCG(uint64(seed), 0x5eed))

	fixtures := fixtureInputs(t)
	built := apiInputs(rng, max(count/10, 200))
	var seeds []diffInput
	for _, in := range append(append([]diffInput(nil), fixtures...), built...) {
		if it, n, err := parseItem(in.data, 0); err == nil && n == len(in.data) {
			in.tree = it
			seeds = append(seeds, in)
		}
	}
	m := &mutator{rng: rng}
	mutated := make([]diffInput, count)
	for k := range mutated {
		s := seeds[rng.IntN(len(seeds))]
		mutated[k] = diffInput{mode: s.mode, data: m.mutate(s.tree), origin: "mutation of " + s.origin}
	}

	var st diffStats
	for _, set := range []struct {
		name   string
		inputs []diffInput
	}{{"fixtures", fixtures}, {"the issue's cases", issueInputs(t)}, {"built through the API", built}, {"mutations", mutated}} {
		st.run(t, o, set.name, set.inputs)
	}
	for _, name := range []string{"two-byte simple value", "nested indefinite chunk", "ambiguous enum", "duplicate metadata key"} {
		if st.documented[name] == 0 {
			t.Errorf("the reference no longer accepts what docs/wire.md says it does (%s): update the list", name)
		}
	}
	t.Logf("%d inputs: %d accepted by both (same bytes and verdict), %d rejected by both, %d refused on purpose %v",
		st.total, st.accepted, st.rejected, st.documentedTotal(), st.documented)
	t.Logf("validation verdicts of the accepted inputs (- outside envelopes): %v", st.verdicts)
	if st.accepted == 0 || st.rejected == 0 {
		t.Errorf("the inputs exercise one side only: %d accepted, %d rejected", st.accepted, st.rejected)
	}
}

func envInt(t *testing.T, name string, def int) int {
	t.Helper()
	s := os.Getenv(name)
	if s == "" {
		return def
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 0 {
		t.Fatalf("%s=%q is not a count", name, s)
	}
	return n
}

// diffInput is one payload and the mode both decoders read it in:
// envelope, deadletter, errorbody, signature, card or bodyref.
type diffInput struct {
	mode   string
	data   []byte
	origin string
	tree   *item // a seed's parse, for mutation
}

// fixtureModes maps a fixture's name prefix to the mode it is read in
// (TestFixtures reads them alike); the rest are envelopes.
var fixtureModes = [][2]string{
	{"agent_dead_letter", "deadletter"}, {"agent_error_body", "errorbody"}, {"agent_signature", "signature"},
	{"agent_card", "card"}, {"agent_body_ref", "bodyref"},
}

// fixtureInputs are the AGDX fixtures of the agent runtime, each in the mode
// its name says, a record fixture's payload, and the error fixture's body.
func fixtureInputs(t *testing.T) []diffInput {
	fx := agdxFixtures(t)
	var out []diffInput
	for _, name := range sortedNames(fx) {
		if notAgentRuntime(name) {
			continue
		}
		in := diffInput{mode: "envelope", data: fx[name], origin: name}
		for _, fm := range fixtureModes {
			if strings.HasPrefix(name, fm[0]) {
				in.mode = fm[1]
			}
		}
		if strings.HasPrefix(name, "agent_record") {
			var rec testRecord
			if err := cbor.Unmarshal(fx[name], &rec); err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			in.data = rec.Payload
		}
		out = append(out, in)
		if env, err := wire.DecodeEnvelope(in.data); err == nil && env.Kind == wire.KindError {
			out = append(out, diffInput{mode: "errorbody", data: env.Body, origin: name + " body"})
		}
	}
	return out
}

// issueInputs are the minimal cases of issue 32 and the documented
// refusals, so every run checks the reference still reads them as the
// regression tests (reference_test.go) and docs/wire.md say.
func issueInputs(t *testing.T) []diffInput {
	var out []diffInput
	add := func(mode string, b []byte) {
		out = append(out, diffInput{mode: mode, data: b, origin: fmt.Sprintf("case %d", len(out)+1)})
	}
	for _, h := range []string{
		"a17f62636f61646165ff06", "a264636f6465066178f0", "a264636f6465066664657461696ca1616bc101",
		"a264636f6465066664657461696cc1f6", "a264636f64650661787f61c361a9ff", "a164636f6465c206", "a164636f6465c306",
		"a164636f6465c24106", "a264636f6465066664657461696ca1616b43616263", "a264636f6465066664657461696ca1616bf97c01",
		"a264636f64650669726574727961626c65f815", "a264636f646506676d6573736167657f7f6161ffff",
	} {
		add("errorbody", unhex(t, h))
	}
	add("deadletter", deadLetterWith(t, "5f4a000000000000000000004a00000000000000000000ff", "4170"))
	add("deadletter", deadLetterWith(t, "54"+strings.Repeat("00", 20), "d8184170"))
	for _, kv := range [][2]string{
		{"kind", "7f626576636e74ff"}, {"conversation", "5f480102030405060708480910111213141516ff"},
		{"metadata", "a1616bc101"}, {"body", "d8184170"}, {"metadata", "a2616b01616b02"},
	} {
		add("envelope", eventWith(t, kv[0], kv[1]))
	}
	smuggled := eventWith(t, "kind", "a1656576656e7464746f6f6c63616263")
	smuggled[0]++
	add("envelope", smuggled)
	tags := append(unhex(t, "a264636f6465066178"), bytes.Repeat([]byte{0xc1}, wire.MaxNestingDepth)...)
	add("errorbody", append(tags, 0x00))
	return out
}

// ---- the oracle ----

// oracle is the running tools/wireoracle: one question a line on its stdin,
// one answer a line on its stdout.
type oracle struct {
	in  io.WriteCloser
	out *bufio.Reader
}

func startOracle(t *testing.T, path string) *oracle {
	t.Helper()
	if abs, err := filepath.Abs(path); err == nil {
		path = abs
	}
	cmd := exec.Command(path)
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatalf("start the oracle %s: %v", path, err)
	}
	t.Cleanup(func() {
		in.Close()
		if err := cmd.Wait(); err != nil {
			t.Errorf("oracle exited: %v", err)
		}
	})
	return &oracle{in: in, out: bufio.NewReaderSize(out, 1<<20)}
}

// ask returns the oracle's answer to each input, in order. The questions
// are written from another goroutine, so neither pipe can fill up and stall
// the other.
func (o *oracle) ask(t *testing.T, inputs []diffInput) []string {
	t.Helper()
	written := make(chan error, 1)
	go func() {
		w := bufio.NewWriterSize(o.in, 1<<20)
		for _, in := range inputs {
			fmt.Fprintf(w, "%s %x\n", in.mode, in.data)
		}
		written <- w.Flush()
	}()
	answers := make([]string, len(inputs))
	for k := range answers {
		line, err := o.out.ReadString('\n')
		if err != nil {
			t.Fatalf("the oracle stopped answering after %d of %d: %v", k, len(inputs), err)
		}
		answers[k] = strings.TrimSuffix(line, "\n")
	}
	if err := <-written; err != nil {
		t.Fatalf("write to the oracle: %v", err)
	}
	return answers
}

// ---- our side ----

// ourAnswer decodes in as the oracle does and answers in its format: "ok
// <re-encoded hex> <verdict>", "err documented:<refusal>" or "err <error>".
func ourAnswer(in diffInput) string {
	var out []byte
	var err error
	verdict := "-"
	switch in.mode {
	case "envelope":
		var env *wire.Envelope
		if env, err = wire.DecodeEnvelope(in.data); err == nil {
			out, err = env.Marshal()
			verdict = referenceVerdict(wire.Validate(env))
		}
	case "deadletter":
		var d *wire.DeadLetter
		if d, err = wire.DecodeDeadLetter(in.data); err == nil {
			out, err = d.Marshal()
		}
	case "errorbody":
		var b *wire.ErrorBody
		if b, err = wire.DecodeErrorBody(in.data); err == nil {
			out, err = b.Marshal()
		}
	case "signature":
		var s *wire.Signature
		if s, err = wire.DecodeSignature(in.data); err == nil {
			out, err = s.Marshal()
			verdict = validOrNot(s.Validate())
		}
	case "card":
		var c *wire.AgentCard
		if c, err = wire.DecodeAgentCard(in.data); err == nil {
			out, err = c.Marshal()
			verdict = validOrNot(c.Validate())
		}
	case "bodyref":
		var r *wire.BodyRef
		if r, err = wire.DecodeBodyRef(in.data); err == nil {
			out, err = r.Marshal()
			verdict = validOrNot(r.Validate())
		}
	default:
		err = fmt.Errorf("unknown mode %q", in.mode)
	}
	if err != nil {
		if name := wire.DocumentedRefusal(err); name != "" {
			return "err documented:" + name
		}
		return "err " + err.Error()
	}
	return "ok " + hex.EncodeToString(out) + " " + verdict
}

func validOrNot(err error) string {
	if err != nil {
		return "invalid"
	}
	return "valid"
}

// referenceVerdict renders a Validate result as the oracle renders the
// reference's: the rule and the reference's name for the field.
func referenceVerdict(err error) string {
	if err == nil {
		return "valid"
	}
	var ve *wire.ValidateError
	if !errors.As(err, &ve) {
		return "error:" + err.Error()
	}
	rule := map[wire.Rule]string{wire.Missing: "missing", wire.Forbidden: "forbidden", wire.TooLarge: "too_large", wire.Invalid: "invalid"}[ve.Rule]
	field := ve.Field
	switch {
	case field == "metadata entries":
		field = "metadata"
	case strings.HasPrefix(field, "metadata key "):
		field = "metadata_key"
	case strings.HasPrefix(field, "metadata value "):
		field = "metadata_value"
	case field == "signature" && strings.Contains(ve.Reason, "key_id"):
		field = "key_id" // the reference names the capsule's field
	case field == "signature":
		field = "bytes"
	}
	return rule + ":" + field
}

// ---- comparing ----

// outcome classifies a pair of answers: "" when they agree, "documented:…"
// for a refusal docs/wire.md lists, else what differs.
func outcome(ref, ours string) string {
	refOK, oursOK := strings.HasPrefix(ref, "ok "), strings.HasPrefix(ours, "ok ")
	switch {
	case strings.HasPrefix(ref, "err panic") || strings.HasPrefix(ref, "err input"):
		return "the oracle failed"
	case refOK && oursOK && ref == ours:
		return ""
	case refOK && oursOK:
		return "both accept, answers differ"
	case !refOK && !oursOK:
		return ""
	case refOK && strings.HasPrefix(ours, "err documented:"):
		return strings.TrimPrefix(ours, "err ")
	case refOK:
		return "the reference accepts, we reject"
	}
	return "we accept, the reference rejects"
}

type diffStats struct {
	total, accepted, rejected int
	documented                map[string]int
	verdicts                  map[string]int // of the inputs both accept, by validation verdict
	reported                  int
}

func (st *diffStats) documentedTotal() int {
	n := 0
	for _, c := range st.documented {
		n += c
	}
	return n
}

// maxReported bounds the disagreements shrunk and printed per run.
const maxReported = 12

func (st *diffStats) run(t *testing.T, o *oracle, set string, inputs []diffInput) {
	t.Helper()
	const batch = 4096
	for start := 0; start < len(inputs); start += batch {
		chunk := inputs[start:min(start+batch, len(inputs))]
		refs := o.ask(t, chunk)
		for k, in := range chunk {
			ours := ourAnswer(in)
			st.total++
			switch why := outcome(refs[k], ours); {
			case why == "" && strings.HasPrefix(ours, "ok "):
				st.accepted++
				if st.verdicts == nil {
					st.verdicts = map[string]int{}
				}
				st.verdicts[ours[strings.LastIndexByte(ours, ' ')+1:]]++
			case why == "":
				st.rejected++
			case strings.HasPrefix(why, "documented:"):
				if st.documented == nil {
					st.documented = map[string]int{}
				}
				st.documented[strings.TrimPrefix(why, "documented:")]++
			default:
				st.reported++
				if st.reported > maxReported {
					t.Fail()
					continue
				}
				small := shrink(t, o, in, why)
				t.Errorf("%s (%s, %s): %s\n  input   %s %x\n  minimal %s %x\n  reference: %s\n  ours:      %s",
					set, in.origin, in.mode, why, in.mode, in.data, small.mode, small.data, o.ask(t, []diffInput{small})[0], ourAnswer(small))
			}
		}
	}
	if st.reported > maxReported {
		t.Errorf("%d disagreements in all, the first %d shown", st.reported, maxReported)
	}
}

// shrink makes in smaller for as long as the two decoders still disagree
// the same way, and returns the smallest input found: first by structure
// (dropping map entries and array items, unwrapping tags, halving strings)
// while the input parses, then by deleting byte ranges of halving size.
func shrink(t *testing.T, o *oracle, in diffInput, why string) diffInput {
	t.Helper()
	best := in
	// first returns the first candidate that still disagrees as in does.
	first := func(cands []diffInput) (diffInput, bool) {
		refs := o.ask(t, cands)
		for k, c := range cands {
			if outcome(refs[k], ourAnswer(c)) == why {
				return c, true
			}
		}
		return diffInput{}, false
	}
	for round := 0; round < 500; round++ {
		root, n, err := parseItem(best.data, 0)
		if err != nil || n != len(best.data) {
			break
		}
		c, ok := first(smallerTrees(best.mode, root))
		if !ok {
			break
		}
		best = c
	}
	for size := len(best.data) / 2; size >= 1; {
		var cands []diffInput
		for start := 0; start+size <= len(best.data); start++ {
			c := append(append([]byte(nil), best.data[:start]...), best.data[start+size:]...)
			cands = append(cands, diffInput{mode: best.mode, data: c})
		}
		if c, ok := first(cands); ok {
			best, size = c, min(size, len(c.data)/2)
		} else {
			size /= 2
		}
	}
	return best
}

// smallerTrees returns encodings of root each one step smaller: an entry,
// item or tag removed, or a string's content halved.
func smallerTrees(mode string, root *item) []diffInput {
	var out []diffInput
	emit := func() { out = append(out, diffInput{mode: mode, data: root.encode(nil)}) }
	for _, s := range slots(&root) {
		it := *s.at
		if p := s.parent; p != nil && (p.major == mArray || p.major == mMap) {
			for k := range p.kids {
				if p.kids[k] != it || (p.major == mMap && k%2 != 0) {
					continue
				}
				drop := 1
				if p.major == mMap {
					drop = 2
				}
				saved := p.kids
				p.kids = append(append([]*item(nil), saved[:k]...), saved[k+drop:]...)
				emit()
				p.kids = saved
				break
			}
		}
		if it.major == mTag && len(it.kids) == 1 {
			*s.at = it.kids[0]
			emit()
			*s.at = it
		}
		if (it.major == mBytes || it.major == mText) && len(it.data) > 1 && !it.indef {
			saved := it.data
			it.data = saved[:len(saved)/2]
			emit()
			it.data = saved
		}
	}
	return out
}

// ---- values built through the API ----

// apiInputs builds n payloads through the package's own constructors and
// encoders: envelopes of every kind with random optional fields (valid or
// not), dead letters and error bodies.
func apiInputs(rng *rand.Rand, n int) []diffInput {
	g := &builder{rng: rng}
	out := make([]diffInput, 0, n)
	for len(out) < n {
		var b []byte
		var err error
		mode := "envelope"
		switch rng.IntN(12) {
		case 0:
			mode = "deadletter"
			b, err = g.deadLetter().Marshal()
		case 1:
			mode = "errorbody"
			b, err = g.errorBody().Marshal()
		case 2:
			mode = "signature"
			b, err = g.signature().Marshal()
		case 3:
			mode = "card"
			b, err = g.card().Marshal()
		case 4:
			mode = "bodyref"
			b, err = g.bodyRef().Marshal()
		default:
			b, err = g.envelope().Marshal()
		}
		if err == nil {
			out = append(out, diffInput{mode: mode, data: b, origin: "built " + mode})
		}
	}
	return out
}

type builder struct{ rng *rand.Rand }

func (g *builder) maybe() bool { return g.rng.IntN(3) == 0 }

func (g *builder) id() *wire.ID {
	id := wire.IDFromUint128(g.rng.Uint64(), g.rng.Uint64())
	return &id
}

func (g *builder) text(n int) string {
	pool := []string{"a", "tool", "é", "日本", "🙂", "order-1", " ", "x"}
	var b strings.Builder
	for range 1 + g.rng.IntN(n) {
		b.WriteString(pool[g.rng.IntN(len(pool))])
	}
	return b.String()
}

func ptr[T any](v T) *T { return &v }

func (g *builder) u64() uint64 {
	return []uint64{0, 1, 23, 24, 255, 256, 65536, 1 << 32, 1<<64 - 1, g.rng.Uint64()}[g.rng.IntN(10)]
}

func (g *builder) value(depth int) wire.Value {
	switch g.rng.IntN(8) {
	case 0:
		return wire.StrValue(g.text(4))
	case 1:
		return wire.IntValue(int64(g.rng.Uint64()))
	case 2:
		return wire.UintValue(g.u64())
	case 3:
		bits := []uint64{0, 1 << 63, 0x3ff8000000000000, 0x7ff0000000000000, 0x7ff8000000000000, 0x7ff0000000000001,
			0x7ff8000000000001, 0x3fb999999999999a, math.Float64bits(1e300), g.rng.Uint64()}
		return wire.FloatValue(math.Float64frombits(bits[g.rng.IntN(len(bits))]))
	case 4:
		return wire.BoolValue(g.maybe())
	case 5:
		return wire.NullValue()
	case 6:
		if depth < 3 {
			var items []wire.Value
			for range g.rng.IntN(4) {
				items = append(items, g.value(depth+1))
			}
			return wire.ListValue(items...)
		}
	}
	return wire.IntValue(int64(g.rng.IntN(100)) - 50)
}

// metadata is a few entries, or one time in eight a map next to one of the
// caps Validate checks (entries, key and value size, total size).
func (g *builder) metadata() wire.Metadata {
	m := wire.Metadata{}
	if g.rng.IntN(8) != 0 {
		for range g.rng.IntN(4) {
			m.Set([]string{wire.MetaRun, wire.MetaFence, wire.MetaRole, "k", g.text(3)}[g.rng.IntN(5)], g.value(0))
		}
		return m
	}
	near := func(limit int) int { return limit - 1 + g.rng.IntN(3) }
	switch g.rng.IntN(4) {
	case 0:
		for k := range near(wire.MaxMetadataEntries) {
			m.Set(strconv.Itoa(k), wire.IntValue(int64(k)))
		}
	case 1:
		m.Set(strings.Repeat("k", near(wire.MaxMetadataKeyBytes)), wire.BoolValue(true))
	case 2:
		m.Set("v", wire.StrValue(strings.Repeat("v", near(wire.MaxMetadataValueSize))))
		if g.maybe() {
			items := make([]wire.Value, near(wire.MaxMetadataValueSize)/10)
			for k := range items {
				items[k] = wire.IntValue(int64(k))
			}
			m.Set("list", wire.ListValue(items...))
		}
	default:
		for k := range 8 {
			m.Set(strconv.Itoa(k), wire.StrValue(strings.Repeat("t", near(wire.MaxMetadataTotalBytes/8)-1)))
		}
	}
	return m
}

// capped is a text of about limit bytes (one short, at, or one over).
func (g *builder) capped(limit int) string { return strings.Repeat("o", limit-1+g.rng.IntN(3)) }

func (g *builder) envelope() *wire.Envelope {
	kinds := []wire.Kind{wire.KindCommand, wire.KindResponse, wire.KindEvent, wire.KindChunk, wire.KindStatus, wire.KindError}
	e := &wire.Envelope{Kind: kinds[g.rng.IntN(len(kinds))], Conversation: *g.id(), Source: wire.AgentID("agent-" + g.text(2))}
	if e.Kind != wire.KindChunk || g.maybe() {
		e.Record = g.id()
	}
	if g.rng.IntN(4) != 0 {
		e.Correlation = g.id()
	}
	if e.Kind == wire.KindChunk || g.rng.IntN(8) == 0 {
		e.Channel = g.id()
		e.Sequence = ptr(uint64(g.rng.IntN(3)))
	}
	if g.maybe() {
		e.Target = ptr(wire.AgentID("target-" + g.text(2)))
	}
	if g.maybe() {
		e.Cause = g.id()
		e.CauseAt = &wire.LogPosition{StreamID: g.rng.Uint32(), TopicID: 2, PartitionID: 3, Offset: g.u64()}
	}
	if g.maybe() {
		e.IdempotencyKey = ptr(wire.IdempotencyKey("key-" + g.text(3)))
	}
	if g.maybe() {
		e.DeadlineMicros = ptr(g.u64())
	}
	e.Last = g.maybe()
	if g.maybe() {
		e.FinishReason = ptr("stop")
	}
	if e.Kind == wire.KindStatus || g.maybe() {
		e.TaskState = ptr(wire.TaskState(g.rng.IntN(12)))
	}
	if g.rng.IntN(3) != 0 {
		ops := []string{wire.OperationTask, wire.OperationCard, wire.OperationProgress, wire.OperationChat, wire.OperationReasoning, wire.OperationToolArgs, "execute_tool", g.text(3)}
		e.Operation = ptr(ops[g.rng.IntN(len(ops))])
	}
	if g.maybe() {
		e.Tool = ptr(g.text(3))
	}
	if g.rng.IntN(10) == 0 {
		field := []**string{&e.Operation, &e.Tool, &e.FinishReason}[g.rng.IntN(3)]
		*field = ptr(g.capped(wire.MaxTextFieldBytes))
	}
	if g.rng.IntN(10) == 0 {
		e.Source = wire.AgentID(g.capped(wire.MaxAgentIDBytes)) // Marshal refuses one over
	}
	if g.maybe() {
		e.Usage = &wire.TokenUsage{InputTokens: g.u64(), OutputTokens: g.u64()}
		if g.maybe() {
			e.Usage.ReasoningOutputTokens = ptr(g.u64())
			e.Usage.CacheReadInputTokens = ptr(g.u64())
		}
		if g.maybe() {
			e.Usage.CacheCreationInputTokens = ptr(g.u64())
		}
	}
	if g.maybe() {
		e.Metadata = g.metadata()
	}
	if g.rng.IntN(8) == 0 {
		e.MustUnderstand = g.u64()
	}
	if g.rng.IntN(6) != 0 {
		e.Body = []byte(g.text(6))
	}
	if g.rng.IntN(20) == 0 {
		e.Body = make([]byte, 4095+g.rng.IntN(3)) // the reference reads bytes past 4 KiB another way
	}
	if g.rng.IntN(5) == 0 {
		e.Signature = g.signature()
	}
	return e
}

// signature is an Ed25519-shaped capsule, sometimes of another scheme or
// with lengths its scheme does not allow.
func (g *builder) signature() *wire.Signature {
	s := &wire.Signature{Scheme: uint8(g.rng.IntN(3)), KeyID: make([]byte, 8), Bytes: make([]byte, 64)}
	if g.maybe() {
		s.KeyID = make([]byte, g.rng.IntN(10))
	}
	if g.rng.IntN(6) == 0 {
		s.Bytes = make([]byte, 63+g.rng.IntN(3))
	}
	if g.maybe() {
		s.Context = wire.NewSignatureContext(wire.ContentType(g.rng.IntN(5)), g.rng.Uint32())
	}
	return s
}

func (g *builder) card() *wire.AgentCard {
	c := &wire.AgentCard{Name: g.text(3)}
	if g.maybe() {
		c.Version = g.text(2)
	}
	if g.rng.IntN(10) == 0 {
		c.Name = g.capped(wire.MaxCardTextBytes)
	}
	for range g.rng.IntN(4) {
		d := wire.CapabilityDescriptor{SkillID: g.text(3)}
		if g.maybe() {
			d.Input = wire.ContentByType(wire.ContentType(g.rng.IntN(5)))
		}
		if g.maybe() {
			d.CostClass = ptr(uint8(g.rng.IntN(256)))
			d.MaxConcurrency = ptr(uint32(g.u64()))
		}
		if g.maybe() {
			d.Health = ptr(wire.Health(g.rng.IntN(5)))
			d.Load = ptr(uint16(g.rng.IntN(1100)))
		}
		c.Capabilities = append(c.Capabilities, d)
	}
	if g.maybe() {
		c.TTLMicros = ptr(g.u64())
	}
	return c
}

func (g *builder) bodyRef() *wire.BodyRef {
	r := &wire.BodyRef{Reference: "s3://bucket/" + g.text(4), SizeBytes: g.u64(), SHA256: make([]byte, wire.BodyRefDigestLen)}
	if g.rng.IntN(5) == 0 {
		r.SHA256 = make([]byte, g.rng.IntN(40))
	}
	if g.rng.IntN(8) == 0 {
		r.Reference = g.capped(wire.MaxBodyRefBytes)
	}
	if g.maybe() {
		r.Encryption = ptr(uint8(g.rng.IntN(3)))
	}
	return r
}

func (g *builder) deadLetter() *wire.DeadLetter {
	d := &wire.DeadLetter{
		Source:   wire.LogPosition{StreamID: g.rng.Uint32(), TopicID: g.rng.Uint32(), PartitionID: 1, Offset: g.u64()},
		Reason:   wire.DeadLetterReason(g.rng.IntN(6)),
		Attempts: uint32(g.u64()),
		Payload:  []byte(g.text(8)),
	}
	if g.maybe() {
		d.Detail = ptr(g.text(5))
	}
	if g.maybe() {
		d.Payload = nil
	}
	return d
}

func (g *builder) errorBody() *wire.ErrorBody {
	b := &wire.ErrorBody{Code: wire.ErrorCode(g.rng.IntN(9)), Retryable: g.maybe()}
	if g.maybe() {
		b.Message = ptr(g.text(5))
	}
	if g.maybe() {
		b.Detail = g.metadata()
	}
	return b
}
