package main

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/spf13/cobra"

	"github.com/lasergo/laser/runtime"
)

// tailCommand follows a topic and prints every new record decoded.
func (a *app) tailCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "tail TOPIC",
		Short: "follow a topic, decoding AGDX envelopes and provenance",
		Args:  exactArgs(1, "one TOPIC"),
	}
	sf := a.serverFlags(cmd)
	fromStart := cmd.Flags().Bool("from-beginning", false, "print the records already on the topic first")
	count := cmd.Flags().IntP("count", "n", 0, "stop after this many records (0 follows until interrupted)")
	interval := cmd.Flags().Duration("interval", 100*time.Millisecond, "how long to wait when nothing is new")
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		if *count < 0 {
			return usagef("tail -n %d: the count is a number of records, 0 or more", *count)
		}
		if *interval <= 0 {
			return usagef("tail --interval %s: want a positive duration", *interval)
		}
		topic := args[0]
		ctx := cmd.Context()
		t, err := sf.dial(ctx)
		if err != nil {
			return err
		}
		defer t.Close()
		if err := checkTopic(ctx, t, topic); err != nil {
			return err
		}
		chunks := newChunkPrinter()
		// What waits behind a gap is printed when the topic goes quiet and
		// when tail stops, not lost.
		flush := func() error {
			if !a.json {
				chunks.flush(a.stdout)
			}
			return nil
		}
		defer flush() //nolint:errcheck // flush never fails
		return follow(ctx, t, topic, followOptions{fromStart: *fromStart, count: *count, interval: *interval, idle: flush}, func(rec *runtime.Incoming) error {
			if !a.json && chunks.print(a.stdout, topic, rec) {
				return nil
			}
			v := describe(topic, rec)
			if a.json {
				return a.printJSON(v)
			}
			printRecord(a.stdout, topic, v)
			return nil
		})
	}
	return cmd
}

// followOptions say where follow starts and when it stops.
type followOptions struct {
	// fromStart starts at each partition's first record, not its tail.
	fromStart bool
	// from, when set, is the next offset to read of each partition,
	// overriding fromStart (a resumed follow).
	from []uint64
	// count stops after this many records (0: until ctx ends).
	count int
	// interval is how long to wait when nothing is new.
	interval time.Duration
	// idle, when set, is called when a poll found nothing new.
	idle func() error
}

// startCursors is the next offset to read of each partition of topic: o.from,
// the start, or the tail.
func startCursors(ctx context.Context, t runtime.Transport, topic string, o followOptions) ([]uint64, error) {
	n, err := t.Partitions(ctx, topic)
	if err != nil {
		return nil, fmt.Errorf("topic %s: %w", topic, err)
	}
	if o.from != nil {
		if len(o.from) != int(n) {
			return nil, fmt.Errorf("topic %s has %d partitions, not the %d of the cursor", topic, n, len(o.from))
		}
		return slices.Clone(o.from), nil
	}
	cursors := make([]uint64, n)
	if !o.fromStart {
		for p := range cursors {
			if cursors[p], err = t.NextOffset(ctx, topic, uint32(p)); err != nil {
				return nil, err
			}
		}
	}
	return cursors, nil
}

// follow reads every partition of topic from where o says and calls fn for
// each record until ctx ends or o.count records were seen.
func follow(ctx context.Context, t runtime.Transport, topic string, o followOptions, fn func(*runtime.Incoming) error) error {
	cursors, err := startCursors(ctx, t, topic, o)
	if err != nil {
		return err
	}
	seen := 0
	for {
		found := false
		for p := range cursors {
			recs, err := t.ReadRange(ctx, topic, uint32(p), cursors[p], 100)
			if err != nil {
				if ctx.Err() != nil {
					return nil
				}
				return err
			}
			for i := range recs {
				found = true
				cursors[p] = recs[i].Offset + 1
				if err := fn(&recs[i]); err != nil {
					return err
				}
				if seen++; o.count > 0 && seen >= o.count {
					return nil
				}
			}
		}
		if found {
			continue
		}
		if o.idle != nil {
			if err := o.idle(); err != nil {
				return err
			}
		}
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(o.interval):
		}
	}
}
