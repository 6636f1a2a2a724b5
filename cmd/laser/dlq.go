package main

import (
	"context"
	"encoding/json"
	"fmt"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/lasergo/laser/deadletter"
	"github.com/lasergo/laser/iggy"
	"github.com/lasergo/laser/runtime"
	"github.com/lasergo/laser/sign"
	"github.com/lasergo/laser/wire"
)

func (a *app) dlqCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "dlq",
		Short: "list, show and redrive dead-letter capsules",
		Long: `List, show and redrive dead-letter capsules.

CAPSULE is the capsule's position in the dead-letter topic, partition:offset,
as the first column of 'laser dlq list' prints it.`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return usagef("dlq needs a subcommand: list, show or redrive (see laser dlq --help)")
		},
	}
	cmd.AddCommand(a.dlqListCommand(), a.dlqShowCommand(), a.dlqRedriveCommand())
	return cmd
}

// capsule is one record of the dead-letter topic, decoded.
type capsule struct {
	Position runtime.Position
	// Timestamp is when the capsule was written (the record's, in µs).
	Timestamp uint64
	Capsule   *wire.DeadLetter
	Err       error // set when the record is not a capsule
	// Record is the capsule's record as read, for its signature.
	Record runtime.Incoming
}

// capsuleView is a capsule for people and --json.
type capsuleView struct {
	Capsule  string    `json:"capsule"`
	Time     time.Time `json:"time"`
	Reason   string    `json:"reason"`
	Attempts uint32    `json:"attempts"`
	// Source is "topic partition:offset" when the topic can be named, else
	// stream/topic/partition@offset by ids.
	Source    string `json:"source"`
	SourceIDs string `json:"source_ids"`
	Detail    string `json:"detail,omitempty"`
	// Redriven is where the original was republished, when it was.
	Redriven string `json:"redriven,omitempty"`
	Error    string `json:"error,omitempty"`
}

func (c capsule) view(src *sources) capsuleView {
	v := capsuleView{Capsule: c.Position.String(), Time: time.UnixMicro(int64(c.Timestamp)).UTC()}
	if c.Err != nil {
		v.Error = c.Err.Error()
		return v
	}
	d := c.Capsule
	v.Reason, v.Attempts, v.SourceIDs = d.Reason.String(), d.Attempts, d.Source.String()
	v.Source = src.name(d.Source)
	if d.Detail != nil {
		v.Detail = *d.Detail
	}
	return v
}

// viewer renders capsules with what the server knows beside them: the
// names of their source topics and the redrives recorded for them.
type viewer struct {
	src      *sources
	redriven map[string]string
}

func newViewer(ctx context.Context, t *iggy.Transport, dlq string) (*viewer, error) {
	src, err := loadSources(ctx, t)
	if err != nil {
		return nil, err
	}
	redriven, err := readRedrives(ctx, t, dlq)
	if err != nil {
		return nil, err
	}
	return &viewer{src: src, redriven: redriven}, nil
}

func (vw *viewer) view(c capsule) capsuleView {
	v := c.view(vw.src)
	v.Redriven = vw.redriven[v.Capsule]
	return v
}

// readCapsules returns every record of the dead-letter topic, decoded. A
// topic none of whose records is a capsule is refused: it is not a
// dead-letter topic.
func readCapsules(ctx context.Context, t *iggy.Transport, topic string) ([]capsule, error) {
	n, err := partitions(ctx, t, topic)
	if err != nil {
		return nil, err
	}
	var out []capsule
	good := 0
	for p := uint32(0); p < n; p++ {
		for from := uint64(0); ; {
			recs, err := t.ReadRange(ctx, topic, p, from, 500)
			if err != nil {
				return nil, fmt.Errorf("read %s partition %d: %w", topic, p, err)
			}
			if len(recs) == 0 {
				break
			}
			for i := range recs {
				d, err := wire.DecodeDeadLetter(recs[i].Payload)
				if err == nil {
					good++
				}
				out = append(out, capsule{Position: recs[i].Position, Timestamp: recs[i].Timestamp, Capsule: d, Err: err, Record: recs[i]})
			}
			from = recs[len(recs)-1].Offset + 1
		}
	}
	if len(out) > 0 && good == 0 {
		return nil, fmt.Errorf("topic %s holds %d records and none is a dead-letter capsule: is it a dead-letter topic? (--topic names one; default %s)", topic, len(out), runtime.TopicDLQ)
	}
	return out, nil
}

func (a *app) dlqListCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "list",
		Short: "list dead-letter capsules: position, time, reason, attempts, source, redrive, detail",
		Args:  noArgs,
	}
	sf := a.serverFlags(cmd)
	topic := cmd.Flags().String("topic", runtime.TopicDLQ, "dead-letter topic")
	cmd.RunE = func(cmd *cobra.Command, _ []string) error {
		ctx := cmd.Context()
		t, err := sf.dial(ctx)
		if err != nil {
			return err
		}
		defer t.Close()
		caps, err := readCapsules(ctx, t, *topic)
		if err != nil {
			return err
		}
		vw, err := newViewer(ctx, t, *topic)
		if err != nil {
			return err
		}
		views := make([]capsuleView, len(caps))
		for i, c := range caps {
			views[i] = vw.view(c)
		}
		if a.json {
			return a.printJSON(views)
		}
		if len(views) == 0 {
			fmt.Fprintf(a.stdout, "no dead letters in %s\n", *topic)
			return nil
		}
		tw := tabwriter.NewWriter(a.stdout, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "CAPSULE\tTIME (UTC)\tREASON\tATTEMPTS\tSOURCE\tREDRIVEN\tDETAIL")
		for _, v := range views {
			when := v.Time.Format(time.DateTime)
			if v.Error != "" {
				fmt.Fprintf(tw, "%s\t%s\t-\t-\t-\t-\tnot a capsule: %s\n", v.Capsule, when, shown(v.Error))
				continue
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%s\t%s\t%s\n", v.Capsule, when, shown(v.Reason), v.Attempts, shown(v.Source), shown(orDash(v.Redriven)), shown(truncate(v.Detail, 80)))
		}
		return tw.Flush()
	}
	return cmd
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return "yes, to " + s
}

// parsePosition reads "partition:offset".
func parsePosition(s string) (runtime.Position, error) {
	id, err := wire.ParseMessageID(s)
	if err != nil {
		return runtime.Position{}, usagef("capsule %q: want partition:offset as the first column of laser dlq list prints it, e.g. 0:12", s)
	}
	return runtime.Position{Partition: id.Partition, Offset: id.Offset}, nil
}

// findCapsule reads the capsule at pos.
func findCapsule(ctx context.Context, t *iggy.Transport, topic string, pos runtime.Position) (capsule, error) {
	rec, err := readAt(ctx, t, topic, pos)
	if err != nil {
		return capsule{}, err
	}
	d, err := wire.DecodeDeadLetter(rec.Payload)
	if err != nil {
		return capsule{}, fmt.Errorf("record %s in %s is not a dead-letter capsule: %w", pos, topic, err)
	}
	return capsule{Position: pos, Timestamp: rec.Timestamp, Capsule: d, Record: *rec}, nil
}

// shownCapsule is 'dlq show' output.
type shownCapsule struct {
	capsuleView
	Payload recordView `json:"payload"`
}

func (a *app) dlqShowCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "show CAPSULE",
		Short: "show one capsule decoded: envelope, body as text or hex",
		Args:  exactArgs(1, "one CAPSULE position, partition:offset"),
	}
	sf := a.serverFlags(cmd)
	topic := cmd.Flags().String("topic", runtime.TopicDLQ, "dead-letter topic")
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		pos, err := parsePosition(args[0])
		if err != nil {
			return err
		}
		ctx := cmd.Context()
		t, err := sf.dial(ctx)
		if err != nil {
			return err
		}
		defer t.Close()
		c, err := findCapsule(ctx, t, *topic, pos)
		if err != nil {
			return err
		}
		vw, err := newViewer(ctx, t, *topic)
		if err != nil {
			return err
		}
		d := c.Capsule
		// The payload is shown as the consumer saw it: AGDX when it decodes as
		// an envelope (the capsule does not keep the original headers), else raw.
		original := runtime.Incoming{Position: runtime.Position{Partition: d.Source.PartitionID, Offset: d.Source.Offset}, Payload: d.Payload}
		if env, err := wire.DecodeEnvelope(d.Payload); err == nil {
			h := wire.EnvelopeHeaders(env, wire.ContentRaw)
			h.Del(wire.HeaderContentType)
			original.Headers, _ = h.Encode() // headers that do not encode are left out
		}
		out := shownCapsule{capsuleView: vw.view(c), Payload: describe("source", &original)}
		if a.json {
			return a.printJSON(out)
		}
		w := a.stdout
		fmt.Fprintf(w, "capsule   %s in %s\ntime      %s UTC\nreason    %s\nattempts  %d\nsource    %s\n", out.Capsule, *topic, out.Time.Format(time.DateTime), shown(out.Reason), out.Attempts, shown(out.Source))
		if out.Detail != "" {
			fmt.Fprintf(w, "detail    %s\n", shown(out.Detail))
		}
		if out.Redriven != "" {
			fmt.Fprintf(w, "redriven  to %s\n", shown(out.Redriven))
		}
		p := out.Payload
		if p.Shape == "agdx" {
			fmt.Fprintf(w, "envelope  %s", shown(p.Kind))
			if p.Operation != "" {
				fmt.Fprintf(w, " %s", shown(p.Operation))
			}
			fmt.Fprintf(w, "\n  from          %s\n  to            %s\n  conversation  %s\n", shown(p.From), shown(orAny(p.To)), shown(p.Conversation))
			if p.Correlation != "" {
				fmt.Fprintf(w, "  correlation   %s\n", shown(p.Correlation))
			}
			if p.Idempotency != "" {
				fmt.Fprintf(w, "  idempotency   %s\n", shown(p.Idempotency))
			}
		}
		fmt.Fprintf(w, "payload   %d bytes\nbody (%s)\n%s\n", len(d.Payload), p.BodyEncoding, shownText(p.Body))
		return nil
	}
	return cmd
}

// redriveResult is one line of 'dlq redrive' output.
type redriveResult struct {
	Capsule     string `json:"capsule"`
	Source      string `json:"source"`
	Republished string `json:"republished,omitempty"`
	// Skipped says where an earlier redrive (in the ledger) republished the
	// capsule, which this run therefore left alone.
	Skipped string `json:"skipped,omitempty"`
	Error   string `json:"error,omitempty"`
}

func (a *app) dlqRedriveCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "redrive CAPSULE... | --all",
		Short: "republish the original messages to the topics they came from",
		Long: `Republish the original messages of capsules to the topics they came from
(named from the capsule's source ids), with their headers and payload
verbatim, except that a plain message's idempotency key is re-keyed so the
copy passes dedup. Each redrive is recorded in TOPIC.redriven, which
'laser dlq list' reads to mark redriven capsules.

Only capsules signed by the consumer that parked them are redriven (--all
included): a forged capsule would republish any record it names with your
credentials and a fresh idempotency key. --keys names the enrolled keys,
one "PRINCIPAL KIND HEXPUBLICKEY" a line; consumers sign their capsules
when they have a SigningKey. --unverified redrives unsigned capsules too,
for logs whose consumers do not sign.`,
	}
	sf := a.serverFlags(cmd)
	topic := cmd.Flags().String("topic", runtime.TopicDLQ, "dead-letter topic")
	all := cmd.Flags().Bool("all", false, "redrive every capsule in the dead-letter topic")
	again := cmd.Flags().Bool("again", false, "redrive capsules the ledger says were redriven already")
	keysFile := cmd.Flags().String("keys", "", "file of enrolled keys that capsule signatures are checked with")
	unverified := cmd.Flags().Bool("unverified", false, "redrive capsules without checking their signatures")
	cmd.Args = func(cmd *cobra.Command, args []string) error {
		if *all == (len(args) > 0) {
			return usagef("dlq redrive takes CAPSULE positions or --all, not both and not neither (see --help)")
		}
		if (*keysFile == "") == !*unverified {
			return usagef("dlq redrive needs --keys FILE to verify capsule signatures, or --unverified, not both (see --help)")
		}
		return nil
	}
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		var positions []runtime.Position
		for _, s := range args {
			pos, err := parsePosition(s)
			if err != nil {
				return err
			}
			positions = append(positions, pos)
		}
		var keys *sign.Registry
		if *keysFile != "" {
			var err error
			if keys, err = loadKeys(*keysFile); err != nil {
				return err
			}
		}
		ctx := cmd.Context()
		t, err := sf.dial(ctx)
		if err != nil {
			return err
		}
		defer t.Close()
		var caps []capsule
		if *all {
			if caps, err = readCapsules(ctx, t, *topic); err != nil {
				return err
			}
		} else {
			for _, pos := range positions {
				c, err := findCapsule(ctx, t, *topic, pos)
				if err != nil {
					c = capsule{Position: pos, Err: err}
				}
				caps = append(caps, c)
			}
		}
		src, err := loadSources(ctx, t)
		if err != nil {
			return err
		}
		done, err := readRedrives(ctx, t, *topic)
		if err != nil {
			return err
		}
		bar := a.newProgress(len(caps))
		failed := 0
		rd := redriver{t: t, src: src, done: done, keys: keys, topic: *topic, again: *again}
		for _, c := range caps {
			res := rd.redrive(ctx, c)
			if res.Error != "" {
				failed++
			}
			bar.add()
			if err := a.printRedrive(res); err != nil {
				return err
			}
		}
		bar.done()
		if failed > 0 {
			return fmt.Errorf("%d of %d capsules were not redriven", failed, len(caps))
		}
		return nil
	}
	return cmd
}

// verifyCapsule checks c's signature with keys (nil: --unverified).
func verifyCapsule(keys *sign.Registry, dlq string, c capsule) error {
	if keys == nil || c.Err != nil {
		return nil
	}
	if _, _, err := deadletter.Verify(keys, dlq, &c.Record); err != nil {
		return fmt.Errorf("not redriven: %w", err)
	}
	return nil
}

// redriveOne republishes the original record a capsule points at to the
// topic the capsule's source ids name (deadletter.Redrive: its
// headers and payload verbatim but for the re-keyed idempotency header). It
// returns "topic partition:offset" of the copy.
func redriveOne(ctx context.Context, t *iggy.Transport, src *sources, c capsule) (string, error) {
	if c.Err != nil {
		return "", c.Err
	}
	source, err := src.topic(c.Capsule.Source)
	if err != nil {
		return "", err
	}
	pos, err := deadletter.Redrive(ctx, runtime.NewClient(t, runtime.ClientConfig{}), source, c.Capsule)
	if err != nil {
		return "", fmt.Errorf("republish to %s: %w", source, err)
	}
	return fmt.Sprintf("%s %s", source, pos), nil
}

// redriver redrives capsules of one dead-letter topic, for the command and
// the console alike.
type redriver struct {
	t    *iggy.Transport
	src  *sources
	done map[string]string // the ledger: capsule → where it was republished
	// keys, when set, is what capsule signatures are verified with; nil
	// redrives unverified capsules (--unverified).
	keys  *sign.Registry
	topic string
	again bool // redrive what the ledger says was redriven already
}

// redrive republishes c's original unless the ledger has it (and again is
// unset) or its signature does not verify, and records the redrive.
func (rd *redriver) redrive(ctx context.Context, c capsule) redriveResult {
	res := redriveResult{Capsule: c.Position.String()}
	if c.Capsule != nil {
		res.Source = rd.src.name(c.Capsule.Source)
	}
	if to, ok := rd.done[res.Capsule]; ok && !rd.again {
		res.Skipped = to
		return res
	}
	err := verifyCapsule(rd.keys, rd.topic, c)
	var republished string
	if err == nil {
		republished, err = redriveOne(ctx, rd.t, rd.src, c)
	}
	if err == nil {
		res.Republished = republished
		err = recordRedrive(ctx, rd.t, rd.topic, redrive{Capsule: res.Capsule, Republished: republished})
	}
	if err != nil {
		res.Error = err.Error()
	}
	return res
}

// printRedrive writes one line of 'dlq redrive' output.
func (a *app) printRedrive(res redriveResult) error {
	switch {
	case a.json:
		return a.printJSON(res)
	case res.Error != "":
		fmt.Fprintf(a.stdout, "%s  FAILED: %s\n", res.Capsule, shown(res.Error))
	case res.Skipped != "":
		fmt.Fprintf(a.stdout, "%s  skipped: already redriven (republished at %s); --again redrives it once more\n", res.Capsule, shown(res.Skipped))
	default:
		fmt.Fprintf(a.stdout, "%s  source %s  republished at %s\n", res.Capsule, shown(res.Source), res.Republished)
	}
	return nil
}

// redrive is one record of the redrive ledger, TOPIC.redriven.
type redrive struct {
	Capsule     string `json:"capsule"`
	Republished string `json:"republished"`
}

func ledgerTopic(dlq string) string { return dlq + ".redriven" }

// recordRedrive appends r to the dead-letter topic's redrive ledger,
// creating it on first use.
func recordRedrive(ctx context.Context, t *iggy.Transport, dlq string, r redrive) error {
	body, err := json.Marshal(r)
	if err != nil {
		return err
	}
	if err := t.EnsureTopics(ctx, 1, ledgerTopic(dlq)); err != nil {
		return fmt.Errorf("republished, but recording it in %s failed: %w", ledgerTopic(dlq), err)
	}
	if _, err := t.Publish(ctx, ledgerTopic(dlq), runtime.Outgoing{Payload: body}); err != nil {
		return fmt.Errorf("republished, but recording it in %s failed: %w", ledgerTopic(dlq), err)
	}
	return nil
}

// readRedrives returns, by capsule position, where each redriven capsule's
// original was republished (the latest redrive wins).
func readRedrives(ctx context.Context, t *iggy.Transport, dlq string) (map[string]string, error) {
	out := make(map[string]string)
	n, err := t.Partitions(ctx, ledgerTopic(dlq))
	if err != nil {
		return out, nil // no ledger: nothing was redriven
	}
	for p := uint32(0); p < n; p++ {
		for from := uint64(0); ; {
			recs, err := t.ReadRange(ctx, ledgerTopic(dlq), p, from, 500)
			if err != nil {
				return nil, fmt.Errorf("read %s: %w", ledgerTopic(dlq), err)
			}
			if len(recs) == 0 {
				break
			}
			for _, rec := range recs {
				var r redrive
				if json.Unmarshal(rec.Payload, &r) == nil && r.Capsule != "" {
					out[r.Capsule] = r.Republished
				}
			}
			from = recs[len(recs)-1].Offset + 1
		}
	}
	return out, nil
}
