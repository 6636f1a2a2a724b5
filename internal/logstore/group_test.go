package logstore

import (
	"errors"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func mustGroup(t *testing.T, tp *Topic, name string) *Group {
	t.Helper()
	g, err := tp.CreateGroup(name)
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// checkSplit asserts every partition is owned by exactly one member and
// members differ by at most one partition.
func checkSplit(t *testing.T, g *Group, partitions uint32) {
	t.Helper()
	owners := make(map[uint32]uint64)
	lo, hi := int(partitions), 0
	for _, m := range g.Members() {
		lo, hi = min(lo, len(m.Partitions)), max(hi, len(m.Partitions))
		for _, p := range m.Partitions {
			if prev, dup := owners[p]; dup {
				t.Errorf("partition %d owned by %d and %d", p, prev, m.ID)
			}
			owners[p] = m.ID
		}
	}
	if len(g.Members()) > 0 && uint32(len(owners)) != partitions {
		t.Errorf("%d of %d partitions owned: %v", len(owners), partitions, g.Members())
	}
	if hi-lo > 1 {
		t.Errorf("unfair split, %d to %d partitions per member: %v", lo, hi, g.Members())
	}
}

func TestGroupSplitsPartitionsAmongMembers(t *testing.T) {
	cases := []struct {
		members int
		want    [][]uint32
	}{
		{1, [][]uint32{{0, 1, 2, 3, 4}}},
		{2, [][]uint32{{0, 2, 4}, {1, 3}}},
		{3, [][]uint32{{0, 3}, {1, 4}, {2}}},
	}
	for _, c := range cases {
		tp := mustTopic(t, New("s"), "t", 5)
		g := mustGroup(t, tp, "g")
		for m := range c.members {
			if err := g.Join(uint64(10 + m)); err != nil {
				t.Fatal(err)
			}
		}
		checkSplit(t, g, 5)
		for m, want := range c.want {
			got, ok := g.Assigned(uint64(10 + m))
			if !ok || !cmp.Equal(got, want) {
				t.Errorf("%d members: member %d owns %v (%v), want %v", c.members, m, got, ok, want)
			}
		}
	}
}

func TestGroupRebalancesOnJoinAndLeave(t *testing.T) {
	tp := mustTopic(t, New("s"), "t", 4)
	g := mustGroup(t, tp, "g")
	gen := g.Generation()
	step := func(what string, op func() error) {
		t.Helper()
		if err := op(); err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		if next := g.Generation(); next <= gen {
			t.Errorf("%s did not bump the generation (%d)", what, next)
		} else {
			gen = next
		}
		checkSplit(t, g, 4)
	}
	step("join 1", func() error { return g.Join(1) })
	step("join 2", func() error { return g.Join(2) })
	step("join 3", func() error { return g.Join(3) })
	step("leave 2", func() error { return g.Leave(2) })
	if got, _ := g.Assigned(3); !cmp.Equal(got, []uint32{1, 3}) {
		t.Errorf("after member 2 left, member 3 owns %v, want [1 3]", got)
	}
	step("leave 1", func() error { return g.Leave(1) })
	if got, _ := g.Assigned(3); !cmp.Equal(got, []uint32{0, 1, 2, 3}) {
		t.Errorf("last member owns %v, want every partition", got)
	}
	step("leave 3", func() error { return g.Leave(3) })
	if len(g.Members()) != 0 {
		t.Errorf("members left: %v", g.Members())
	}
}

func TestGroupJoinIsIdempotent(t *testing.T) {
	g := mustGroup(t, mustTopic(t, New("s"), "t", 2), "g")
	if err := g.Join(7); err != nil {
		t.Fatal(err)
	}
	gen := g.Generation()
	if err := g.Join(7); err != nil {
		t.Fatal(err)
	}
	if len(g.Members()) != 1 || g.Generation() != gen {
		t.Errorf("second join changed the group: %v, generation %d→%d", g.Members(), gen, g.Generation())
	}
}

func TestGroupLeaveByNonMemberFails(t *testing.T) {
	g := mustGroup(t, mustTopic(t, New("s"), "t", 2), "g")
	if err := g.Leave(1); !errors.Is(err, ErrNotMember) {
		t.Fatalf("Leave of a non-member: %v, want ErrNotMember", err)
	}
	if _, ok := g.Assigned(1); ok {
		t.Error("Assigned reports a non-member as member")
	}
}

func TestGroupRebalancesWhenPartitionsGrow(t *testing.T) {
	tp := mustTopic(t, New("s"), "t", 1)
	g := mustGroup(t, tp, "g")
	for _, m := range []uint64{1, 2} {
		if err := g.Join(m); err != nil {
			t.Fatal(err)
		}
	}
	if got, _ := g.Assigned(2); len(got) != 0 {
		t.Fatalf("second member of a 1-partition topic owns %v", got)
	}
	if err := tp.AddPartitions(3); err != nil {
		t.Fatal(err)
	}
	checkSplit(t, g, 4)
	if got, _ := g.Assigned(2); !cmp.Equal(got, []uint32{1, 3}) {
		t.Errorf("after growth member 2 owns %v, want [1 3]", got)
	}
}

func TestGroupIDsAndLookup(t *testing.T) {
	tp := mustTopic(t, New("s"), "t", 1)
	a, b := mustGroup(t, tp, "a"), mustGroup(t, tp, "b")
	if a.ID() != 0 || b.ID() != 1 {
		t.Fatalf("group ids %d %d, want 0 1", a.ID(), b.ID())
	}
	if _, err := tp.CreateGroup("a"); !errors.Is(err, ErrGroupExists) {
		t.Errorf("duplicate CreateGroup: %v, want ErrGroupExists", err)
	}
	if g, ok := tp.GroupByID(1); !ok || g != b {
		t.Errorf("GroupByID(1) = %v, %v", g, ok)
	}
	if g, ok := tp.Group("a"); !ok || g != a {
		t.Errorf("Group(a) = %v, %v", g, ok)
	}
	names := []string{}
	for _, g := range tp.Groups() {
		names = append(names, g.Name())
	}
	if !slices.Equal(names, []string{"a", "b"}) {
		t.Errorf("Groups() = %v", names)
	}
}

func TestDeleteGroupDropsOffsetsAndMembers(t *testing.T) {
	tp := mustTopic(t, New("s"), "t", 1)
	g := mustGroup(t, tp, "g")
	if err := g.Join(1); err != nil {
		t.Fatal(err)
	}
	if _, err := tp.Append(0, recs("a")); err != nil {
		t.Fatal(err)
	}
	if err := tp.StoreOffset(GroupConsumerKey("g"), 0, 0); err != nil {
		t.Fatal(err)
	}
	if err := tp.DeleteGroup("g"); err != nil {
		t.Fatal(err)
	}
	if _, ok := tp.StoredOffset(GroupConsumerKey("g"), 0); ok {
		t.Error("group offset survived DeleteGroup")
	}
	if err := g.Join(2); !errors.Is(err, ErrNoGroup) {
		t.Errorf("Join on a deleted group: %v, want ErrNoGroup", err)
	}
	if err := tp.DeleteGroup("g"); !errors.Is(err, ErrNoGroup) {
		t.Errorf("second DeleteGroup: %v, want ErrNoGroup", err)
	}
	again := mustGroup(t, tp, "g")
	if again.ID() == g.ID() {
		t.Errorf("recreated group reused id %d", g.ID())
	}
}
