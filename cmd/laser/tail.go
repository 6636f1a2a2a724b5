package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"time"

	"github.com/lasergo/laser/runtime"
)

// runTail follows a topic and prints every new record decoded.
func runTail(ctx context.Context, args []string, stdout, _ io.Writer) error {
	fs := newFlags("tail", "laser tail [flags] TOPIC", stdout)
	var sf serverFlags
	sf.register(fs)
	fromStart := fs.Bool("from-beginning", false, "print the records already on the topic first")
	asJSON := fs.Bool("json", false, "print one JSON object per record")
	count := fs.Int("n", 0, "stop after this many records (0 follows until interrupted)")
	interval := fs.Duration("interval", 100*time.Millisecond, "how long to wait when nothing is new")
	if err := parse(fs, args); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return usagef("tail takes one TOPIC (see --help)")
	}
	topic := fs.Arg(0)
	t, err := sf.dial(ctx)
	if err != nil {
		return err
	}
	defer t.Close()
	chunks := newChunkPrinter()
	return follow(ctx, t, topic, *fromStart, *count, *interval, func(rec *runtime.Incoming) error {
		if !*asJSON && chunks.print(stdout, topic, rec) {
			return nil
		}
		v := describe(topic, rec)
		if *asJSON {
			return json.NewEncoder(stdout).Encode(v)
		}
		printRecord(stdout, topic, v)
		return nil
	})
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
