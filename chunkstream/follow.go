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
	// Idle ends the stream with a *runtime.Error of runtime.CodeTimeout
	// ("stream ended without a terminal chunk") when no chunk of it arrives for this long
	// (default runtime.DefaultRequestTimeout).
	Idle time.Duration
	// Clock times Poll and Idle (default clock.System).
	Clock clock.Clock
}

// Follow yields the chunks of channel on topic from sequence from on (0 for
// the whole stream; the sequence after the last chunk a reader saw to resume
// it after a disconnect), in order, reading what is on the log and then
// following it until the terminal chunk. The stream's breaches and the
// responder's failure end it as they end Client.Stream; so do an idle
// stream (FollowConfig.Idle) and ctx. It starts no goroutine.
func Follow(ctx context.Context, client *runtime.Client, topic string, channel wire.ID, from uint64, cfg FollowConfig) iter.Seq2[[]byte, error] {
	return func(yield func([]byte, error) bool) {
		if cfg.Poll < 0 || cfg.Idle < 0 {
			yield(nil, fmt.Errorf("chunkstream: follow %s: negative Poll (%v) or Idle (%v)", channel, cfg.Poll, cfg.Idle))
			return
		}
		var readErr error
		records := tail(ctx, client.Transport(), topic, channel, cfg, &readErr)
		var seq uint64 // the sequence of the next body
		for b, err := range client.AssembleStream(records, 0) {
			if readErr != nil { // the records ended because reading failed
				yield(nil, readErr)
				return
			}
			if err != nil {
				yield(nil, fmt.Errorf("chunkstream: follow %s on %s: %w", channel, topic, err))
				return
			}
			if seq >= from && !yield(b, nil) {
				return
			}
			seq++
		}
	}
}

// tail yields the records of channel on topic in log order, reading the log
// again every Poll, and stops when none arrived for Idle, when ctx ends or
// when a read fails (setting *failed).
func tail(ctx context.Context, t runtime.Transport, topic string, channel wire.ID, cfg FollowConfig, failed *error) iter.Seq[*runtime.Message] {
	poll := cmp.Or(cfg.Poll, runtime.DefaultPollInterval)
	idle := cmp.Or(cfg.Idle, runtime.DefaultRequestTimeout)
	clk := cfg.Clock
	if clk == nil {
		clk = clock.System{}
	}
	return func(yield func(*runtime.Message) bool) {
		var offsets map[uint32]uint64
		quiet := clk.Now()
		for {
			msgs, next, err := scan(ctx, t, topic, channel, offsets)
			if err != nil {
				*failed = err
				return
			}
			offsets = next
			if len(msgs) > 0 {
				quiet = clk.Now()
			}
			for _, m := range msgs {
				if !yield(m) {
					return
				}
			}
			if clk.Now().Sub(quiet) >= idle {
				return
			}
			select {
			case <-clk.After(poll):
			case <-ctx.Done():
				*failed = ctx.Err()
				return
			}
		}
	}
}
