package main

import (
	"context"
	"crypto/ed25519"
	"encoding/hex"
	"errors"
	"fmt"
	"sort"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/lasergo/laser/govern"
	"github.com/lasergo/laser/runtime"
	"github.com/lasergo/laser/sign"
)

// auditCommand shows what the governance gates decided (per agent, with no
// subcommand) and verifies their evidence chains (verify).
func (a *app) auditCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "audit",
		Short: "per-agent governance decisions on agent.audit, or verify their chains",
		Args:  noArgs,
	}
	sf := a.serverFlags(cmd)
	topic := cmd.Flags().String("topic", runtime.TopicAudit, "audit topic")
	cmd.RunE = func(cmd *cobra.Command, _ []string) error {
		return a.auditList(cmd.Context(), sf, *topic)
	}
	cmd.AddCommand(a.auditVerifyCommand())
	return cmd
}

// activityView is one agent's row of `laser audit --json`.
type activityView struct {
	Agent     string         `json:"agent"`
	Decisions int            `json:"decisions"`
	ByVerdict map[string]int `json:"by_verdict"`
	Latest    latestView     `json:"latest"`
}

// latestView is an agent's latest decision.
type latestView struct {
	Verdict string `json:"verdict"`
	Outcome string `json:"outcome"`
	Kind    string `json:"kind"`
	Topic   string `json:"topic"`
	Reason  string `json:"reason,omitempty"`
	Policy  string `json:"policy,omitempty"`
	At      string `json:"at"`
}

func (a *app) auditList(ctx context.Context, sf *serverFlags, topic string) error {
	t, err := sf.dial(ctx)
	if err != nil {
		return err
	}
	defer t.Close()
	entries, err := govern.ReadAudit(ctx, t, topic)
	if err != nil {
		return err
	}
	views := auditActivity(entries)
	if a.json {
		if views == nil {
			views = []activityView{}
		}
		return a.printJSON(views)
	}
	if len(views) == 0 {
		fmt.Fprintf(a.stdout, "no governance decisions in %s\n", topic)
		return nil
	}
	tw := tabwriter.NewWriter(a.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "AGENT\tDECISIONS\tBY VERDICT\tLATEST")
	for _, v := range views {
		// Every field but the counts is what a peer wrote: escaped, so a
		// record cannot drive the terminal.
		agent := shown(v.Agent)
		if agent == "" {
			agent = "(none)"
		}
		fmt.Fprintf(tw, "%s\t%d\t%s\t%s %s: %s %s at %s\n", agent, v.Decisions, verdictCounts(v.ByVerdict),
			shown(v.Latest.Verdict), shown(v.Latest.Outcome), shown(v.Latest.Kind), shown(v.Latest.Topic), v.Latest.At)
	}
	return tw.Flush()
}

// auditActivity folds the decision records into one view per agent.
func auditActivity(entries []govern.Entry) []activityView {
	var evs []*govern.Evidence
	for _, e := range entries {
		if e.Evidence != nil {
			evs = append(evs, e.Evidence)
		}
	}
	var views []activityView
	for _, act := range govern.Activity(evs) {
		v := activityView{Agent: act.Agent, Decisions: act.Decisions, ByVerdict: map[string]int{}}
		for verdict, n := range act.ByVerdict {
			v.ByVerdict[string(verdict)] = n
		}
		l := act.Latest
		v.Latest = latestView{Verdict: string(l.Verdict), Outcome: string(l.Outcome), Kind: l.Action.Kind, Topic: l.Action.Topic,
			Reason: l.Reason, Policy: strings.TrimSpace(l.PolicyID + " " + l.PolicyVersion), At: l.At.Format("2006-01-02T15:04:05.000000Z07:00")}
		views = append(views, v)
	}
	return views
}

// verdictCounts renders counts as "block=2 modify=1", by verdict name.
func verdictCounts(by map[string]int) string {
	names := make([]string, 0, len(by))
	for name := range by {
		names = append(names, name)
	}
	sort.Strings(names)
	parts := make([]string, len(names))
	for i, name := range names {
		parts[i] = fmt.Sprintf("%s=%d", shown(name), by[name])
	}
	return strings.Join(parts, " ")
}

// errChainBroken makes `audit verify` exit 1 once it printed the findings.
var errChainBroken = errors.New("the audit chain is broken")

// findingView is one break of `laser audit verify --json`.
type findingView struct {
	Producer string `json:"producer"`
	Index    int    `json:"index"`
	Seq      uint64 `json:"seq"`
	Position string `json:"position"`
	Problem  string `json:"problem"`
	Detail   string `json:"detail"`
}

func (a *app) auditVerifyCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "verify",
		Short: "check every evidence chain on agent.audit: exit 1 and name each removed, reordered or altered record",
		Args:  noArgs,
	}
	sf := a.serverFlags(cmd)
	topic := cmd.Flags().String("topic", runtime.TopicAudit, "audit topic")
	trust := cmd.Flags().StringArray("trust", nil, "PRINCIPAL=HEX: a principal's Ed25519 public key (hex); with any, every record's signature must verify")
	signers := cmd.Flags().StringToString("signer", nil, "PRODUCER=PRINCIPAL: the principal that must sign a chain (with --trust; default the signer of its first record)")
	expect := cmd.Flags().StringToInt64("expect", nil, "PRODUCER=SEQ: the last seq a producer is known to have written; a chain ending before it, or missing, is reported removed")
	cmd.RunE = func(cmd *cobra.Command, _ []string) error {
		opts := govern.VerifyOptions{Signers: *signers, Expect: map[string]uint64{}}
		for producer, seq := range *expect {
			if seq < 1 {
				return usagef("--expect %s=%d: a seq counts from 1", producer, seq)
			}
			opts.Expect[producer] = uint64(seq)
		}
		if len(*trust) > 0 {
			keys, err := trustedKeys(*trust)
			if err != nil {
				return err
			}
			opts.Keys = keys
		}
		t, err := sf.dial(cmd.Context())
		if err != nil {
			return err
		}
		defer t.Close()
		entries, err := govern.ReadAudit(cmd.Context(), t, *topic)
		if err != nil {
			return err
		}
		findings := govern.Verify(entries, opts)
		views := make([]findingView, len(findings))
		for i, f := range findings {
			views[i] = findingView{Producer: f.Producer, Index: f.Index, Seq: f.Seq, Position: f.At.String(), Problem: string(f.Problem), Detail: f.Detail}
		}
		if a.json {
			if err := a.printJSON(views); err != nil {
				return err
			}
		} else if len(views) == 0 {
			fmt.Fprintf(a.stdout, "%d decision records in %s, every chain intact\n", len(entries), *topic)
		} else {
			for _, f := range findings {
				fmt.Fprintln(a.stdout, shown(f.String()))
			}
		}
		if len(findings) > 0 {
			return fmt.Errorf("%w: %d findings in %s", errChainBroken, len(findings), *topic)
		}
		return nil
	}
	return cmd
}

// trustedKeys enrolls each PRINCIPAL=HEX public key.
func trustedKeys(specs []string) (*sign.Registry, error) {
	keys := sign.NewRegistry()
	for _, spec := range specs {
		principal, hexKey, ok := strings.Cut(spec, "=")
		pub, err := hex.DecodeString(hexKey)
		if !ok || principal == "" || err != nil || len(pub) != ed25519.PublicKeySize {
			return nil, usagef("--trust %q is not PRINCIPAL=<%d hex bytes of an Ed25519 public key>", spec, ed25519.PublicKeySize)
		}
		if err := keys.Enroll(principal, pub); err != nil {
			return nil, usagef("--trust %q: %v", spec, err)
		}
	}
	return keys, nil
}
