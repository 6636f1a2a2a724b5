package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/lasergo/laser/conversation"
	"github.com/lasergo/laser/crashcontext"
	"github.com/lasergo/laser/wire"
)

// crashCommand prints what was happening in one conversation right before
// a crash: its journal tail, its newest dead letter, its last decision.
func (a *app) crashCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "crash CONVERSATION",
		Short: "what a conversation was doing right before it crashed: journal tail, dead letter, last decision",
		Args:  exactArgs(1, "one CONVERSATION id"),
	}
	sf := a.serverFlags(cmd)
	last := cmd.Flags().Int("last", 20, "journal records to show (at least 1)")
	keysFile := cmd.Flags().String("keys", "", "file of enrolled keys: the journal shows only records whose signature verifies, and a dead letter counts only when its capsule's does")
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		conv, err := wire.ParseID(args[0])
		if err != nil {
			return usagef("%q is not a conversation id (a ULID): %v", args[0], err)
		}
		if *last < 1 {
			return usagef("--last %d: show at least 1 record", *last)
		}
		opts := crashcontext.Options{Journal: conversation.Options{Policy: conversation.LastN(*last)}}
		if *keysFile != "" {
			if opts.Keys, err = loadKeys(*keysFile); err != nil {
				return err
			}
		}
		ctx := cmd.Context()
		t, err := sf.dial(ctx)
		if err != nil {
			return err
		}
		defer t.Close()
		cc, err := crashcontext.Read(ctx, t, conv, opts)
		if err != nil {
			return err
		}
		if cc.Refused > 0 {
			fmt.Fprintf(a.stderr, "laser: %d capsule(s) of this conversation left out: their signature does not verify with --keys, or they parked another conversation's message\n", cc.Refused)
		}
		if a.json {
			return a.printJSON(crashView(cc))
		}
		_, err = fmt.Fprint(a.stdout, cc.Summary())
		return err
	}
	return cmd
}

// crashJSON is `laser crash --json`.
type crashJSON struct {
	Conversation string        `json:"conversation"`
	Journal      []journalJSON `json:"journal"`
	DeadLetter   *deadJSON     `json:"dead_letter"`
	LastDecision *decisionJSON `json:"last_decision"`
	// Verified says --keys checked the journal's and the capsule's
	// signatures; Refused counts the capsules that failed.
	Verified bool `json:"verified"`
	Refused  int  `json:"refused,omitempty"`
}

type journalJSON struct {
	Topic    string `json:"topic"`
	Position string `json:"position"`
	Agent    string `json:"agent,omitempty"`
	Body     string `json:"body"`
}

type deadJSON struct {
	Position string `json:"position"`
	Reason   string `json:"reason"`
	Attempts uint32 `json:"attempts"`
	Detail   string `json:"detail,omitempty"`
	Payload  string `json:"payload"`
	// Signed says --keys verified the capsule and the parked message is
	// an envelope of this conversation; a plain message's provenance is
	// unverified.
	Signed bool `json:"signed"`
}

type decisionJSON struct {
	Position string `json:"position"`
	Outcome  string `json:"outcome"`
	Kind     string `json:"kind"`
	Topic    string `json:"topic"`
	Agent    string `json:"agent,omitempty"`
	Reason   string `json:"reason,omitempty"`
	At       string `json:"at"`
}

func crashView(cc *crashcontext.Context) crashJSON {
	v := crashJSON{Conversation: cc.Conversation.String(), Journal: []journalJSON{}, Verified: cc.Verified, Refused: cc.Refused}
	for _, m := range cc.Journal {
		v.Journal = append(v.Journal, journalJSON{Topic: m.Topic, Position: m.Position.String(), Agent: m.Provenance.Agent, Body: string(m.Body())})
	}
	if dl := cc.DeadLetter; dl != nil {
		d := &deadJSON{Position: dl.At.String(), Reason: dl.Capsule.Reason.String(), Attempts: dl.Capsule.Attempts, Payload: string(dl.Capsule.Payload), Signed: dl.Signed}
		if dl.Capsule.Detail != nil {
			d.Detail = *dl.Capsule.Detail
		}
		v.DeadLetter = d
	}
	if e := cc.LastDecision; e != nil {
		ev := e.Evidence
		v.LastDecision = &decisionJSON{Position: e.At.String(), Outcome: string(ev.Outcome), Kind: ev.Action.Kind, Topic: ev.Action.Topic,
			Agent: ev.Action.Agent, Reason: ev.Reason, At: ev.At.UTC().Format("2006-01-02T15:04:05.000Z")}
	}
	return v
}
