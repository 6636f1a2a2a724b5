// Command payments shows governance at the effect boundary: a payer agent
// wires funds, and a payments policy decides before each transfer reaches
// the bank's topic.
//
//	go run ./examples/payments
//	LASER_IGGY_ADDR=iggy://iggy:iggy@127.0.0.1:8090/payments go run ./examples/payments
//
// In enforce mode a transfer to a beneficiary the policy does not approve is
// blocked and never reaches bank.transfers; in observe mode the same
// transfer goes out and agent.audit records that enforce would have blocked
// it. A transfer above the limit waits for two of the three treasurers to
// approve its proposal. Then the program prints the evidence and checks its
// hash chains, as `laser audit` and `laser audit verify` do on a server.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"log/slog"
	"os"
	"sort"
	"strings"
	"time"

	"github.com/lasergo/laser/embedlog"
	"github.com/lasergo/laser/govern"
	"github.com/lasergo/laser/iggy"
	"github.com/lasergo/laser/runtime"
)

func main() {
	log.SetOutput(io.Discard) // the Iggy SDK logs every login
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var tr runtime.Transport = embedlog.New("payments", embedlog.Config{})
	if addr := os.Getenv("LASER_IGGY_ADDR"); addr != "" {
		t, err := iggy.Dial(ctx, addr, iggy.Config{})
		if err != nil {
			fmt.Fprintln(os.Stderr, "payments:", err)
			os.Exit(1)
		}
		defer t.Close()
		tr = t
	}
	if err := run(ctx, tr, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "payments:", err)
		os.Exit(1)
	}
}

// run plays the three transfers and prints what the audit kept.
func run(ctx context.Context, tr runtime.Transport, out io.Writer) error {
	logger := slog.New(slog.NewTextHandler(io.Discard, nil))
	// The caller's and the treasurers' client is not governed: the policy
	// governs the payer, through its agent's gate.
	client := runtime.NewClient(tr, runtime.ClientConfig{Logger: logger})
	defer client.Close()
	if err := client.Bootstrap(ctx, 1, PayerListenTopic, TopicTransfers, govern.TopicProposals); err != nil {
		return err
	}
	policy := &Policy{Approved: map[string]bool{"acme": true}, LimitCents: 10_000_00, Treasurers: []string{"ann", "bob", "cy"}}
	// Two treasurers approve every proposal they read; cy is away.
	for _, treasurer := range []string{"ann", "bob"} {
		h, err := startTreasurer(ctx, client, treasurer)
		if err != nil {
			return err
		}
		defer func() { _ = h.Shutdown(context.WithoutCancel(ctx)) }()
	}
	payers := NewPayerClient(client, "accounts")
	// One gate per mode, each keeping its own evidence chain.
	gates := map[govern.Mode]*govern.Gate{}
	for _, mode := range []govern.Mode{govern.Enforce, govern.Observe} {
		gates[mode] = govern.NewGate(policy, govern.Config{Mode: mode, Producer: "payments-" + string(mode)})
	}
	wire := func(mode govern.Mode, t Transfer) (Receipt, error) {
		gate := gates[mode]
		cfg := PayerAgentConfig(&Payer{})
		cfg.EffectGate = gate
		agent, err := client.NewAgent(cfg)
		if err != nil {
			return Receipt{}, err
		}
		h := agent.Start(ctx)
		defer func() { _ = h.Shutdown(context.WithoutCancel(ctx)) }()
		if err := h.Ready(ctx); err != nil {
			return Receipt{}, err
		}
		return payers.WireFunds(ctx, t, runtime.WithTimeout(30*time.Second))
	}

	offshore := Transfer{To: "offshore-llc", Cents: 500_00}
	_, err := wire(govern.Enforce, offshore)
	var remote *runtime.Error
	if !(errors.As(err, &remote) && remote.Remote()) {
		return fmt.Errorf("enforce: the blocked transfer answered %v, want the policy's refusal", err)
	}
	fmt.Fprintf(out, "enforce: wire-funds %s to %s refused: %s\n", dollars(offshore.Cents), offshore.To, remote.Msg)

	if _, err := wire(govern.Observe, offshore); err != nil {
		return fmt.Errorf("observe: %w", err)
	}
	fmt.Fprintf(out, "observe: wire-funds %s to %s went out\n", dollars(offshore.Cents), offshore.To)

	large := Transfer{To: "acme", Cents: 25_000_00}
	if _, err := wire(govern.Enforce, large); err != nil {
		return fmt.Errorf("large transfer: %w", err)
	}
	fmt.Fprintf(out, "enforce: wire-funds %s to %s went out once %s approved\n", dollars(large.Cents), large.To, approvers(ctx, tr))

	return report(ctx, tr, out)
}

// startTreasurer runs an agent that approves every proposal it reads.
func startTreasurer(ctx context.Context, client *runtime.Client, name string) (*runtime.AgentHandle, error) {
	agent, err := client.NewAgent(runtime.AgentConfig{ID: name, Listen: govern.TopicProposals, Handler: runtime.HandlerFunc(func(hc *runtime.Ctx) error {
		env := hc.Message().Envelope
		if env == nil || env.Operation == nil || *env.Operation != govern.OperationProposal {
			return nil // votes ride the same topic
		}
		p, err := govern.DecodeProposal(env.Body)
		if err != nil {
			return runtime.Reject(err)
		}
		v, err := govern.NewVote(&p, name, govern.VoteAllow)
		if err != nil {
			return runtime.Reject(err)
		}
		return govern.CastVote(hc, hc.Client(), "", v, nil)
	})})
	if err != nil {
		return nil, err
	}
	h := agent.Start(ctx)
	return h, h.Ready(ctx)
}

// approvers names who approved the committed proposal on the log.
func approvers(ctx context.Context, tr runtime.Transport) string {
	props, votes, err := govern.ReadProposals(ctx, tr, "", nil)
	if err != nil || len(props) == 0 {
		return "nobody"
	}
	p := props[len(props)-1]
	res := govern.Tally(&p, votes, p.Deadline)
	names := res.Approve
	sort.Strings(names)
	return fmt.Sprintf("%s of %d treasurers (%s)", strings.Join(names, " and "), len(p.Voters), res.State)
}

// report prints the evidence on agent.audit and checks its chains.
func report(ctx context.Context, tr runtime.Transport, out io.Writer) error {
	entries, err := govern.ReadAudit(ctx, tr, "")
	if err != nil {
		return err
	}
	fmt.Fprintln(out, "agent.audit:")
	for _, e := range entries {
		ev := e.Evidence
		if ev == nil {
			return e.Err
		}
		fmt.Fprintf(out, "  %s %s %s of %s: %s -> %s (%s %s): %s\n", ev.Mode, ev.Action.Agent, ev.Action.Kind, ev.Action.EffectClass,
			ev.Verdict, ev.Outcome, ev.PolicyID, ev.PolicyVersion, ev.Reason)
	}
	findings := govern.Verify(entries, govern.VerifyOptions{})
	for _, f := range findings {
		fmt.Fprintln(out, "  broken:", f)
	}
	if len(findings) == 0 {
		fmt.Fprintf(out, "audit chains intact (%d records)\n", len(entries))
	}
	n, err := count(ctx, tr, TopicTransfers)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "%s holds %d transfers\n", TopicTransfers, n)
	return nil
}

// count returns how many records topic holds.
func count(ctx context.Context, tr runtime.Transport, topic string) (uint64, error) {
	parts, err := tr.Partitions(ctx, topic)
	if err != nil {
		return 0, err
	}
	var n uint64
	for p := range parts {
		end, err := tr.NextOffset(ctx, topic, p)
		if err != nil {
			return 0, err
		}
		n += end
	}
	return n, nil
}
