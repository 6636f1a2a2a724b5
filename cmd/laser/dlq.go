package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/lasergo/laser/runtime"
	"github.com/lasergo/laser/wire"
)

const dlqUsage = `Usage:
  laser dlq list [flags]
  laser dlq show [flags] CAPSULE
  laser dlq redrive [flags] CAPSULE... | --all

CAPSULE is the capsule's position in the dead-letter topic, partition:offset,
as 'laser dlq list' prints it. Run 'laser dlq SUBCOMMAND --help' for flags.
`

// runDLQ dispatches the dlq subcommands.
func runDLQ(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		return usagef("dlq needs a subcommand\n\n%s", dlqUsage)
	}
	switch args[0] {
	case "-h", "--help", "help":
		fmt.Fprint(stdout, dlqUsage)
		return nil
	case "list":
		return dlqList(ctx, args[1:], stdout)
	case "show":
		return dlqShow(ctx, args[1:], stdout)
	case "redrive":
		return dlqRedrive(ctx, args[1:], stdout, stderr)
	}
	return usagef("unknown dlq subcommand %q\n\n%s", args[0], dlqUsage)
}

// capsule is one dead letter as read from the dead-letter topic.
type capsule struct {
	Position runtime.Position
	Capsule  *wire.DeadLetter
	Err      error // set when the record is not a capsule
}

// capsuleView is a capsule for people and --json.
type capsuleView struct {
	Capsule  string `json:"capsule"`
	Reason   string `json:"reason"`
	Attempts uint32 `json:"attempts"`
	Source   string `json:"source"` // stream/topic/partition@offset
	Detail   string `json:"detail,omitempty"`
	Error    string `json:"error,omitempty"`
}

func (c capsule) view() capsuleView {
	v := capsuleView{Capsule: c.Position.String()}
	if c.Err != nil {
		v.Error = c.Err.Error()
		return v
	}
	d := c.Capsule
	v.Reason, v.Attempts, v.Source = d.Reason.String(), d.Attempts, d.Source.String()
	if d.Detail != nil {
		v.Detail = *d.Detail
	}
	return v
}

// readCapsules returns every record of the dead-letter topic, decoded.
func readCapsules(ctx context.Context, t runtime.Transport, topic string) ([]capsule, error) {
	n, err := t.Partitions(ctx, topic)
	if err != nil {
		return nil, fmt.Errorf("dead-letter topic %s: %w", topic, err)
	}
	var out []capsule
	for p := uint32(0); p < n; p++ {
		for from := uint64(0); ; {
			recs, err := t.ReadRange(ctx, topic, p, from, 500)
			if err != nil {
				return nil, err
			}
			if len(recs) == 0 {
				break
			}
			for i := range recs {
				d, err := wire.DecodeDeadLetter(recs[i].Payload)
				out = append(out, capsule{Position: recs[i].Position, Capsule: d, Err: err})
			}
			from = recs[len(recs)-1].Offset + 1
		}
	}
	return out, nil
}

func dlqList(ctx context.Context, args []string, stdout io.Writer) error {
	fs := newFlags("dlq list", "laser dlq list [flags]", stdout)
	var sf serverFlags
	sf.register(fs)
	topic := fs.String("topic", runtime.TopicDLQ, "dead-letter topic")
	asJSON := fs.Bool("json", false, "print a JSON array")
	if err := parse(fs, args); err != nil {
		return err
	}
	if fs.NArg() != 0 {
		return usagef("dlq list takes no arguments (see --help)")
	}
	t, err := sf.dial(ctx)
	if err != nil {
		return err
	}
	defer t.Close()
	caps, err := readCapsules(ctx, t, *topic)
	if err != nil {
		return err
	}
	views := make([]capsuleView, len(caps))
	for i, c := range caps {
		views[i] = c.view()
	}
	if *asJSON {
		return json.NewEncoder(stdout).Encode(views)
	}
	if len(views) == 0 {
		fmt.Fprintf(stdout, "no dead letters in %s\n", *topic)
		return nil
	}
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "CAPSULE\tREASON\tATTEMPTS\tSOURCE\tDETAIL")
	for _, v := range views {
		if v.Error != "" {
			fmt.Fprintf(tw, "%s\t-\t-\t-\tnot a capsule: %s\n", v.Capsule, v.Error)
			continue
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\t%s\t%s\n", v.Capsule, v.Reason, v.Attempts, v.Source, truncate(v.Detail, 80))
	}
	return tw.Flush()
}

// parsePosition reads "partition:offset".
func parsePosition(s string) (runtime.Position, error) {
	id, err := wire.ParseMessageID(s)
	if err != nil {
		return runtime.Position{}, usagef("capsule %q: want partition:offset, e.g. 0:12", s)
	}
	return runtime.Position{Partition: id.Partition, Offset: id.Offset}, nil
}

// findCapsule reads the capsule at pos.
func findCapsule(ctx context.Context, t runtime.Transport, topic string, pos runtime.Position) (*wire.DeadLetter, error) {
	recs, err := t.ReadRange(ctx, topic, pos.Partition, pos.Offset, 1)
	if err != nil {
		return nil, err
	}
	if len(recs) == 0 || recs[0].Offset != pos.Offset {
		return nil, fmt.Errorf("no record at %s in %s", pos, topic)
	}
	d, err := wire.DecodeDeadLetter(recs[0].Payload)
	if err != nil {
		return nil, fmt.Errorf("record %s in %s is not a dead-letter capsule: %w", pos, topic, err)
	}
	return d, nil
}

// shownCapsule is 'dlq show' output.
type shownCapsule struct {
	capsuleView
	Payload recordView `json:"payload"`
}

func dlqShow(ctx context.Context, args []string, stdout io.Writer) error {
	fs := newFlags("dlq show", "laser dlq show [flags] CAPSULE", stdout)
	var sf serverFlags
	sf.register(fs)
	topic := fs.String("topic", runtime.TopicDLQ, "dead-letter topic")
	asJSON := fs.Bool("json", false, "print JSON")
	if err := parse(fs, args); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return usagef("dlq show takes one CAPSULE position (see --help)")
	}
	pos, err := parsePosition(fs.Arg(0))
	if err != nil {
		return err
	}
	t, err := sf.dial(ctx)
	if err != nil {
		return err
	}
	defer t.Close()
	d, err := findCapsule(ctx, t, *topic, pos)
	if err != nil {
		return err
	}
	// The payload is shown as the consumer saw it: AGDX when it decodes as an
	// envelope (the capsule does not keep the original headers), else raw.
	original := runtime.Incoming{Position: runtime.Position{Partition: d.Source.PartitionID, Offset: d.Source.Offset}, Payload: d.Payload}
	if env, err := wire.DecodeEnvelope(d.Payload); err == nil {
		original.Headers = wire.EnvelopeHeaders(env, wire.ContentRaw)
		original.Headers.Del(wire.HeaderContentType)
	}
	out := shownCapsule{capsuleView: capsule{Position: pos, Capsule: d}.view(), Payload: describe("source", &original)}
	if *asJSON {
		return json.NewEncoder(stdout).Encode(out)
	}
	fmt.Fprintf(stdout, "capsule   %s in %s\nreason    %s\nattempts  %d\nsource    %s\n", out.Capsule, *topic, out.Reason, out.Attempts, out.Source)
	if out.Detail != "" {
		fmt.Fprintf(stdout, "detail    %s\n", out.Detail)
	}
	p := out.Payload
	if p.Shape == "agdx" {
		fmt.Fprintf(stdout, "envelope  %s", p.Kind)
		if p.Operation != "" {
			fmt.Fprintf(stdout, " %s", p.Operation)
		}
		fmt.Fprintf(stdout, "\n  from          %s\n  to            %s\n  conversation  %s\n", p.From, orAny(p.To), p.Conversation)
		if p.Correlation != "" {
			fmt.Fprintf(stdout, "  correlation   %s\n", p.Correlation)
		}
		if p.Idempotency != "" {
			fmt.Fprintf(stdout, "  idempotency   %s\n", p.Idempotency)
		}
	}
	fmt.Fprintf(stdout, "payload   %d bytes\nbody (%s)\n%s\n", len(d.Payload), p.BodyEncoding, p.Body)
	return nil
}

// redriveResult is one line of 'dlq redrive' output.
type redriveResult struct {
	Capsule     string `json:"capsule"`
	Source      string `json:"source"`
	Republished string `json:"republished,omitempty"`
	Error       string `json:"error,omitempty"`
}

func dlqRedrive(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("dlq redrive", "laser dlq redrive [flags] CAPSULE... | --all", stdout)
	var sf serverFlags
	sf.register(fs)
	topic := fs.String("topic", runtime.TopicDLQ, "dead-letter topic")
	source := fs.String("source-topic", runtime.TopicCommands, "topic the dead-lettered messages were read from (checked against the capsules)")
	all := fs.Bool("all", false, "redrive every capsule in the dead-letter topic")
	asJSON := fs.Bool("json", false, "print one JSON object per capsule")
	if err := parse(fs, args); err != nil {
		return err
	}
	if *all == (fs.NArg() > 0) {
		return usagef("dlq redrive takes CAPSULE positions or --all, not both and not neither (see --help)")
	}
	var positions []runtime.Position
	for _, a := range fs.Args() {
		pos, err := parsePosition(a)
		if err != nil {
			return err
		}
		positions = append(positions, pos)
	}
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
			d, err := findCapsule(ctx, t, *topic, pos)
			caps = append(caps, capsule{Position: pos, Capsule: d, Err: err})
		}
	}
	if _, _, err := t.TopicIDs(ctx, *source); err != nil {
		return fmt.Errorf("source topic %s: %w", *source, err)
	}
	client := runtime.NewClient(t, runtime.ClientOptions{})
	bar := newProgress(stderr, len(caps), !*asJSON)
	failed := 0
	for i, c := range caps {
		res := redriveResult{Capsule: c.Position.String()}
		pos, err := redriveOne(ctx, client, *source, c)
		if c.Capsule != nil {
			res.Source = c.Capsule.Source.String()
		}
		if err != nil {
			failed++
			res.Error = err.Error()
		} else {
			res.Republished = pos.String()
		}
		bar.set(i + 1)
		if *asJSON {
			if err := json.NewEncoder(stdout).Encode(res); err != nil {
				return err
			}
		} else if res.Error != "" {
			fmt.Fprintf(stdout, "%s  FAILED: %s\n", res.Capsule, res.Error)
		} else {
			fmt.Fprintf(stdout, "%s  source %s  republished at %s:%s\n", res.Capsule, res.Source, *source, res.Republished)
		}
	}
	bar.done()
	if failed > 0 {
		return fmt.Errorf("%d of %d capsules were not redriven", failed, len(caps))
	}
	return nil
}

// redriveOne republishes the original record a capsule points at (see
// runtime.Client.RedriveDeadLetter).
func redriveOne(ctx context.Context, client *runtime.Client, source string, c capsule) (runtime.Position, error) {
	if c.Err != nil {
		return runtime.Position{}, c.Err
	}
	return client.RedriveDeadLetter(ctx, source, c.Capsule)
}

// progress draws a bar on stderr for long redrives.
type progress struct {
	w       io.Writer
	total   int
	enabled bool
}

func newProgress(w io.Writer, total int, enabled bool) *progress {
	return &progress{w: w, total: total, enabled: enabled && total > 1}
}

func (p *progress) set(n int) {
	if !p.enabled {
		return
	}
	const width = 30
	filled := width * n / p.total
	fmt.Fprintf(p.w, "\rredriving [%s%s] %d/%d", strings.Repeat("=", filled), strings.Repeat(" ", width-filled), n, p.total)
}

func (p *progress) done() {
	if p.enabled {
		fmt.Fprintln(p.w)
	}
}
