package main

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
	"text/tabwriter"

	"github.com/lasergo/laser/humaninput"
	"github.com/lasergo/laser/runtime"
	"github.com/lasergo/laser/sign"
)

// runApprovals lists the requests for human input nobody answered yet, or
// answers one.
func runApprovals(ctx context.Context, args []string, stdout, _ io.Writer) error {
	if len(args) > 0 && args[0] == "answer" {
		return approvalsAnswer(ctx, args[1:], stdout)
	}
	if len(args) > 0 && args[0] == "list" {
		args = args[1:]
	}
	return approvalsList(ctx, args, stdout)
}

// approvalView is one pending request as `approvals list --json` prints it.
type approvalView struct {
	Correlation  string `json:"correlation"`
	From         string `json:"from"`
	Conversation string `json:"conversation"`
	Position     string `json:"position"`
	Prompt       string `json:"prompt"`
}

func approvalsList(ctx context.Context, args []string, stdout io.Writer) error {
	fs := newFlags("approvals list", "laser approvals [list] [flags]", stdout)
	var sf serverFlags
	sf.register(fs)
	topic := fs.String("topic", runtime.TopicHumanInput, "human-input topic")
	asJSON := fs.Bool("json", false, "print a JSON array")
	if err := parse(fs, args); err != nil {
		return err
	}
	if fs.NArg() != 0 {
		return usagef("approvals list takes no arguments (see --help)")
	}
	t, err := sf.dial(ctx)
	if err != nil {
		return err
	}
	defer t.Close()
	pending, err := humaninput.Pending(ctx, t, *topic)
	if err != nil {
		return err
	}
	views := make([]approvalView, len(pending))
	for i, m := range pending {
		views[i] = approvalView{Correlation: m.Envelope.Correlation.String(), From: string(m.Envelope.Source),
			Conversation: m.Envelope.Conversation.String(), Position: m.Position.String(), Prompt: string(m.Body())}
	}
	if *asJSON {
		return json.NewEncoder(stdout).Encode(views)
	}
	if len(views) == 0 {
		fmt.Fprintf(stdout, "no pending requests in %s\n", *topic)
		return nil
	}
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "CORRELATION\tFROM\tCONVERSATION\tPROMPT")
	for _, v := range views {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", v.Correlation, v.From, v.Conversation, truncate(v.Prompt, 80))
	}
	return tw.Flush()
}

func approvalsAnswer(ctx context.Context, args []string, stdout io.Writer) error {
	fs := newFlags("approvals answer", "laser approvals answer [flags] CORRELATION approve|refuse [TEXT]", stdout)
	var sf serverFlags
	sf.register(fs)
	topic := fs.String("topic", runtime.TopicHumanInput, "human-input topic")
	as := fs.String("as", "operator", "the answering agent id")
	keyFile := fs.String("key", "", "file holding the hex Ed25519 seed that signs the answer (needed when the asker verifies)")
	if err := parse(fs, args); err != nil {
		return err
	}
	if fs.NArg() < 2 || fs.NArg() > 3 || (fs.Arg(1) != "approve" && fs.Arg(1) != "refuse") {
		return usagef("approvals answer takes CORRELATION approve|refuse [TEXT] (see --help)")
	}
	corr, refuse := fs.Arg(0), fs.Arg(1) == "refuse"
	text := fs.Arg(2)
	if text == "" && !refuse {
		text = "approved"
	}
	var key *sign.Key
	if *keyFile != "" {
		raw, err := os.ReadFile(*keyFile)
		if err != nil {
			return err
		}
		seed, err := hex.DecodeString(strings.TrimSpace(string(raw)))
		if err != nil {
			return usagef("--key: %v", err)
		}
		if key, err = sign.KeyFromSeed(seed); err != nil {
			return usagef("--key: %v", err)
		}
	}
	t, err := sf.dial(ctx)
	if err != nil {
		return err
	}
	defer t.Close()
	pending, err := humaninput.Pending(ctx, t, *topic)
	if err != nil {
		return err
	}
	for _, m := range pending {
		if m.Envelope.Correlation.String() != corr {
			continue
		}
		client := runtime.NewClient(t, runtime.ClientOptions{})
		defer client.Close()
		if err := humaninput.Answer(ctx, client, *topic, *as, m, refuse, []byte(text), key); err != nil {
			return err
		}
		verb := "approved"
		if refuse {
			verb = "refused"
		}
		fmt.Fprintf(stdout, "%s %s from %s\n", verb, corr, m.Envelope.Source)
		return nil
	}
	return fmt.Errorf("no pending request with correlation %s in %s", corr, *topic)
}
