package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/lasergo/laser/iggy"
)

// errHelp ends a command that printed its --help.
var errHelp = errors.New("help requested")

// newFlags returns a flag set that prints its usage to stdout on --help and
// reports bad flags as usage errors.
func newFlags(name, synopsis string, stdout io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {
		fmt.Fprintf(stdout, "Usage: %s\n\nFlags:\n", synopsis)
		fs.SetOutput(stdout)
		fs.PrintDefaults()
		fs.SetOutput(io.Discard)
	}
	return fs
}

// parse parses args, turning --help into errHelp and bad flags into usage errors.
func parse(fs *flag.FlagSet, args []string) error {
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fs.Usage()
			return errHelp
		}
		return usagef("%s: %v (see --help)", fs.Name(), err)
	}
	return nil
}

// serverFlags are the flags of every command that talks to a server.
type serverFlags struct {
	addr    string
	timeout time.Duration
}

func (s *serverFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&s.addr, "addr", os.Getenv("LASER_IGGY_ADDR"), "server connection string, iggy://user:password@host:port/stream (default $LASER_IGGY_ADDR)")
	fs.DurationVar(&s.timeout, "timeout", 5*time.Second, "bound on connecting and on each server call")
}

// dial connects to the server the flags name.
func (s *serverFlags) dial(ctx context.Context) (*iggy.Transport, error) {
	if s.addr == "" {
		return nil, usagef("no server named: pass --addr iggy://user:password@host:port/stream or set LASER_IGGY_ADDR")
	}
	t, err := iggy.Dial(ctx, s.addr, iggy.WithDialTimeout(s.timeout), iggy.WithCallTimeout(s.timeout))
	if err != nil {
		if errors.Is(err, iggy.ErrConnString) {
			return nil, usagef("%v", err)
		}
		return nil, &connectError{err: err}
	}
	return t, nil
}
