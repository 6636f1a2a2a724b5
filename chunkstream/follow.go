package chunkstream

import (
	"cmp"
	"context"
	"fmt"
	"iter"
	"time"

	"github.com/lasergo/laser/clock"
	"github.com/lasergo/laser/runtime"
	"github.com/lasergo/laser/wire"
)

// FollowConfig is how Follow waits for chunks not yet on the log; a zero
// field takes its default.
type FollowConfig struct {
	// Poll is how long Follow waits before reading the log again once it
	// has read everything there (default runtime.DefaultPollInterval).
	Poll time.Duration
	// Idle ends the stream with a *runtime.StreamError wrapping
	// runtime.ErrStreamTimeout when no chunk of it arrives for this long
	// (default runtime.DefaultRequestTimeout).
	Idle time.Duration
	// Clock times Poll and Idle (default clock.System).
	Clock clock.Clock
}

// Follow yields the chunks of channel on topic from sequence from on (0 for
// the whole stream; the sequence after the last chunk a reader saw to resume
// it after a disconnect), in order, reading what is on the log and then
// following it until the terminal chunk. The stream's breaches and the
// responder's failure end it as they end RequestStream; so do an idle
// stream (FollowConfig.Idle) and ctx. It starts no goroutine.
func Follow(ctx context.Context, t runtime.Transport, topic string, channel wire.ID, from uint64, cfg FollowConfig) iter.Seq2[[]byte, error] {
	return func(yield func([]byte, error) bool) {
		if cfg.Poll < 0 || cfg.Idle < 0 {
			yield(nil, fmt.Errorf("chunkstream: follow %s: negative Poll (%v) or Idle (%v)", channel, cfg.Poll, cfg.Idle))
			return
		}
		poll := cmp.Or(cfg.Poll, runtime.DefaultPollInterval)
		idle := cmp.Or(cfg.Idle, runtime.DefaultRequestTimeout)
		clk := cfg.Clock
		if clk == nil {
			clk = clock.System{}
		}
		asm := runtime.NewChunkAssembler(0)
		var offsets map[uint32]uint64
		var seq uint64 // the sequence of the next body the assembler yields
		quiet := clk.Now()
		for {
			msgs, next, err := scan(ctx, t, topic, channel, offsets)
			if err != nil {
				yield(nil, err)
				return
			}
			offsets = next
			if len(msgs) > 0 {
				quiet = clk.Now()
			}
			for _, m := range msgs {
				ready, finished, err := asm.Add(m)
				for _, b := range ready {
					if seq >= from && !yield(b, nil) {
						return
					}
					seq++
				}
				if err != nil {
					yield(nil, fmt.Errorf("chunkstream: follow %s on %s: %w", channel, topic, err))
					return
				}
				if finished {
					return
				}
			}
			if clk.Now().Sub(quiet) >= idle {
				yield(nil, fmt.Errorf("chunkstream: follow %s on %s: %w", channel, topic, asm.End()))
				return
			}
			select {
			case <-clk.After(poll):
			case <-ctx.Done():
				yield(nil, ctx.Err())
				return
			}
		}
	}
}
