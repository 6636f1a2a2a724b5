package iggytest

import (
	"errors"

	"github.com/lasergo/laser/internal/logstore"
)

func lookupGroup(t *logstore.Topic, gid ident) *logstore.Group {
	var g *logstore.Group
	if gid.numeric {
		g, _ = t.GroupByID(gid.id)
	} else {
		g, _ = t.Group(gid.name)
	}
	return g
}

// resolveGroupLocked finds a topic's consumer group; a miss is
// ConsumerGroupIdNotFound or ConsumerGroupNameNotFound.
func (s *Server) resolveGroupLocked(sid, tid, gid ident) (*logstore.Topic, *logstore.Group, error) {
	if err := checkIdents(sid, tid, gid); err != nil {
		return nil, nil, err
	}
	_, t, err := s.resolveTopicLocked(sid, tid)
	if err != nil {
		return nil, nil, err
	}
	if g := lookupGroup(t, gid); g != nil {
		return t, g, nil
	}
	if gid.numeric {
		return nil, nil, fail(StatusConsumerGroupIDNotFound, "consumer group "+gid.String()+" not found")
	}
	return nil, nil, fail(StatusConsumerGroupNameNotFound, "consumer group "+gid.String()+" not found")
}

// getGroup (code 600): a missing stream, topic or group is an empty OK.
func (s *Server) getGroup(p []byte) ([]byte, error) {
	r := reader{b: p}
	sid, tid, gid := r.ident(), r.ident(), r.ident()
	if err := r.done(); err != nil {
		return nil, err
	}
	if err := checkIdents(sid, tid, gid); err != nil {
		return nil, err
	}
	st := s.lookupStreamLocked(sid)
	if st == nil {
		return nil, nil
	}
	t := lookupTopic(st, tid)
	if t == nil {
		return nil, nil
	}
	g := lookupGroup(t, gid)
	if g == nil {
		return nil, nil
	}
	members := g.Members()
	out := appendGroupHeader(nil, t, g, len(members))
	for _, m := range members {
		out = putU32(out, uint32(m.ID))
		out = putU32(out, uint32(len(m.Partitions)))
		for _, part := range m.Partitions {
			out = putU32(out, part)
		}
	}
	return out, nil
}

// getGroups (code 601): every group header of a topic in id order.
func (s *Server) getGroups(p []byte) ([]byte, error) {
	r := reader{b: p}
	sid, tid := r.ident(), r.ident()
	if err := r.done(); err != nil {
		return nil, err
	}
	_, t, err := s.resolveTopicLocked(sid, tid)
	if err != nil {
		return nil, err
	}
	var out []byte
	for _, g := range t.Groups() {
		out = appendGroupHeader(out, t, g, len(g.Members()))
	}
	return out, nil
}

// createGroup (code 602): stream, topic, u8 name.
func (s *Server) createGroup(p []byte) ([]byte, error) {
	r := reader{b: p}
	sid, tid := r.ident(), r.ident()
	name := r.name()
	if err := r.done(); err != nil {
		return nil, err
	}
	_, t, err := s.resolveTopicLocked(sid, tid)
	if err != nil {
		return nil, err
	}
	if name == "" {
		return nil, fail(StatusInvalidConsumerGroupName, "empty consumer group name")
	}
	g, err := t.CreateGroup(name)
	if errors.Is(err, logstore.ErrBadName) {
		return nil, fail(StatusInvalidConsumerGroupName, err.Error())
	}
	if err != nil {
		return nil, err
	}
	return appendGroupHeader(nil, t, g, 0), nil
}

// deleteGroup (code 603) removes a group, its members and its offsets.
func (s *Server) deleteGroup(p []byte) ([]byte, error) {
	t, g, err := s.groupRequest(p)
	if err != nil {
		return nil, err
	}
	if err := t.DeleteGroup(g.Name()); err != nil {
		return nil, err
	}
	for c := range s.conns {
		delete(c.groups, g)
	}
	return nil, nil
}

// joinGroup (code 604) makes the connection a member; joining twice is a
// no-op.
func (s *Server) joinGroup(c *conn, p []byte) ([]byte, error) {
	t, g, err := s.groupRequest(p)
	if err != nil {
		return nil, err
	}
	if _, ok := c.groups[g]; ok {
		return nil, nil
	}
	if err := g.Join(c.member()); err != nil {
		return nil, err
	}
	c.groups[g] = &membership{topic: t, group: g}
	return nil, nil
}

// leaveGroup (code 605) ends the connection's membership; leaving a group
// it is not in is ConsumerGroupMemberNotFound.
func (s *Server) leaveGroup(c *conn, p []byte) ([]byte, error) {
	_, g, err := s.groupRequest(p)
	if err != nil {
		return nil, err
	}
	if _, ok := c.groups[g]; !ok {
		return nil, fail(StatusConsumerGroupMemberNotFound, "not a member of the consumer group")
	}
	delete(c.groups, g)
	if err := g.Leave(c.member()); err != nil {
		return nil, err
	}
	return nil, nil
}

// appendGroupHeader appends u32 id, u32 partitions_count, u32 members_count,
// u8 name.
func appendGroupHeader(b []byte, t *logstore.Topic, g *logstore.Group, members int) []byte {
	b = putU32(b, g.ID())
	b = putU32(b, t.Partitions())
	b = putU32(b, uint32(members))
	return putName(b, g.Name())
}

// membershipLocked returns the connection's seat in g, or
// ConsumerGroupMemberNotFound.
func (c *conn) membershipLocked(g *logstore.Group) (*membership, error) {
	m, ok := c.groups[g]
	if !ok {
		return nil, fail(StatusConsumerGroupMemberNotFound, "not a member of the consumer group")
	}
	if _, ok := g.Assigned(c.member()); !ok {
		// The group was recreated or the member removed behind our back.
		delete(c.groups, g)
		return nil, fail(StatusConsumerGroupMemberNotFound, "not a member of the consumer group")
	}
	return m, nil
}

// groupRequest reads a request that is only stream, topic and group
// identifiers, and resolves them.
func (s *Server) groupRequest(p []byte) (*logstore.Topic, *logstore.Group, error) {
	r := reader{b: p}
	sid, tid, gid := r.ident(), r.ident(), r.ident()
	if err := r.done(); err != nil {
		return nil, nil, err
	}
	return s.resolveGroupLocked(sid, tid, gid)
}
