// Command laser is the laser-go operator tool: a development server, the
// dead-letter queue, and a live view of any topic.
//
//	laser dev                          run an in-memory Iggy-protocol server on 127.0.0.1:8090
//	laser dlq list                     list dead-letter capsules
//	laser dlq show 0:12                show one capsule, decoded
//	laser dlq redrive 0:12 | --all     republish the original messages
//	laser tail agent.commands          follow a topic, decoded for people
//	laser approvals                    list pending requests for human input
//	laser approvals answer CORR approve  answer one
//
// Every command that talks to a server takes --addr or LASER_IGGY_ADDR, a
// connection string such as iggy://iggy:iggy@127.0.0.1:8090/laser.
//
// Exit codes: 0 success, 1 the operation failed, 2 bad usage, 3 the server
// could not be reached or refused the credentials.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"os"
	"os/signal"
	"syscall"
)

// Exit codes scripts can branch on.
const (
	exitOK      = 0
	exitFailed  = 1
	exitUsage   = 2
	exitConnect = 3
)

func main() {
	// The Iggy SDK writes every login to the standard logger; this program
	// reports what matters itself.
	log.SetOutput(io.Discard)
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	os.Exit(run(ctx, os.Args[1:], os.Stdout, os.Stderr))
}

// usageError is a command line that does not parse.
type usageError struct{ msg string }

func (e *usageError) Error() string { return e.msg }

func usagef(format string, args ...any) error { return &usageError{msg: fmt.Sprintf(format, args...)} }

// connectError is a server that cannot be reached or refuses the login.
type connectError struct{ err error }

func (e *connectError) Error() string { return e.err.Error() }
func (e *connectError) Unwrap() error { return e.err }

const topUsage = `laser: the laser-go operator tool

Usage:
  laser dev [flags]                     run an in-memory Iggy-protocol server for development
  laser dlq list [flags]                list dead-letter capsules
  laser dlq show [flags] CAPSULE        show one capsule (CAPSULE is partition:offset in agent.dlq)
  laser dlq redrive [flags] CAPSULE...  republish the original messages (or --all)
  laser tail [flags] TOPIC              follow a topic, decoding AGDX envelopes and provenance
  laser approvals [list] [flags]        list requests for human input nobody answered
  laser approvals answer [flags] CORRELATION approve|refuse [TEXT]
                                        answer one

Run 'laser COMMAND --help' for a command's flags.
Servers are named by --addr or LASER_IGGY_ADDR: iggy://user:password@host:port/stream
(or iggy+pat://token@host:port/stream).

Exit codes: 0 ok, 1 failed, 2 usage, 3 cannot connect or log in.
`

// run executes one command line and returns its exit code.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, topUsage)
		return exitUsage
	}
	var err error
	switch args[0] {
	case "-h", "--help", "help":
		fmt.Fprint(stdout, topUsage)
		return exitOK
	case "dev":
		err = runDev(ctx, args[1:], stdout, stderr)
	case "dlq":
		err = runDLQ(ctx, args[1:], stdout, stderr)
	case "tail":
		err = runTail(ctx, args[1:], stdout, stderr)
	case "approvals":
		err = runApprovals(ctx, args[1:], stdout, stderr)
	default:
		err = usagef("unknown command %q\n\n%s", args[0], topUsage)
	}
	return exitCode(err, stderr)
}

// exitCode reports err on stderr and maps it to an exit code.
func exitCode(err error, stderr io.Writer) int {
	var ue *usageError
	var ce *connectError
	switch {
	case err == nil, errors.Is(err, errHelp):
		return exitOK
	case errors.As(err, &ue):
		fmt.Fprintln(stderr, "laser:", ue.msg)
		return exitUsage
	case errors.As(err, &ce):
		fmt.Fprintln(stderr, "laser:", ce.err)
		return exitConnect
	default:
		fmt.Fprintln(stderr, "laser:", err)
		return exitFailed
	}
}
