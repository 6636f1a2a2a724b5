// Command review shows multi-agent coordination: a planner finds reviewers
// by capability in the agent registry, fans a draft out to them and gathers
// a quorum, asks a human to approve, and runs the publish step as a
// workflow that a second run resumes where the first stopped.
//
//	go run ./examples/review
//
// The human is simulated unless -human is given (with a server, since the
// `laser` command talks to one): then the planner waits for an answer given
// with `laser approvals` (list) and
// `laser approvals answer <correlation> approve|refuse [reason]`.
// With LASER_IGGY_ADDR set, the program runs on that Iggy server instead of
// the embedded log.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"
	"sync/atomic"
	"time"

	"github.com/lasergo/laser/embedlog"
	"github.com/lasergo/laser/fanout"
	"github.com/lasergo/laser/humaninput"
	"github.com/lasergo/laser/iggy"
	"github.com/lasergo/laser/registry"
	"github.com/lasergo/laser/runtime"
	"github.com/lasergo/laser/wire"
	"github.com/lasergo/laser/workflow"
)

const inbox = "review.inbox"

func main() {
	addr := flag.String("iggy", os.Getenv("LASER_IGGY_ADDR"), "run on this Iggy server (iggy://user:password@host:port/stream) instead of the embedded log")
	human := flag.Bool("human", false, "wait for a real human's answer (given with `laser approvals`) instead of simulating one")
	flag.Parse()
	if *human && *addr == "" {
		fmt.Fprintln(os.Stderr, "review: -human needs a server (-iggy or LASER_IGGY_ADDR): `laser approvals` cannot reach the embedded log")
		os.Exit(2)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	var tr runtime.Transport = embedlog.New("review", embedlog.Config{})
	if *addr != "" {
		t, err := iggy.Dial(ctx, *addr, iggy.Config{})
		if err != nil {
			fmt.Fprintln(os.Stderr, "review:", err)
			os.Exit(1)
		}
		defer t.Close()
		tr = t
	}
	if err := run(ctx, tr, !*human, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "review:", err)
		os.Exit(1)
	}
}

// run starts the agents, then plays the planner.
func run(ctx context.Context, tr runtime.Transport, simulateHuman bool, out io.Writer) error {
	logger := slog.New(slog.NewTextHandler(io.Discard, nil))
	client := runtime.NewClient(tr, runtime.ClientConfig{Logger: logger})
	defer client.Close()
	var handles []*runtime.AgentHandle
	defer func() {
		for _, h := range handles {
			_ = h.Shutdown(context.WithoutCancel(ctx))
		}
	}()
	// start runs an agent on the inbox; one with a card publishes it on
	// agent.registry as it starts.
	start := func(id string, card *wire.AgentCard, fn func(*runtime.Ctx) error) error {
		cfg := runtime.AgentConfig{ID: id, Listen: inbox, Respond: runtime.TopicResponses, Card: card, Handler: runtime.HandlerFunc(fn)}
		if card != nil {
			cfg.CardTopic = runtime.TopicRegistry
		}
		a, err := client.NewAgent(cfg)
		if err != nil {
			return err
		}
		h := a.Start(ctx)
		handles = append(handles, h)
		return h.Ready(ctx)
	}
	if err := client.Bootstrap(ctx, 2, inbox, runtime.TopicRegistry); err != nil {
		return err
	}

	// Reviewers advertise the "review" skill on their cards; rev-cy is
	// unavailable, so routing goes around it, and rev-dee answers only once
	// the planner has its quorum, so it is the straggler the fan-out
	// cancels.
	healthy, down := wire.HealthHealthy, wire.HealthUnavailable
	quorum := make(chan struct{})
	for _, r := range []struct {
		id     string
		health *wire.Health
	}{{"rev-ana", &healthy}, {"rev-bo", &healthy}, {"rev-cy", &down}, {"rev-dee", &healthy}} {
		id := r.id
		card := &wire.AgentCard{Name: id, Version: "1", Capabilities: []wire.CapabilityDescriptor{{SkillID: "review", Health: r.health}}}
		if err := start(id, card, func(c *runtime.Ctx) error {
			if id == "rev-dee" {
				select {
				case <-quorum:
				case <-c.Done():
					return c.Err()
				}
			}
			return c.Respond([]byte("lgtm from " + id))
		}); err != nil {
			return err
		}
	}
	// The publisher and the announcer serve the publish workflow.
	var published atomic.Int32
	if err := start("publisher", nil, func(c *runtime.Ctx) error {
		published.Add(1)
		return c.Respond([]byte("published " + string(c.Message().Body())))
	}); err != nil {
		return err
	}
	if err := start("announcer", nil, func(c *runtime.Ctx) error {
		return c.Respond([]byte("announced"))
	}); err != nil {
		return err
	}

	// 1. Find reviewers by capability.
	reg := registry.New(tr, registry.Config{})
	if err := reg.Refresh(ctx); err != nil {
		return err
	}
	reviewers, err := reg.Resolve(registry.AllCapable("review"))
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "planner: reviewers by capability: %s\n", strings.Join(reviewers, ", "))

	// 2. Fan the draft out and gather a quorum of two.
	draft := []byte("draft: coordination section")
	g, err := fanout.Send(ctx, client, reg, fanout.Request{Skill: "review", Topic: inbox, From: "planner", Body: draft},
		fanout.Quorum(2), runtime.WithTimeout(30*time.Second))
	if err != nil {
		return err
	}
	close(quorum)
	fmt.Fprintf(out, "planner: quorum reached with %d reviews, %d straggler cancelled\n", len(g.OK), len(g.Cancelled))

	// 3. Ask a human to approve.
	conv := client.IDs().NewID()
	if simulateHuman {
		go approve(ctx, client, conv)
	} else {
		fmt.Fprintln(out, "planner: waiting for approval; answer with `laser approvals`")
	}
	answer, err := humaninput.Ask(ctx, client, humaninput.Request{From: "planner", Prompt: []byte("publish the reviewed draft?"),
		Conversation: conv, Timeout: 10 * time.Minute})
	if errors.Is(err, humaninput.ErrRefused) {
		fmt.Fprintf(out, "planner: %v; not publishing\n", err)
		return nil
	}
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "planner: human answered %q\n", answer)

	// 4. Publish as a workflow; the first run stops after its first step
	// (an invocation budget of one stands in for a crash), the second
	// resumes it under the same run id and skips the completed step.
	steps := []workflow.Step{
		{Label: "publish", Route: registry.To("publisher"), Input: func(map[string][]byte) []byte { return draft }},
		{Label: "announce", After: []string{"publish"}, Route: registry.To("announcer")},
	}
	wf := &workflow.Workflow{Name: "planner", Steps: steps, Inbox: inbox, RunID: client.IDs().NewID(), Budget: workflow.Budget{Invocations: 1}}
	var be *workflow.BudgetExceededError
	if _, err := wf.Run(ctx, client); !errors.As(err, &be) {
		return fmt.Errorf("the first workflow run was meant to stop after publish: %v", err)
	}
	fmt.Fprintln(out, "planner: the first workflow run stopped before announce")
	resumed := &workflow.Workflow{Name: "planner", Steps: steps, Inbox: inbox, RunID: wf.RunID}
	outcome, err := resumed.Run(ctx, client)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "planner: resumed run skipped %v and finished: %s, %s\n", outcome.Skipped, outcome.Outputs["publish"], outcome.Outputs["announce"])
	fmt.Fprintf(out, "done: the publisher ran %d time(s)\n", published.Load())
	return nil
}

// approve is the simulated human: it approves the planner's request in conv.
func approve(ctx context.Context, client *runtime.Client, conv wire.ID) {
	for ctx.Err() == nil {
		pending, _ := humaninput.Pending(ctx, client.Transport(), "")
		for _, m := range pending {
			if m.Envelope.Conversation == conv {
				_ = humaninput.Answer(ctx, client, "", "editor-in-chief", m, false, []byte("approved"), nil)
				return
			}
		}
		time.Sleep(10 * time.Millisecond)
	}
}
