package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/lasergo/laser/embedlog"
)

func TestChatExampleAnswersFromTheWholeConversationAcrossARestart(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var out bytes.Buffer
	if err := run(ctx, embedlog.New("chat", embedlog.Config{}), &out); err != nil {
		t.Fatalf("%v\noutput:\n%s", err, out.String())
	}
	want := `-- first run
ada (conversation 6SKXVDFD4S6D2NZ5YV17VEZXC6): my name is Ada
historian: 1 turns so far, 0 answered; you said: my name is Ada
bob (conversation 6JTNNDFCA8R2H45ZBF17JZWNMH): I am Bob
historian: 1 turns so far, 0 answered; you said: I am Bob
ada (conversation 6SKXVDFD4S6D2NZ5YV17VEZXC6): I like tea
historian: 3 turns so far, 1 answered; you said: my name is Ada / I like tea
memory: the historian has remembered 2 of ada's questions
-- restart: new client, new agents, same log
ada (conversation 6SKXVDFD4S6D2NZ5YV17VEZXC6): what do you know about me?
historian: 5 turns so far, 2 answered; you said: my name is Ada / I like tea / what do you know about me?
bob (conversation 6JTNNDFCA8R2H45ZBF17JZWNMH): and me?
historian: 3 turns so far, 1 answered; you said: I am Bob / and me?
memory: the historian has remembered 3 of ada's questions
`
	if got := out.String(); got != want {
		t.Fatalf("output:\n%s\nwant:\n%s", got, want)
	}
	if strings.Count(want, "6SKXVDFD4S6D2NZ5YV17VEZXC6") != 3 {
		t.Fatal("ada's conversation id is not the derived one")
	}
}
