package logstore

import (
	"cmp"
	"slices"
)

// Group is a consumer group of a topic: members split its partitions.
//
// Rebalancing is a full round-robin reassignment on every join, leave and
// partition change (partition p goes to the (p mod n)-th member in join
// order); Iggy's cooperative hand-over with pending revocations is not
// modelled, so a partition moves at once.
type Group struct {
	topic *Topic
	id    uint32
	name  string
	key   string // GroupConsumerKey(name), built once so commits do not allocate

	// Guarded by topic.mu.
	deleted    bool
	members    []uint64 // join order
	owners     []owner  // per partition
	assignment map[uint64][]uint32
	generation uint64
}

// owner is who holds a partition and since which generation, so a member
// can tell "still mine" from "handed away and back again".
type owner struct {
	member uint64
	owned  bool
	since  uint64
}

// Member is one group member and the partitions it owns.
type Member struct {
	ID         uint64
	Partitions []uint32
}

// CreateGroup creates a consumer group; group ids count from 0 per topic and
// are never reused.
func (t *Topic) CreateGroup(name string) (*Group, error) {
	if err := checkName("consumer group", name); err != nil {
		return nil, err
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if err := t.liveLocked(); err != nil {
		return nil, err
	}
	if _, ok := t.groups[name]; ok {
		return nil, errorf(ErrGroupExists, "embedlog: topic %q: consumer group %q already exists", t.name, name)
	}
	return t.createGroupLocked(name), nil
}

func (t *Topic) createGroupLocked(name string) *Group {
	g := &Group{topic: t, id: t.nextGroupID, name: name, key: GroupConsumerKey(name), assignment: make(map[uint64][]uint32)}
	t.nextGroupID++
	t.groups[name] = g
	t.groupsByID[g.id] = g
	g.owners = make([]owner, len(t.parts))
	return g
}

// Group returns the consumer group named name.
func (t *Topic) Group(name string) (*Group, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	g, ok := t.groups[name]
	return g, ok
}

// GroupByID returns the consumer group with numeric id id.
func (t *Topic) GroupByID(id uint32) (*Group, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	g, ok := t.groupsByID[id]
	return g, ok
}

// Groups returns every consumer group in id order.
func (t *Topic) Groups() []*Group {
	t.mu.Lock()
	out := make([]*Group, 0, len(t.groupsByID))
	for _, g := range t.groupsByID {
		out = append(out, g)
	}
	t.mu.Unlock()
	slices.SortFunc(out, func(a, b *Group) int { return cmp.Compare(a.id, b.id) })
	return out
}

// DeleteGroup removes a consumer group and its stored offsets; its members'
// subscriptions get ErrNoGroup from then on.
func (t *Topic) DeleteGroup(name string) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if err := t.liveLocked(); err != nil {
		return err
	}
	g, ok := t.groups[name]
	if !ok {
		return noGroup(t.name, name)
	}
	g.deleted = true
	delete(t.groups, name)
	delete(t.groupsByID, g.id)
	key := GroupConsumerKey(name)
	for k := range t.offsets {
		if k.consumer == key {
			delete(t.offsets, k)
		}
	}
	t.notifyLocked()
	return nil
}

func noGroup(topic, group string) error {
	return errorf(ErrNoGroup, "embedlog: topic %q has no consumer group %q", topic, group)
}

// ID returns the group's numeric id.
func (g *Group) ID() uint32 { return g.id }

// Name returns the group name.
func (g *Group) Name() string { return g.name }

func (g *Group) liveLocked() error {
	if err := g.topic.liveLocked(); err != nil {
		return err
	}
	if g.deleted {
		return noGroup(g.topic.name, g.name)
	}
	return nil
}

// Join adds member to the group and rebalances; joining twice is a no-op.
func (g *Group) Join(member uint64) error {
	g.topic.mu.Lock()
	defer g.topic.mu.Unlock()
	return g.joinLocked(member)
}

func (g *Group) joinLocked(member uint64) error {
	if err := g.liveLocked(); err != nil {
		return err
	}
	if _, ok := g.assignment[member]; ok {
		return nil
	}
	g.members = append(g.members, member)
	g.rebalanceLocked()
	g.topic.notifyLocked()
	return nil
}

// Leave removes member from the group and rebalances.
func (g *Group) Leave(member uint64) error {
	g.topic.mu.Lock()
	defer g.topic.mu.Unlock()
	return g.leaveLocked(member)
}

func (g *Group) leaveLocked(member uint64) error {
	if err := g.liveLocked(); err != nil {
		return err
	}
	i := slices.Index(g.members, member)
	if i < 0 {
		return errorf(ErrNotMember, "embedlog: topic %q consumer group %q has no member %d", g.topic.name, g.name, member)
	}
	g.members = slices.Delete(g.members, i, i+1)
	g.rebalanceLocked()
	g.topic.notifyLocked()
	return nil
}

// Members returns the members in join order with the partitions each owns.
func (g *Group) Members() []Member {
	g.topic.mu.Lock()
	defer g.topic.mu.Unlock()
	out := make([]Member, len(g.members))
	for i, m := range g.members {
		out[i] = Member{ID: m, Partitions: slices.Clone(g.assignment[m])}
	}
	return out
}

// Assigned returns the partitions member owns; ok is false when it is not a
// member.
func (g *Group) Assigned(member uint64) ([]uint32, bool) {
	g.topic.mu.Lock()
	defer g.topic.mu.Unlock()
	parts, ok := g.assignment[member]
	return slices.Clone(parts), ok
}

// Generation counts rebalances, so a poller can notice a reassignment.
func (g *Group) Generation() uint64 {
	g.topic.mu.Lock()
	defer g.topic.mu.Unlock()
	return g.generation
}

// rebalanceLocked reassigns every partition round robin over the members in
// join order and bumps the generation.
func (g *Group) rebalanceLocked() {
	g.generation++
	n := len(g.topic.parts)
	if len(g.owners) < n {
		g.owners = append(g.owners, make([]owner, n-len(g.owners))...)
	}
	clear(g.assignment)
	for _, m := range g.members {
		g.assignment[m] = nil
	}
	for p := 0; p < n; p++ {
		if len(g.members) == 0 {
			g.owners[p] = owner{}
			continue
		}
		m := g.members[p%len(g.members)]
		if o := g.owners[p]; !o.owned || o.member != m {
			g.owners[p] = owner{member: m, owned: true, since: g.generation}
		}
		g.assignment[m] = append(g.assignment[m], uint32(p))
	}
}

// ownsLocked reports whether member owns partition p.
func (g *Group) ownsLocked(member uint64, p uint32) bool {
	return int(p) < len(g.owners) && g.owners[p].owned && g.owners[p].member == member
}
