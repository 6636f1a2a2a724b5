package iggytest_test

import (
	"slices"
	"testing"

	iggcon "github.com/apache/iggy/foreign/go/contracts"
	ierror "github.com/apache/iggy/foreign/go/errors"

	"github.com/lasergo/laser/iggytest"
)

func groupConsumer(t *testing.T) iggcon.Consumer { return iggcon.NewGroupConsumer(id(t, "g")) }

func join(t *testing.T, c iggcon.Client) {
	t.Helper()
	if err := c.JoinConsumerGroup(id(t, "s"), id(t, "t"), id(t, "g")); err != nil {
		t.Fatalf("join: %v", err)
	}
}

func groupPoll(t *testing.T, c iggcon.Client, partition *uint32, count uint32, autoCommit bool) *iggcon.PolledMessage {
	t.Helper()
	pm, err := c.PollMessages(id(t, "s"), id(t, "t"), groupConsumer(t), iggcon.NextPollingStrategy(), count, autoCommit, partition)
	if err != nil {
		t.Fatalf("group poll: %v", err)
	}
	return pm
}

// groupSetup creates s/t with n partitions and group g, and returns the
// admin client.
func groupSetup(t *testing.T, s *iggytest.Server, partitions uint32) iggcon.Client {
	t.Helper()
	c := login(t, s)
	setup(t, c, partitions)
	if _, err := c.CreateConsumerGroup(id(t, "s"), id(t, "t"), "g"); err != nil {
		t.Fatal(err)
	}
	return c
}

func members(t *testing.T, c iggcon.Client) []iggcon.ConsumerGroupMember {
	t.Helper()
	g, err := c.GetConsumerGroup(id(t, "s"), id(t, "t"), id(t, "g"))
	if err != nil {
		t.Fatalf("get group: %v", err)
	}
	return g.Members
}

func TestJoinTwiceIsANoOp(t *testing.T) {
	s := iggytest.Start(t)
	c := groupSetup(t, s, 2)
	join(t, c)
	join(t, c)
	if m := members(t, c); len(m) != 1 || !slices.Equal(m[0].Partitions, []uint32{0, 1}) {
		t.Fatalf("members = %+v, want one owning both partitions", m)
	}
}

func TestLeaveWhenNotAMemberFails(t *testing.T) {
	s := iggytest.Start(t)
	c := groupSetup(t, s, 1)
	join(t, c)
	if err := c.LeaveConsumerGroup(id(t, "s"), id(t, "t"), id(t, "g")); err != nil {
		t.Fatalf("leave: %v", err)
	}
	err := c.LeaveConsumerGroup(id(t, "s"), id(t, "t"), id(t, "g"))
	wantCode(t, err, ierror.ConsumerGroupMemberNotFoundCode)
}

func TestGroupPollByNonMemberFails(t *testing.T) {
	s := iggytest.Start(t)
	c := groupSetup(t, s, 1)
	_, err := c.PollMessages(id(t, "s"), id(t, "t"), groupConsumer(t), iggcon.NextPollingStrategy(), 1, false, nil)
	wantCode(t, err, ierror.ConsumerGroupMemberNotFoundCode)
}

func TestGroupMembersSplitPartitions(t *testing.T) {
	s := iggytest.Start(t)
	admin := groupSetup(t, s, 4)
	a, b := login(t, s), login(t, s)
	join(t, a)
	join(t, b)
	m := members(t, admin)
	if len(m) != 2 || !slices.Equal(m[0].Partitions, []uint32{0, 2}) || !slices.Equal(m[1].Partitions, []uint32{1, 3}) {
		t.Fatalf("members = %+v, want partitions split round robin", m)
	}
	for p := uint32(0); p < 4; p++ {
		send(t, admin, iggcon.PartitionId(p), "p"+string(rune('0'+p)))
	}
	var got []string
	for _, c := range []iggcon.Client{a, a, b, b} {
		pm := groupPoll(t, c, nil, 10, true)
		got = append(got, payloads(pm.Messages)...)
	}
	slices.Sort(got)
	if !slices.Equal(got, []string{"p0", "p1", "p2", "p3"}) {
		t.Fatalf("the members polled %v, want each partition exactly once", got)
	}
}

func TestGroupPollWithoutPartitionRotatesOverOwnedPartitions(t *testing.T) {
	s := iggytest.Start(t)
	c := groupSetup(t, s, 3)
	join(t, c)
	var seen []uint32
	for range 4 {
		seen = append(seen, groupPoll(t, c, nil, 1, false).PartitionId)
	}
	if !slices.Equal(seen, []uint32{0, 1, 2, 0}) {
		t.Fatalf("partitions = %v, want round robin", seen)
	}
}

func TestGroupPollOfUnownedPartitionIsEmpty(t *testing.T) {
	s := iggytest.Start(t)
	admin := groupSetup(t, s, 2)
	a, b := login(t, s), login(t, s)
	join(t, a)
	join(t, b)
	send(t, admin, iggcon.PartitionId(1), "x")
	pm := groupPoll(t, a, ptr(1), 10, false)
	if pm.PartitionId != 0 || pm.CurrentOffset != 0 || len(pm.Messages) != 0 {
		t.Fatalf("poll of an unowned partition = %+v, want an empty (0, 0) answer", pm)
	}
	if got := payloads(groupPoll(t, b, ptr(1), 10, false).Messages); !slices.Equal(got, []string{"x"}) {
		t.Fatalf("owner polled %v", got)
	}
}

func TestMemberWithoutPartitionsGetsEmptyAnswer(t *testing.T) {
	s := iggytest.Start(t)
	admin := groupSetup(t, s, 1)
	a, b := login(t, s), login(t, s)
	join(t, a)
	join(t, b)
	send(t, admin, iggcon.PartitionId(0), "x")
	pm := groupPoll(t, b, nil, 10, false)
	if pm.PartitionId != 0 || pm.CurrentOffset != 0 || len(pm.Messages) != 0 {
		t.Fatalf("poll = %+v, want (0, 0, nothing)", pm)
	}
}

func TestDisconnectLeavesEveryGroup(t *testing.T) {
	s := iggytest.Start(t)
	admin := groupSetup(t, s, 2)
	a := login(t, s)
	join(t, a)
	if len(members(t, admin)) != 1 {
		t.Fatal("member missing after join")
	}
	if err := a.Close(); err != nil {
		t.Fatalf("close: %v", err)
	}
	if err := s.WaitConnections(t.Context(), 1); err != nil {
		t.Fatalf("the server kept the closed connection: %v", err)
	}
	if m := members(t, admin); len(m) != 0 {
		t.Fatalf("members after disconnect = %+v", m)
	}
}

func TestStoreOffsetNeedsOwnership(t *testing.T) {
	s := iggytest.Start(t)
	admin := groupSetup(t, s, 2)
	a, b := login(t, s), login(t, s)
	join(t, a)
	join(t, b)
	send(t, admin, iggcon.PartitionId(1), "x")
	// 3022 is missing from the SDK's table, so it arrives as the generic code 1.
	wantCode(t, a.StoreConsumerOffset(groupConsumer(t), id(t, "s"), id(t, "t"), 0, ptr(1)), ierror.ErrorCode)
	if err := b.StoreConsumerOffset(groupConsumer(t), id(t, "s"), id(t, "t"), 0, ptr(1)); err != nil {
		t.Fatalf("owner store: %v", err)
	}
	// Reading a group's offset needs no membership.
	off, err := admin.GetConsumerOffset(groupConsumer(t), id(t, "s"), id(t, "t"), ptr(1))
	if err != nil || off == nil || off.PartitionId != 1 || off.StoredOffset != 0 {
		t.Fatalf("offset = %+v, %v", off, err)
	}
}

func TestStoreOffsetPastTheEndFails(t *testing.T) {
	s := iggytest.Start(t)
	c := groupSetup(t, s, 1)
	join(t, c)
	wantCode(t, c.StoreConsumerOffset(groupConsumer(t), id(t, "s"), id(t, "t"), 0, ptr(0)), ierror.InvalidOffsetCode)
	send(t, c, iggcon.PartitionId(0), "x")
	wantCode(t, c.StoreConsumerOffset(groupConsumer(t), id(t, "s"), id(t, "t"), 1, ptr(0)), ierror.InvalidOffsetCode)
}

func TestStoreOffsetWithoutPartitionUsesTheLastPolledOne(t *testing.T) {
	s := iggytest.Start(t)
	c := groupSetup(t, s, 2)
	join(t, c)
	send(t, c, iggcon.PartitionId(1), "x")
	groupPoll(t, c, ptr(1), 1, false)
	if err := c.StoreConsumerOffset(groupConsumer(t), id(t, "s"), id(t, "t"), 0, nil); err != nil {
		t.Fatal(err)
	}
	off, err := c.GetConsumerOffset(groupConsumer(t), id(t, "s"), id(t, "t"), ptr(1))
	if err != nil || off == nil || off.StoredOffset != 0 {
		t.Fatalf("offset on partition 1 = %+v, %v", off, err)
	}
}

func TestGroupNextPollRedeliversUncommittedRecords(t *testing.T) {
	s := iggytest.Start(t)
	c := groupSetup(t, s, 1)
	join(t, c)
	send(t, c, iggcon.PartitionId(0), "a", "b")
	for range 2 {
		if got := payloads(groupPoll(t, c, nil, 10, false).Messages); !slices.Equal(got, []string{"a", "b"}) {
			t.Fatalf("poll = %v", got)
		}
	}
	if err := c.StoreConsumerOffset(groupConsumer(t), id(t, "s"), id(t, "t"), 0, ptr(0)); err != nil {
		t.Fatal(err)
	}
	if got := payloads(groupPoll(t, c, nil, 10, false).Messages); !slices.Equal(got, []string{"b"}) {
		t.Fatalf("poll after commit = %v", got)
	}
}

func TestDeleteConsumerOffsetForgetsIt(t *testing.T) {
	s := iggytest.Start(t)
	c := groupSetup(t, s, 1)
	send(t, c, iggcon.PartitionId(0), "x")
	consumer := iggcon.DefaultConsumer()
	if err := c.StoreConsumerOffset(consumer, id(t, "s"), id(t, "t"), 0, ptr(0)); err != nil {
		t.Fatal(err)
	}
	if err := c.DeleteConsumerOffset(consumer, id(t, "s"), id(t, "t"), ptr(0)); err != nil {
		t.Fatal(err)
	}
	if off, err := c.GetConsumerOffset(consumer, id(t, "s"), id(t, "t"), ptr(0)); off != nil || err != nil {
		t.Fatalf("offset after delete = %+v, %v", off, err)
	}
}
