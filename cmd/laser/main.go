// Command laser is the laser-go operator tool: a development server, a web
// console, the dead-letter queue, and a live view of any topic.
//
//	laser dev                          run an in-memory Iggy-protocol server on 127.0.0.1:8090 and its console
//	laser console                      serve the web console for --addr on 127.0.0.1:8088
//	laser dlq list                     list dead-letter capsules
//	laser dlq show 0:12                show one capsule, decoded
//	laser dlq redrive 0:12 | --all     republish the original messages
//	laser tail agent.commands          follow a topic, decoded for people
//	laser approvals                    list pending requests for human input
//	laser approvals answer CORR approve  answer one
//	laser audit                        governance decisions per agent (agent.audit)
//	laser audit verify                 check the evidence chains, naming each break
//	laser mcp                          serve the registry's agents as MCP tools (stdio, --http)
//	laser version                      the versions of laser, Go and the Iggy SDK
//	laser completion bash|zsh|fish     a shell completion script
//
// Every command that talks to a server takes --addr or LASER_IGGY_ADDR, a
// connection string such as iggy://iggy:iggy@127.0.0.1:8090/laser, and every
// command takes --json. Flags go anywhere on the line.
//
// Exit codes: 0 success, 1 the operation failed, 2 bad usage, 3 the server
// could not be reached or refused the credentials.
//
// The command line is parsed by github.com/spf13/cobra, the library of the go,
// kubectl, gh and hugo tools: flags in any order, --help on every command,
// and shell completion.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/spf13/cobra"
)

// Exit codes scripts can branch on.
const (
	exitOK      = 0
	exitFailed  = 1
	exitUsage   = 2
	exitConnect = 3
)

func main() {
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

// app is one run of the command: its outputs and what every command shares.
type app struct {
	stdout, stderr io.Writer
	// json is --json: output (and errors) for scripts.
	json bool
	// terminal reports whether w is a terminal, so progress is drawn only
	// for people; tests replace it.
	terminal func(w io.Writer) bool
	// secrets are passwords and tokens seen on the command line or in the
	// environment; no message prints them.
	secrets []string
}

// run executes one command line and returns its exit code.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	a := &app{stdout: stdout, stderr: stderr, terminal: isTerminal}
	return a.run(ctx, args)
}

func (a *app) run(ctx context.Context, args []string) int {
	root := a.rootCommand()
	root.SetArgs(args)
	root.SetContext(ctx)
	if len(args) == 0 {
		root.SetOut(a.stderr)
		_ = root.Usage()
		return exitUsage
	}
	err := root.ExecuteContext(ctx)
	return a.exitCode(err)
}

func (a *app) rootCommand() *cobra.Command {
	root := &cobra.Command{
		Use:   "laser",
		Short: "laser: the laser-go operator tool",
		Long: `laser: the laser-go operator tool.

Servers are named by --addr or LASER_IGGY_ADDR: iggy://user:password@host:port/stream
(or iggy+pat://token@host:port/stream). Every command takes --json.

Exit codes: 0 ok, 1 failed, 2 usage, 3 cannot connect or log in.`,
		SilenceErrors: true,
		SilenceUsage:  true,
		Args:          noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return cmd.Help()
		},
	}
	root.SetOut(a.stdout)
	root.SetErr(a.stderr)
	root.PersistentFlags().BoolVar(&a.json, "json", false, "print JSON for scripts (errors too, on stderr)")
	root.SetFlagErrorFunc(func(cmd *cobra.Command, err error) error {
		return usagef("%s: %v (see %s --help)", cmd.CommandPath(), err, cmd.CommandPath())
	})
	root.AddCommand(a.devCommand(), a.consoleCommand(), a.dlqCommand(), a.tailCommand(), a.approvalsCommand(), a.auditCommand(), a.mcpCommand(), a.crashCommand(), a.versionCommand())
	return root
}

// noArgs refuses positional arguments, as a usage error. On a command with
// subcommands it names the unknown one.
func noArgs(cmd *cobra.Command, args []string) error {
	if len(args) == 0 {
		return nil
	}
	if cmd.HasSubCommands() {
		return usagef("unknown command %q for %s (see %s --help)", args[0], cmd.CommandPath(), cmd.CommandPath())
	}
	return usagef("%s takes no arguments (see --help)", cmd.CommandPath())
}

// exactArgs wants n positional arguments, named what, as a usage error.
func exactArgs(n int, what string) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if len(args) != n {
			return usagef("%s takes %s (see --help)", cmd.CommandPath(), what)
		}
		return nil
	}
}

// exitCode reports err on stderr and maps it to an exit code.
func (a *app) exitCode(err error) int {
	if err == nil {
		return exitOK
	}
	var ue *usageError
	var ce *connectError
	code := exitFailed
	switch {
	case errors.As(err, &ue), strings.HasPrefix(err.Error(), "unknown command"), strings.HasPrefix(err.Error(), "unknown flag"):
		code = exitUsage
	case errors.As(err, &ce):
		code = exitConnect
	}
	msg := a.redact(err.Error())
	if a.json {
		_ = json.NewEncoder(a.stderr).Encode(struct {
			Error string `json:"error"`
			Exit  int    `json:"exit"`
		}{msg, code})
		return code
	}
	fmt.Fprintln(a.stderr, "laser:", shownText(msg))
	return code
}

// redact replaces every known secret in s. The development default
// password "iggy" is no secret (laser dev prints it), and replacing it would
// garble every iggy:// address.
func (a *app) redact(s string) string {
	for _, secret := range a.secrets {
		if secret != "" && secret != "iggy" {
			s = strings.ReplaceAll(s, secret, "xxxxx")
		}
	}
	return s
}

// printJSON writes v as one line of JSON on stdout.
func (a *app) printJSON(v any) error { return json.NewEncoder(a.stdout).Encode(v) }
