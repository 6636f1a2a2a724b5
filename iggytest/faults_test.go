package iggytest_test

import (
	"net"
	"testing"

	iggcon "github.com/apache/iggy/foreign/go/contracts"
	ierror "github.com/apache/iggy/foreign/go/errors"

	"github.com/lasergo/laser/iggytest"
)

func TestDropConnectionsBreaksOpenClients(t *testing.T) {
	s := iggytest.Start(t)
	c := login(t, s)
	s.DropConnections()
	if err := c.Ping(); err == nil {
		t.Fatal("ping on a dropped connection succeeded")
	}
	if err := login(t, s).Ping(); err != nil {
		t.Fatalf("a new connection after the drop: %v", err)
	}
}

func TestHangHoldsRequestsUntilUnhang(t *testing.T) {
	s := iggytest.Start(t)
	c := login(t, s)
	s.Hang(iggytest.CmdGetStreams)
	done := make(chan error, 1)
	go func() {
		_, err := c.GetStreams()
		done <- err
	}()
	if err := s.WaitHeld(t.Context(), 1); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		t.Fatalf("hung request answered: %v", err)
	default:
	}
	s.Unhang()
	if err := <-done; err != nil {
		t.Fatalf("released request: %v", err)
	}
}

func TestHangZeroHoldsEveryCommand(t *testing.T) {
	s := iggytest.Start(t)
	c := dial(t, s)
	s.Hang(0)
	done := make(chan error, 1)
	go func() { done <- c.Ping() }()
	if err := s.WaitHeld(t.Context(), 1); err != nil {
		t.Fatal(err)
	}
	s.Unhang()
	if err := <-done; err != nil {
		t.Fatalf("ping: %v", err)
	}
}

func TestHungRequestEndsWhenItsConnectionDrops(t *testing.T) {
	s := iggytest.Start(t)
	c := login(t, s)
	s.Hang(iggytest.CmdGetStreams)
	done := make(chan error, 1)
	go func() {
		_, err := c.GetStreams()
		done <- err
	}()
	if err := s.WaitHeld(t.Context(), 1); err != nil {
		t.Fatal(err)
	}
	s.DropConnections()
	if err := <-done; err == nil {
		t.Fatal("hung request succeeded after the drop")
	}
}

func TestFailNextAnswersTheNextRequestsWithAStatus(t *testing.T) {
	s := iggytest.Start(t)
	c := groupSetup(t, s, 1)
	send(t, c, iggcon.PartitionId(0), "x")
	s.FailNext(iggytest.CmdStoreOffset, iggytest.StatusStaleClient, 2)
	store := func() error {
		return c.StoreConsumerOffset(iggcon.DefaultConsumer(), id(t, "s"), id(t, "t"), 0, ptr(0))
	}
	wantCode(t, store(), ierror.StaleClientCode)
	wantCode(t, store(), ierror.StaleClientCode)
	if err := store(); err != nil {
		t.Fatalf("third store: %v", err)
	}
	if got := s.Requests(iggytest.CmdStoreOffset); got != 3 {
		t.Fatalf("store requests = %d, want 3", got)
	}
}

func TestStopAcceptingRefusesNewConnections(t *testing.T) {
	s := iggytest.Start(t)
	c := login(t, s)
	s.StopAccepting()
	if nc, err := net.Dial("tcp", s.Addr()); err == nil {
		_ = nc.Close()
		t.Fatal("dial succeeded while not accepting")
	}
	if err := c.Ping(); err != nil {
		t.Fatalf("open connection broke: %v", err)
	}
	if err := s.Resume(); err != nil {
		t.Fatalf("resume: %v", err)
	}
	if err := login(t, s).Ping(); err != nil {
		t.Fatalf("connection after resume: %v", err)
	}
}

func TestCloseEndsHeldRequests(t *testing.T) {
	s := iggytest.Start(t)
	c := login(t, s)
	s.Hang(0)
	done := make(chan error, 1)
	go func() { done <- c.Ping() }()
	if err := s.WaitHeld(t.Context(), 1); err != nil {
		t.Fatal(err)
	}
	s.Close()
	if err := <-done; err == nil {
		t.Fatal("held ping succeeded after Close")
	}
}
