package main

import (
	"context"
	"encoding/hex"
	"fmt"
	"os"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/lasergo/laser/humaninput"
	"github.com/lasergo/laser/runtime"
	"github.com/lasergo/laser/sign"
)

// approvalsCommand lists the requests for human input nobody answered yet
// (with no subcommand, or list), or answers one.
func (a *app) approvalsCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "approvals",
		Short: "list pending requests for human input, or answer one",
		Args:  noArgs,
	}
	sf := a.serverFlags(cmd)
	topic := cmd.Flags().String("topic", runtime.TopicHumanInput, "human-input topic")
	keys := keysFlag(cmd)
	cmd.RunE = func(cmd *cobra.Command, _ []string) error {
		return a.approvalsList(cmd.Context(), sf, *topic, *keys)
	}
	cmd.AddCommand(a.approvalsListCommand(), a.approvalsAnswerCommand())
	return cmd
}

func (a *app) approvalsListCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "list",
		Short: "list requests for human input nobody answered",
		Args:  noArgs,
	}
	sf := a.serverFlags(cmd)
	topic := cmd.Flags().String("topic", runtime.TopicHumanInput, "human-input topic")
	keys := keysFlag(cmd)
	cmd.RunE = func(cmd *cobra.Command, _ []string) error {
		return a.approvalsList(cmd.Context(), sf, *topic, *keys)
	}
	return cmd
}

// keysFlag adds --keys, the enrolled keys answers are verified with.
func keysFlag(cmd *cobra.Command) *string {
	return cmd.Flags().String("keys", "", "file of the askers' enrolled keys: only an answer an asker would accept (signed by its approver, else an operator key) counts")
}

// listPending folds topic's pending requests, verifying answers with the
// keys in keysFile as the askers do; without it every answer counts, so it
// warns that an unsigned answer hides a request.
func (a *app) listPending(ctx context.Context, t runtime.Transport, topic, keysFile string) (*humaninput.Listing, error) {
	opts := humaninput.ListOptions{Topic: topic}
	if keysFile != "" {
		keys, err := loadKeys(keysFile)
		if err != nil {
			return nil, err
		}
		opts.Verifier = keys
	} else {
		fmt.Fprintln(a.stderr, "laser: answers are not verified: any answer, even an unsigned one, hides its request (pass --keys FILE with the askers' keys)")
	}
	return humaninput.List(ctx, t, opts)
}

// approvalView is one pending request as `approvals list --json` prints it.
type approvalView struct {
	Correlation  string `json:"correlation"`
	From         string `json:"from"`
	Conversation string `json:"conversation"`
	Position     string `json:"position"`
	Prompt       string `json:"prompt"`
	// Duplicate marks a correlation another pending request shares: an
	// answer would go to whichever one the asker waits on, so neither can
	// be answered from here.
	Duplicate bool `json:"duplicate,omitempty"`
	// Age, Deadline and Left say how long the request has waited, when its
	// asker stops waiting (UTC) and how long that is from now; the console
	// shows them.
	Age      string `json:"-"`
	Deadline string `json:"-"`
	Left     string `json:"-"`
}

func (a *app) approvalsList(ctx context.Context, sf *serverFlags, topic, keysFile string) error {
	t, err := sf.dial(ctx)
	if err != nil {
		return err
	}
	defer t.Close()
	l, err := a.listPending(ctx, t, topic, keysFile)
	if err != nil {
		return err
	}
	if l.RefusedAnswers > 0 {
		fmt.Fprintf(a.stderr, "laser: %d answer(s) did not count: unverified, or signed by someone who may not answer\n", l.RefusedAnswers)
	}
	pending, shared := l.Pending, l.Shared
	views := make([]approvalView, len(pending))
	for i, m := range pending {
		views[i] = approvalView{Correlation: m.Envelope.Correlation.String(), From: string(m.Envelope.Source),
			Conversation: m.Envelope.Conversation.String(), Position: m.Position.String(), Prompt: string(m.Body()),
			Duplicate: shared[*m.Envelope.Correlation] > 0}
	}
	if a.json {
		return a.printJSON(views)
	}
	if len(views) == 0 {
		fmt.Fprintf(a.stdout, "no pending requests in %s\n", topic)
		return nil
	}
	tw := tabwriter.NewWriter(a.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "CORRELATION\tFROM\tCONVERSATION\tPROMPT")
	for _, v := range views {
		prompt := shown(truncate(v.Prompt, 80))
		if v.Duplicate {
			prompt = "DUPLICATE CORRELATION  " + prompt
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", v.Correlation, shown(v.From), v.Conversation, prompt)
	}
	return tw.Flush()
}

// approvalAnswer is what `approvals answer --json` prints.
type approvalAnswer struct {
	Correlation string `json:"correlation"`
	Verdict     string `json:"verdict"`
	From        string `json:"from"`
}

func (a *app) approvalsAnswerCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "answer CORRELATION approve|refuse [TEXT]",
		Short: "answer one pending request for human input",
		Args: func(_ *cobra.Command, args []string) error {
			if len(args) < 2 || len(args) > 3 || (args[1] != "approve" && args[1] != "refuse") {
				return usagef("approvals answer takes CORRELATION approve|refuse [TEXT] (see --help)")
			}
			return nil
		},
	}
	sf := a.serverFlags(cmd)
	topic := cmd.Flags().String("topic", runtime.TopicHumanInput, "human-input topic")
	as := cmd.Flags().String("as", "operator", "the answering agent id")
	keyFile := cmd.Flags().String("key", "", "file holding the hex Ed25519 seed that signs the answer (needed when the asker verifies)")
	keysFile := keysFlag(cmd)
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		corr, refuse := args[0], args[1] == "refuse"
		text := ""
		if len(args) == 3 {
			text = args[2]
		}
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
		ctx := cmd.Context()
		t, err := sf.dial(ctx)
		if err != nil {
			return err
		}
		defer t.Close()
		l, err := a.listPending(ctx, t, *topic, *keysFile)
		if err != nil {
			return err
		}
		var matching []*runtime.Message
		for _, m := range l.Pending {
			if m.Envelope.Correlation.String() == corr {
				matching = append(matching, m)
			}
		}
		if len(matching) == 1 && l.Shared[*matching[0].Envelope.Correlation] > 0 {
			m := matching[0]
			return fmt.Errorf("%d more request(s) share correlation %s with the one from %s at %s (%s), so an answer could approve a prompt other than the one you read; none was answered",
				l.Shared[*m.Envelope.Correlation], shown(corr), shown(string(m.Envelope.Source)), m.Position, shown(truncate(string(m.Body()), 200)))
		}
		if len(matching) == 0 {
			return fmt.Errorf("no pending request with correlation %s in %s", shown(corr), *topic)
		}
		m := matching[0]
		client := runtime.NewClient(t, runtime.ClientConfig{})
		defer client.Close()
		if err := humaninput.Answer(ctx, client, *topic, *as, m, refuse, []byte(text), key); err != nil {
			return err
		}
		verdict := "approved"
		if refuse {
			verdict = "refused"
		}
		if a.json {
			return a.printJSON(approvalAnswer{Correlation: corr, Verdict: verdict, From: string(m.Envelope.Source)})
		}
		fmt.Fprintf(a.stdout, "%s %s from %s\n", verdict, shown(corr), shown(string(m.Envelope.Source)))
		return nil
	}
	return cmd
}
