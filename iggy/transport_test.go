package iggy_test

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/apache/iggy/foreign/go/client"
	"github.com/apache/iggy/foreign/go/client/tcp"
	iggcon "github.com/apache/iggy/foreign/go/contracts"
	ierror "github.com/apache/iggy/foreign/go/errors"

	"github.com/lasergo/laser/iggy"
	"github.com/lasergo/laser/iggytest"
	"github.com/lasergo/laser/internal/xxh32"
	"github.com/lasergo/laser/lasertest"
	"github.com/lasergo/laser/runtime"
	"github.com/lasergo/laser/runtime/transporttest"
	"github.com/lasergo/laser/wire"
)

func connString(s *iggytest.Server) string { return "iggy://iggy:iggy@" + s.Addr() + "/laser_test" }

// ready dials a transport to s with topic "t" of n partitions.
func ready(t *testing.T, s *iggytest.Server, partitions uint32, cfg iggy.Config) *iggy.Transport {
	t.Helper()
	tr := dialTransport(t, connString(s), cfg)
	if err := tr.EnsureTopics(t.Context(), partitions, "t"); err != nil {
		t.Fatalf("EnsureTopics: %v", err)
	}
	return tr
}

func records(prefix string, n int) []runtime.Outgoing {
	out := make([]runtime.Outgoing, n)
	for i := range out {
		out[i] = runtime.Outgoing{Key: "k", Payload: fmt.Appendf(nil, "%s-%d", prefix, i)}
	}
	return out
}

func payloads(recs []runtime.Incoming) []string {
	out := make([]string, len(recs))
	for i, r := range recs {
		out[i] = string(r.Payload)
	}
	return out
}

func joinSub(t *testing.T, tr *iggy.Transport, group string) runtime.Subscription {
	t.Helper()
	sub, err := tr.Join(t.Context(), "t", group)
	if err != nil {
		t.Fatalf("Join: %v", err)
	}
	t.Cleanup(func() { _ = sub.Close() })
	return sub
}

// sdk connects the official SDK as a second, independent producer.
func sdk(t *testing.T, s *iggytest.Server) iggcon.Client {
	t.Helper()
	c, err := client.NewIggyClient(client.WithTcp(tcp.WithServerAddress(s.Addr())))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	if _, err := c.LoginUser("iggy", "iggy"); err != nil {
		t.Fatal(err)
	}
	return c
}

func ident(t *testing.T, name string) iggcon.Identifier {
	t.Helper()
	id, err := iggcon.NewIdentifier(name)
	if err != nil {
		t.Fatal(err)
	}
	return id
}

func TestDialToAClosedPortFailsWithinTheDialTimeout(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	_ = ln.Close()
	start := time.Now()
	_, err = iggy.Dial(t.Context(), "iggy://iggy:iggy@"+addr+"/s", iggy.Config{DialTimeout: time.Second})
	if err == nil {
		t.Fatal("Dial to a closed port succeeded")
	}
	if elapsed := time.Since(start); elapsed > 2*time.Second {
		t.Errorf("Dial took %v, want it bounded by the 1s dial timeout", elapsed)
	}
	if !lost(err) || !strings.Contains(err.Error(), "cannot reach Iggy at "+addr) {
		t.Errorf("err = %v; want a disconnected error naming the address", err)
	}
}

func TestDialWithBadCredentialsFailsPermanently(t *testing.T) {
	s := iggytest.Start(t, iggytest.Config{})
	_, err := iggy.Dial(t.Context(), "iggy://iggy:wrong@"+s.Addr()+"/s", iggy.Config{})
	var ie ierror.IggyError
	if !errors.As(err, &ie) || ie.Code() != ierror.InvalidCredentialsCode {
		t.Fatalf("err = %v, want InvalidCredentials", err)
	}
	if errors.Is(err, runtime.ErrTransient) {
		t.Errorf("bad credentials reported as transient: %v", err)
	}
}

func TestDialWithPersonalAccessToken(t *testing.T) {
	s := iggytest.Start(t, iggytest.Config{Tokens: []string{"ci-token"}})
	tr := dialTransport(t, "iggy+pat://ci-token@"+s.Addr()+"/s", iggy.Config{})
	if err := tr.EnsureTopics(t.Context(), 1, "t"); err != nil {
		t.Fatalf("EnsureTopics after a token login: %v", err)
	}
}

func TestEnsureTopicsIsIdempotentAcrossTransports(t *testing.T) {
	s := iggytest.Start(t, iggytest.Config{})
	a, b := dialTransport(t, connString(s), iggy.Config{}), dialTransport(t, connString(s), iggy.Config{})
	ctx := t.Context()
	for _, tr := range []*iggy.Transport{a, b, a} {
		if err := tr.EnsureTopics(ctx, 2, "x", "y"); err != nil {
			t.Fatalf("EnsureTopics: %v", err)
		}
	}
	c := sdk(t, s)
	st, err := c.GetStream(ident(t, "laser_test"))
	if err != nil || len(st.Topics) != 2 {
		t.Fatalf("stream = %+v, %v; want two topics", st, err)
	}
	td, err := c.GetTopic(ident(t, "laser_test"), ident(t, "x"))
	if err != nil || td.CompressionAlgorithm != 1 || td.MessageExpiry != iggcon.IggyExpiryNeverExpire {
		t.Fatalf("topic = %+v, %v; want uncompressed (1), never expiring", td, err)
	}
}

func TestCallToAHungServerTimesOutTransiently(t *testing.T) {
	s := iggytest.Start(t, iggytest.Config{})
	tr := ready(t, s, 1, iggy.Config{CallTimeout: 150 * time.Millisecond})
	ctx := t.Context()
	s.Hang(iggytest.CmdGetTopic)
	_, err := tr.Partitions(ctx, "t")
	if !errors.Is(err, iggy.ErrTimeout) || !errors.Is(err, runtime.ErrTransient) {
		t.Fatalf("err = %v, want a transient ErrTimeout", err)
	}
	s.Unhang()
	if n, err := tr.Partitions(ctx, "t"); err != nil || n != 1 {
		t.Fatalf("after unhang Partitions = %d, %v; want a rebuilt connection", n, err)
	}
	// The abandoned connection was closed: once its held request is
	// released the server ends that session, leaving the rebuilt one.
	if err := s.WaitConnections(ctx, 1); err != nil {
		t.Fatalf("abandoned connection still open: %v", err)
	}
}

func TestDroppedConnectionIsRebuiltOnTheNextCall(t *testing.T) {
	s := iggytest.Start(t, iggytest.Config{})
	tr := ready(t, s, 1, iggy.Config{})
	ctx := t.Context()
	s.DropConnections()
	_, err := tr.Partitions(ctx, "t")
	if !lost(err) {
		t.Fatalf("first call after the drop: %v, want a disconnected error", err)
	}
	if n, err := tr.Partitions(ctx, "t"); err != nil || n != 1 {
		t.Fatalf("second call = %d, %v; want the rebuilt connection to answer", n, err)
	}
	if got := s.Requests(iggytest.CmdLogin); got != 2 {
		t.Errorf("logins = %d, want 2 (dial and rebuild)", got)
	}
}

func TestReconnectWaitsOutTheBackoffAfterAFailedAttempt(t *testing.T) {
	s := iggytest.Start(t, iggytest.Config{})
	clock := lasertest.NewManualClock(time.Unix(1000, 0))
	tr := ready(t, s, 1, iggy.Config{Clock: clock, ReconnectBackoff: time.Second, ReconnectBackoffMax: 4 * time.Second})
	ctx := t.Context()
	s.StopAccepting()
	s.DropConnections()
	if _, err := tr.Partitions(ctx, "t"); !lost(err) {
		t.Fatalf("call on the dropped connection: %v", err)
	}
	if _, err := tr.Partitions(ctx, "t"); !lost(err) || !strings.Contains(err.Error(), "cannot reach") {
		t.Fatalf("first reconnect with the server down: %v", err)
	}
	// The next attempt waits a backoff of 1s on the clock; a caller that
	// gives up first gets a non-transient context error and no dial.
	short, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := tr.Partitions(short, "t"); err == nil || !errors.Is(err, context.Canceled) {
		t.Fatalf("call during the backoff: %v, want the context error", err)
	}
	if err := s.Resume(); err != nil {
		t.Fatal(err)
	}
	clock.Advance(time.Second)
	if n, err := tr.Partitions(ctx, "t"); err != nil || n != 1 {
		t.Fatalf("call after the backoff = %d, %v", n, err)
	}
}

func TestSubscriptionResumesAfterADropMidPoll(t *testing.T) {
	s := iggytest.Start(t, iggytest.Config{})
	tr := ready(t, s, 1, iggy.Config{})
	ctx := t.Context()
	recs := records("r", 10)
	if _, err := tr.Publish(ctx, "t", recs...); err != nil {
		t.Fatal(err)
	}
	sub := joinSub(t, tr, "g")
	first, err := sub.Poll(ctx, 3)
	if err != nil || len(first) != 3 {
		t.Fatalf("first poll = %d records, %v", len(first), err)
	}
	s.Hang(iggytest.CmdPoll)
	done := make(chan error, 1)
	go func() {
		_, err := sub.Poll(ctx, 100)
		done <- err
	}()
	if err := s.WaitHeld(ctx, 1); err != nil {
		t.Fatal(err)
	}
	s.DropConnections()
	if err := <-done; !lost(err) {
		t.Fatalf("poll cut by the drop: %v, want a disconnected error", err)
	}
	// Let the server end the dropped sessions (and their membership) first,
	// or the rejoined member would wait for the rebalance.
	if err := s.WaitConnections(ctx, 0); err != nil {
		t.Fatal(err)
	}
	s.Unhang()
	rest, err := sub.Poll(ctx, 100)
	if err != nil {
		t.Fatalf("poll after the drop: %v", err)
	}
	got := append(payloads(first), payloads(rest)...)
	want := make([]string, len(recs))
	for i, r := range recs {
		want[i] = string(r.Payload)
	}
	if !slices.Equal(got, want) {
		t.Fatalf("polled %q, want every record once in order", got)
	}
	// The rebuilt connection rejoined the group, so commits go through.
	if err := sub.Commit(ctx, 0, 9); err != nil {
		t.Fatalf("commit after the rejoin: %v", err)
	}
	// The drop cut the control connection too; a fresh transport checks.
	check := dialTransport(t, connString(s), iggy.Config{})
	if off, ok, err := check.StoredOffset(ctx, "t", "g", 0); err != nil || !ok || off != 9 {
		t.Fatalf("stored offset = %d, %v, %v", off, ok, err)
	}
}

func TestCommitSurfacesAnInjectedFailure(t *testing.T) {
	s := iggytest.Start(t, iggytest.Config{})
	tr := ready(t, s, 1, iggy.Config{})
	ctx := t.Context()
	if _, err := tr.Publish(ctx, "t", records("r", 2)...); err != nil {
		t.Fatal(err)
	}
	sub := joinSub(t, tr, "g")
	s.FailNext(iggytest.CmdStoreOffset, iggytest.StatusInvalidOffset, 1)
	err := sub.Commit(ctx, 0, 1)
	var ie ierror.IggyError
	if !errors.As(err, &ie) || ie.Code() != ierror.InvalidOffsetCode || errors.Is(err, runtime.ErrTransient) {
		t.Fatalf("commit = %v, want a permanent InvalidOffset", err)
	}
	s.FailNext(iggytest.CmdStoreOffset, iggytest.StatusError, 1)
	if err := sub.Commit(ctx, 0, 1); !errors.Is(err, runtime.ErrTransient) || errors.Is(err, runtime.ErrDisconnected) {
		t.Fatalf("commit = %v, want the generic code 1 as transient", err)
	}
	if err := sub.Commit(ctx, 0, 1); err != nil {
		t.Fatalf("commit without an injected failure: %v", err)
	}
}

func TestLostSessionRejoinsOnTheNextCall(t *testing.T) {
	s := iggytest.Start(t, iggytest.Config{})
	tr := ready(t, s, 1, iggy.Config{})
	ctx := t.Context()
	if _, err := tr.Publish(ctx, "t", records("r", 1)...); err != nil {
		t.Fatal(err)
	}
	sub := joinSub(t, tr, "g")
	s.FailNext(iggytest.CmdPoll, iggytest.StatusConsumerGroupMemberNotFound, 1)
	if _, err := sub.Poll(ctx, 10); !errors.Is(err, runtime.ErrTransient) {
		t.Fatalf("poll = %v, want a transient error", err)
	}
	// The server drops the old connection's membership asynchronously, so
	// the rejoined member may own nothing for a moment; it must get the
	// record once the group settles.
	if got := transporttest.PollUntil(t, sub, 1); len(got) != 1 {
		t.Fatalf("poll after rejoin = %d records", len(got))
	}
	if joins := s.Requests(iggytest.CmdJoinConsumerGroup); joins != 2 {
		t.Errorf("joins = %d, want 2", joins)
	}
}

func TestPublishFindsItsOffsetsAfterAForeignAppend(t *testing.T) {
	s := iggytest.Start(t, iggytest.Config{})
	tr := ready(t, s, 1, iggy.Config{})
	ctx := t.Context()
	other := sdk(t, s)
	if _, err := tr.Publish(ctx, "t", records("before", 2)...); err != nil {
		t.Fatal(err)
	}
	// Hold the read-back of the next publish and append behind its batch.
	s.Hang(iggytest.CmdPoll)
	type result struct {
		pos []runtime.Position
		err error
	}
	done := make(chan result, 1)
	go func() {
		pos, err := tr.Publish(ctx, "t", records("mine", 3)...)
		done <- result{pos, err}
	}()
	if err := s.WaitHeld(ctx, 1); err != nil {
		t.Fatal(err)
	}
	m, err := iggcon.NewIggyMessage([]byte("foreign"))
	if err != nil {
		t.Fatal(err)
	}
	if err := other.SendMessages(ident(t, "laser_test"), ident(t, "t"), iggcon.PartitionId(0), []iggcon.IggyMessage{m}); err != nil {
		t.Fatal(err)
	}
	s.Unhang()
	r := <-done
	if r.err != nil {
		t.Fatalf("publish: %v", r.err)
	}
	for i, p := range r.pos {
		if p.Partition != 0 || p.Offset != uint64(2+i) {
			t.Fatalf("positions = %v, want 0:2..0:4", r.pos)
		}
	}
}

func TestPublishRejectsWhatIggyCannotCarry(t *testing.T) {
	s := iggytest.Start(t, iggytest.Config{})
	tr := ready(t, s, 1, iggy.Config{})
	ctx := t.Context()
	for name, rec := range map[string]runtime.Outgoing{
		"empty payload": {Key: "k"},
		"bad header":    {Key: "k", Payload: []byte("x"), Headers: wire.Headers{{Key: ""}}},
	} {
		if _, err := tr.Publish(ctx, "t", rec); err == nil || errors.Is(err, runtime.ErrTransient) {
			t.Errorf("%s: err = %v, want a permanent error", name, err)
		}
	}
	if got := s.Requests(iggytest.CmdSend); got != 0 {
		t.Errorf("sends = %d, want none for rejected records", got)
	}
}

func TestJoinOnAMissingTopicFails(t *testing.T) {
	s := iggytest.Start(t, iggytest.Config{})
	tr := ready(t, s, 1, iggy.Config{})
	if _, err := tr.Join(t.Context(), "missing", "g"); err == nil || errors.Is(err, runtime.ErrTransient) {
		t.Fatalf("Join = %v, want a permanent error", err)
	}
}

func TestLeftSubscriptionFailsPermanently(t *testing.T) {
	s := iggytest.Start(t, iggytest.Config{})
	tr := ready(t, s, 1, iggy.Config{})
	ctx := t.Context()
	sub := joinSub(t, tr, "g")
	if err := sub.Leave(ctx); err != nil {
		t.Fatalf("Leave: %v", err)
	}
	_, err := sub.Poll(ctx, 1)
	if !errors.Is(err, iggy.ErrLeft) || errors.Is(err, runtime.ErrTransient) {
		t.Fatalf("poll after leave = %v, want permanent ErrLeft", err)
	}
}

func TestClosedSubscriptionReportsDisconnected(t *testing.T) {
	s := iggytest.Start(t, iggytest.Config{})
	tr := ready(t, s, 1, iggy.Config{})
	sub := joinSub(t, tr, "g")
	if err := sub.Close(); err != nil {
		t.Fatal(err)
	}
	if err := sub.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	if _, err := sub.Poll(t.Context(), 1); !errors.Is(err, runtime.ErrDisconnected) || !errors.Is(err, iggy.ErrClosed) {
		t.Fatalf("poll after close = %v", err)
	}
}

func TestClosedTransportFails(t *testing.T) {
	s := iggytest.Start(t, iggytest.Config{})
	tr := ready(t, s, 1, iggy.Config{})
	if err := tr.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := tr.Partitions(t.Context(), "t"); !errors.Is(err, iggy.ErrClosed) {
		t.Fatalf("call after Close = %v, want ErrClosed", err)
	}
}

// malformedServer answers a login with a user id and every other request
// with status OK and a two-byte payload (or every request so, with
// badLogin), which the SDK's decoders slice as longer.
func malformedServer(t *testing.T, badLogin bool) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				var hdr [8]byte
				for {
					if _, err := io.ReadFull(c, hdr[:]); err != nil {
						return
					}
					if _, err := io.CopyN(io.Discard, c, int64(binary.LittleEndian.Uint32(hdr[:4])-4)); err != nil {
						return
					}
					reply := []byte{0, 0, 0, 0, 2, 0, 0, 0, 'o', 'k'}
					if code := binary.LittleEndian.Uint32(hdr[4:]); code == 38 && !badLogin {
						reply = []byte{0, 0, 0, 0, 4, 0, 0, 0, 0, 0, 0, 0}
					}
					if _, err := c.Write(reply); err != nil {
						return
					}
				}
			}()
		}
	}()
	return ln.Addr().String()
}

func TestAShortLoginReplyIsAProtocolError(t *testing.T) {
	addr := malformedServer(t, true)
	_, err := iggy.Dial(t.Context(), "iggy://iggy:iggy@"+addr+"/s", iggy.Config{})
	if err == nil || !strings.Contains(err.Error(), "login reply of 2 bytes") {
		t.Fatalf("Dial = %v, want an error naming the short login reply", err)
	}
}

func TestSDKPanicOnAShortResponseBecomesAnError(t *testing.T) {
	addr := malformedServer(t, false)
	tr, err := iggy.Dial(t.Context(), "iggy://iggy:iggy@"+addr+"/s", iggy.Config{})
	if err != nil {
		t.Fatalf("Dial: %v", err)
	}
	t.Cleanup(func() { _ = tr.Close() })
	if _, err := tr.Partitions(t.Context(), "t"); !errors.Is(err, iggy.ErrSDKPanic) {
		t.Fatalf("Partitions = %v, want ErrSDKPanic", err)
	}
}

func TestSubscriptionKeepsItsPlaceWhenAPartitionComesBack(t *testing.T) {
	s := iggytest.Start(t, iggytest.Config{})
	tr := ready(t, s, 2, iggy.Config{})
	ctx := t.Context()
	a := joinSub(t, tr, "g")
	key := "k"
	for i := 0; xxh32.Sum32([]byte(key), 0)%2 != 1; i++ {
		key = fmt.Sprintf("k-%d", i)
	}
	pub := func(payload string) {
		t.Helper()
		if _, err := tr.Publish(ctx, "t", runtime.Outgoing{Key: key, Payload: []byte(payload)}); err != nil {
			t.Fatal(err)
		}
	}
	pub("one")
	pub("two")
	if got, err := a.Poll(ctx, 10); err != nil || !slices.Equal(payloads(got), []string{"one", "two"}) {
		t.Fatalf("first poll = %q, %v", payloads(got), err)
	}
	// A second member takes partition 1 away, then leaves it to a again;
	// nothing was committed in between.
	b := joinSub(t, tr, "g")
	if got, err := a.Poll(ctx, 10); err != nil || len(got) != 0 {
		t.Fatalf("poll while b owns partition 1 = %q, %v", payloads(got), err)
	}
	if err := b.Leave(ctx); err != nil {
		t.Fatal(err)
	}
	pub("three")
	var got []string
	for range 2 { // one poll per partition rotation
		recs, err := a.Poll(ctx, 10)
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, payloads(recs)...)
	}
	if !slices.Equal(got, []string{"three"}) {
		t.Fatalf("after getting partition 1 back a polled %q, want only the new record", got)
	}
}

// A member whose commit was refused while another member held the
// partition must see the uncommitted records again when the partition comes
// back: nobody else will commit them, and with nothing new published the
// group's offset would stay behind forever (the TestCrashRecoveryReplicas
// stall: a replica killed and restarted moves partitions away and back).
func TestSubscriptionRedeliversWhatALostCommitLeftUncommitted(t *testing.T) {
	s := iggytest.Start(t, iggytest.Config{})
	tr := ready(t, s, 2, iggy.Config{})
	ctx := t.Context()
	a := joinSub(t, tr, "g")
	key := "k"
	for i := 0; xxh32.Sum32([]byte(key), 0)%2 != 1; i++ {
		key = fmt.Sprintf("k-%d", i)
	}
	for _, payload := range []string{"one", "two"} {
		if _, err := tr.Publish(ctx, "t", runtime.Outgoing{Key: key, Payload: []byte(payload)}); err != nil {
			t.Fatal(err)
		}
	}
	first, err := a.Poll(ctx, 10)
	if err != nil || !slices.Equal(payloads(first), []string{"one", "two"}) {
		t.Fatalf("first poll = %q, %v", payloads(first), err)
	}
	// b takes partition 1 before a commits what it handled, and leaves it
	// to a again without reading or committing anything.
	b := joinSub(t, tr, "g")
	if err := a.Commit(ctx, 1, first[1].Offset); !errors.Is(err, runtime.ErrPartitionLost) {
		t.Fatalf("commit while b owns partition 1 = %v, want ErrPartitionLost", err)
	}
	if err := b.Leave(ctx); err != nil {
		t.Fatal(err)
	}
	var got []string
	for range 2 { // one poll per partition rotation
		recs, err := a.Poll(ctx, 10)
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, payloads(recs)...)
	}
	if !slices.Equal(got, []string{"one", "two"}) {
		t.Fatalf("after getting partition 1 back a polled %q, want the records its lost commit left uncommitted", got)
	}
	if err := a.Commit(ctx, 1, first[1].Offset); err != nil {
		t.Fatalf("commit after getting partition 1 back: %v", err)
	}
}

// race runs fn twice at once while command code is held, so both callers
// have seen the entity missing before either creates it, and returns both
// errors.
func race(t *testing.T, s *iggytest.Server, code uint32, fn func() error) [2]error {
	t.Helper()
	s.Hang(code)
	errs := make(chan error, 2)
	for range 2 {
		go func() { errs <- fn() }()
	}
	if err := s.WaitHeld(t.Context(), 2); err != nil {
		t.Fatal(err)
	}
	s.Unhang()
	return [2]error{<-errs, <-errs}
}

func TestEnsureTopicsToleratesARaceOnTheStream(t *testing.T) {
	s := iggytest.Start(t, iggytest.Config{})
	a, b := dialTransport(t, connString(s), iggy.Config{}), dialTransport(t, connString(s), iggy.Config{})
	ctx := t.Context()
	next := make(chan *iggy.Transport, 2)
	next <- a
	next <- b
	errs := race(t, s, iggytest.CmdCreateStream, func() error { return (<-next).EnsureTopics(ctx, 1, "t") })
	if errs[0] != nil || errs[1] != nil {
		t.Fatalf("EnsureTopics = %v, %v; want both to succeed", errs[0], errs[1])
	}
}

func TestEnsureTopicsToleratesARaceOnTheTopic(t *testing.T) {
	s := iggytest.Start(t, iggytest.Config{})
	a, b := ready(t, s, 1, iggy.Config{}), dialTransport(t, connString(s), iggy.Config{})
	ctx := t.Context()
	next := make(chan *iggy.Transport, 2)
	next <- a
	next <- b
	errs := race(t, s, iggytest.CmdCreateTopic, func() error { return (<-next).EnsureTopics(ctx, 2, "u") })
	if errs[0] != nil || errs[1] != nil {
		t.Fatalf("EnsureTopics = %v, %v; want both to succeed", errs[0], errs[1])
	}
}

func TestJoinToleratesARaceOnTheGroup(t *testing.T) {
	s := iggytest.Start(t, iggytest.Config{})
	tr := ready(t, s, 2, iggy.Config{})
	ctx := t.Context()
	subs := make(chan runtime.Subscription, 2)
	errs := race(t, s, iggytest.CmdCreateConsumerGroup, func() error {
		sub, err := tr.Join(ctx, "t", "g")
		if err == nil {
			subs <- sub
		}
		return err
	})
	if errs[0] != nil || errs[1] != nil {
		t.Fatalf("Join = %v, %v; want both to succeed", errs[0], errs[1])
	}
	for range 2 {
		_ = (<-subs).Close()
	}
}

// lost reports whether err is a transient lost connection: one the next
// call repairs, not a closed transport.
func lost(err error) bool {
	return errors.Is(err, iggy.ErrConnectionLost) && errors.Is(err, runtime.ErrTransient) && !errors.Is(err, runtime.ErrDisconnected)
}

func TestCommitToAPartitionTakenByAnotherMemberIsPartitionLost(t *testing.T) {
	s := iggytest.Start(t, iggytest.Config{})
	tr := ready(t, s, 2, iggy.Config{})
	ctx := t.Context()
	spread := records("r", 8)
	for i := range spread {
		spread[i].Key = "" // balanced over both partitions
	}
	if _, err := tr.Publish(ctx, "t", spread...); err != nil {
		t.Fatal(err)
	}
	a := joinSub(t, tr, "g")
	got := transporttest.PollUntil(t, a, 8)
	last := map[uint32]uint64{}
	for _, r := range got {
		last[r.Partition] = r.Offset
	}
	if len(last) != 2 {
		t.Fatalf("member a read partitions %v, want both", last)
	}
	joinSub(t, tr, "g") // b takes one of the two partitions
	lost := 0
	for p, off := range last {
		err := a.Commit(ctx, p, off)
		switch {
		case err == nil:
		case errors.Is(err, runtime.ErrPartitionLost) && !errors.Is(err, runtime.ErrTransient):
			lost++
		default:
			t.Fatalf("commit %d:%d = %v", p, off, err)
		}
	}
	if lost != 1 {
		t.Fatalf("%d commits reported a lost partition, want 1", lost)
	}
}

func TestPublishPlacesKeysByTheCurrentPartitionCount(t *testing.T) {
	s := iggytest.Start(t, iggytest.Config{})
	clock := lasertest.NewManualClock(time.Date(2026, 11, 30, 0, 0, 0, 0, time.UTC))
	tr := ready(t, s, 1, iggy.Config{Clock: clock})
	ctx := t.Context()
	key := ""
	for i := 0; key == ""; i++ {
		if k := fmt.Sprintf("conv-%d", i); xxh32.Sum32([]byte(k), 0)%4 != 0 {
			key = k
		}
	}
	if _, err := tr.Publish(ctx, "t", runtime.Outgoing{Key: key, Payload: []byte("before")}); err != nil {
		t.Fatal(err)
	}
	// Another client grows the topic to four partitions.
	if err := sdk(t, s).CreatePartitions(ident(t, "laser_test"), ident(t, "t"), 3); err != nil {
		t.Fatal(err)
	}
	clock.Advance(time.Minute)
	pos, err := tr.Publish(ctx, "t", runtime.Outgoing{Key: key, Payload: []byte("after")})
	if err != nil {
		t.Fatal(err)
	}
	if want := xxh32.Sum32([]byte(key), 0) % 4; pos[0].Partition != want {
		t.Fatalf("published to partition %d, want %d (the key's place among 4 partitions)", pos[0].Partition, want)
	}
}

func TestACancelledCallDoesNotBreakTheSharedConnection(t *testing.T) {
	s := iggytest.Start(t, iggytest.Config{})
	tr := ready(t, s, 1, iggy.Config{})
	ctx := t.Context()
	logins := s.Requests(iggytest.CmdLogin)
	s.Hang(iggytest.CmdGetTopic)
	callCtx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() {
		_, err := tr.Partitions(callCtx, "t")
		done <- err
	}()
	if err := s.WaitHeld(ctx, 1); err != nil {
		t.Fatal(err)
	}
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled call = %v", err)
	}
	s.Unhang()
	// Everyone else keeps using the same connection: no new login.
	if n, err := tr.Partitions(ctx, "t"); err != nil || n != 1 {
		t.Fatalf("partitions after the cancellation = %d, %v", n, err)
	}
	if got := s.Requests(iggytest.CmdLogin); got != logins {
		t.Fatalf("%d logins after the cancellation, want %d (the connection was dropped)", got, logins)
	}
}
