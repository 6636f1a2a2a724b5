package main

import (
	"bytes"
	"context"
	"testing"
	"time"

	"github.com/lasergo/laser/embedlog"
	"github.com/lasergo/laser/iggy"
	"github.com/lasergo/laser/iggytest"
	"github.com/lasergo/laser/internal/featuretest"
	"github.com/lasergo/laser/runtime"
)

const want = "planner: reviewers by capability: rev-ana, rev-bo, rev-dee\n" +
	"planner: quorum reached with 2 reviews, 1 straggler cancelled\n" +
	"planner: human answered \"approved\"\n" +
	"planner: the first workflow run stopped before announce\n" +
	"planner: resumed run skipped [publish] and finished: published draft: coordination section, announced\n" +
	"done: the publisher ran 1 time(s)\n"

func check(t *testing.T, tr runtime.Transport) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var out bytes.Buffer
	if err := run(ctx, tr, true, &out); err != nil {
		t.Fatal(err)
	}
	if out.String() != want {
		t.Fatalf("output:\n%s\nwant:\n%s", out.String(), want)
	}
}

func TestReviewExampleOnTheEmbeddedLog(t *testing.T) { check(t, embedlog.New("review")) }

func TestReviewExampleOnTheTestServer(t *testing.T) {
	s := iggytest.Start(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	tr, err := iggy.Dial(ctx, "iggy://iggy:iggy@"+s.Addr()+"/review_example")
	if err != nil {
		t.Fatal(err)
	}
	defer tr.Close()
	check(t, tr)
}

// TestReviewExampleOnARealServer runs the example against the Iggy server
// named by LASER_IGGY_ADDR.
func TestReviewExampleOnARealServer(t *testing.T) {
	addr := featuretest.RealServerAddr(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	tr, err := iggy.Dial(ctx, addr)
	if err != nil {
		t.Fatal(err)
	}
	defer tr.Close()
	check(t, tr)
}
