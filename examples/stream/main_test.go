package main

import (
	"bytes"
	"context"
	"testing"
	"time"

	"github.com/lasergo/laser/embedlog"
	"github.com/lasergo/laser/iggy"
	"github.com/lasergo/laser/internal/featuretest"
	"github.com/lasergo/laser/runtime"
)

const want = `caller: a story about a log
  once  upon  a  time  a  log  kept  every  word
caller: a story about a log, failing after 3 words
  once  upon  a
  writer failed: the model went away
`

func runOn(t *testing.T, tr runtime.Transport) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	var out bytes.Buffer
	if err := run(ctx, tr, &out); err != nil {
		t.Fatal(err)
	}
	if out.String() != want {
		t.Fatalf("output:\n%s\nwant:\n%s", out.String(), want)
	}
}

func TestStreamExamplePrintsPiecesAndTheHalfwayFailure(t *testing.T) {
	runOn(t, embedlog.New("stream", embedlog.Config{}))
}

func TestStreamExampleOverTheTestServer(t *testing.T) {
	runOn(t, featuretest.TestServer(t, "stream")(t))
}

func TestStreamExampleOverRealServer(t *testing.T) {
	addr := featuretest.RealServerAddr(t)
	tr, err := iggy.Dial(context.Background(), addr, iggy.Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer tr.Close()
	runOn(t, tr)
}
