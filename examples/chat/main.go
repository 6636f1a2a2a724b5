// Command chat runs a two-agent chat whose second agent answers from the
// conversation read back from the log. A front desk forwards what a user
// says to a historian; the historian assembles the conversation so far
// (conversation.AssembleFor) and answers from it. The program then stops
// both agents, starts new ones as a restarted process would, and the
// historian still sees the whole conversation, because it lives in the log,
// not in the agents. Each user has one conversation across runs: its id is
// derived from the user's name (conversation.PerUser), exactly as the other
// laser SDKs derive it.
//
//	go run ./examples/chat                       # on the embedded log
//	go run ./examples/chat -iggy iggy://iggy:iggy@127.0.0.1:8090/chat
//
// With LASER_IGGY_ADDR set, the program runs on that Iggy server instead;
// run it twice and the second run continues the users' conversations.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log"
	"log/slog"
	"os"
	"strings"
	"time"

	"github.com/lasergo/laser/conversation"
	"github.com/lasergo/laser/iggy"
	"github.com/lasergo/laser/memlog"
	"github.com/lasergo/laser/memory"
	"github.com/lasergo/laser/runtime"
	"github.com/lasergo/laser/wire"
)

// inbox is where users talk to the front desk.
const inbox = "chat.inbox"

func main() {
	log.SetOutput(io.Discard) // the Iggy SDK logs every login
	addr := flag.String("iggy", os.Getenv("LASER_IGGY_ADDR"), "run on this Iggy server (iggy://user:password@host:port/stream) instead of the embedded log")
	flag.Parse()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	var tr runtime.Transport = memlog.New("chat")
	if *addr != "" {
		t, err := iggy.Dial(ctx, *addr)
		if err != nil {
			fmt.Fprintln(os.Stderr, "chat:", err)
			os.Exit(1)
		}
		defer t.Close()
		tr = t
	}
	if err := run(ctx, tr, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "chat:", err)
		os.Exit(1)
	}
}

// run holds two sessions on one log, the second after a restart.
func run(ctx context.Context, tr runtime.Transport, out io.Writer) error {
	fmt.Fprintln(out, "-- first run")
	if err := session(ctx, tr, out, []line{
		{"ada", "my name is Ada"},
		{"bob", "I am Bob"},
		{"ada", "I like tea"},
	}); err != nil {
		return err
	}
	fmt.Fprintln(out, "-- restart: new client, new agents, same log")
	return session(ctx, tr, out, []line{
		{"ada", "what do you know about me?"},
		{"bob", "and me?"},
	})
}

// line is something a user says.
type line struct{ user, text string }

// session starts the agents on a fresh client, says the lines one by one
// and stops the agents.
func session(ctx context.Context, tr runtime.Transport, out io.Writer, lines []line) error {
	logger := slog.New(slog.NewTextHandler(io.Discard, nil))
	client := runtime.NewClient(tr, runtime.ClientOptions{Logger: logger})
	defer client.Close()
	if err := client.Bootstrap(ctx, 2, inbox); err != nil {
		return err
	}
	mem := memory.New(client, memory.Options{Logger: logger})
	answers := make(chan string, 1)
	consumer := runtime.ConsumerConfig{Logger: logger}

	// The historian answers each question from the conversation so far,
	// and remembers every question it answered.
	historian, err := client.NewAgent(runtime.AgentConfig{
		ID: "historian", Listen: runtime.TopicCommands, Respond: runtime.TopicResponses, Consumer: consumer,
		Handler: memory.Remembering(runtime.HandlerFunc(answer), mem, memory.Message),
	})
	if err != nil {
		return err
	}
	// The front desk forwards what a user says and prints the answer.
	desk, err := client.NewAgent(runtime.AgentConfig{
		ID: "desk", Listen: inbox, Respond: runtime.TopicResponses, Consumer: consumer,
		Handler: runtime.HandlerFunc(func(c *runtime.Ctx) error {
			reply, err := c.Request(runtime.TopicCommands, "historian", c.Message().Body(), runtime.WithTimeout(10*time.Second))
			if err != nil {
				return err
			}
			answers <- string(reply.Body())
			return nil
		}),
	})
	if err != nil {
		return err
	}
	handles := []*runtime.AgentHandle{historian.Start(ctx), desk.Start(ctx)}
	for _, h := range handles {
		if err := h.Ready(ctx); err != nil {
			return err
		}
	}

	for _, l := range lines {
		conv := conversation.PerUser.ConversationFor(l.user, nil)
		fmt.Fprintf(out, "%s (conversation %s): %s\n", l.user, conv, l.text)
		if _, err := client.SendPlain(ctx, inbox, wire.Provenance{Conversation: conv, Agent: l.user}, []byte(l.text)); err != nil {
			return err
		}
		select {
		case a := <-answers:
			fmt.Fprintf(out, "historian: %s\n", a)
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	for _, h := range handles {
		if err := h.Shutdown(ctx); err != nil {
			return err
		}
	}
	items, err := mem.Recall(ctx, memory.Scope{Conversation: conversation.Derive("ada")}, memory.Query{})
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "memory: the historian has remembered %d of ada's questions\n", len(items))
	return nil
}

// answer is the historian's "model": it reads the conversation back and
// answers with what the user has said so far.
func answer(c *runtime.Ctx) error {
	history, err := conversation.AssembleFor(c, conversation.Options{})
	if err != nil {
		return err
	}
	var said []string
	for _, m := range (conversation.ByAgent{"desk"}).Select(history) {
		said = append(said, string(m.Body()))
	}
	answered := len(conversation.ByAgent{"historian"}.Select(history))
	return c.Respond(fmt.Appendf(nil, "%d turns so far, %d answered; you said: %s",
		len(history), answered, strings.Join(said, " / ")))
}
