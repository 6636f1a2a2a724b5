package main

import (
	"bytes"
	"context"
	"testing"
	"time"
)

func TestHelloExampleExchangesARequestAndAReply(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	var out bytes.Buffer
	if err := run(ctx, &out); err != nil {
		t.Fatal(err)
	}
	want := "greeter: got a request from caller for \"Ada\"\n" +
		"caller: greeter answered \"hello, Ada\"\n" +
		"done: both agents shut down cleanly\n"
	if out.String() != want {
		t.Fatalf("output:\n%s\nwant:\n%s", out.String(), want)
	}
}
