package main

import (
	"context"
	"fmt"
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
		return follow(ctx, t, topic, *fromStart, *count, *interval, func(rec *runtime.Incoming) error {
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

// follow reads every partition of topic from its tail (or its start) and
// calls fn for each record until ctx ends or count records were seen.
func follow(ctx context.Context, t runtime.Transport, topic string, fromStart bool, count int, interval time.Duration, fn func(*runtime.Incoming) error) error {
	n, err := t.Partitions(ctx, topic)
	if err != nil {
		return fmt.Errorf("topic %s: %w", topic, err)
	}
	cursors := make([]uint64, n)
	if !fromStart {
		for p := range cursors {
			if cursors[p], err = t.NextOffset(ctx, topic, uint32(p)); err != nil {
				return err
			}
		}
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
				if seen++; count > 0 && seen >= count {
					return nil
				}
			}
		}
		if found {
			continue
		}
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(interval):
		}
	}
}
