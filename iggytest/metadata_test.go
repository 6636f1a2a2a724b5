package iggytest_test

import (
	"errors"
	"math"
	"testing"

	iggcon "github.com/apache/iggy/foreign/go/contracts"
	ierror "github.com/apache/iggy/foreign/go/errors"

	"github.com/lasergo/laser/iggytest"
)

func TestStreamIDsAreZeroBasedInCreationOrder(t *testing.T) {
	c := login(t, iggytest.Start(t, iggytest.Config{}))
	for i, name := range []string{"a", "b", "c"} {
		st, err := c.CreateStream(name)
		if err != nil {
			t.Fatalf("create %s: %v", name, err)
		}
		if st.Id != uint32(i) || st.Name != name {
			t.Fatalf("stream = %d %q, want %d %q", st.Id, st.Name, i, name)
		}
	}
	streams, err := c.GetStreams()
	if err != nil || len(streams) != 3 || streams[2].Name != "c" {
		t.Fatalf("streams = %+v, %v", streams, err)
	}
}

func TestStreamAddressedByIDOrName(t *testing.T) {
	c := login(t, iggytest.Start(t, iggytest.Config{}))
	setup(t, c, 2)
	byName, err := c.GetStream(id(t, "s"))
	if err != nil {
		t.Fatalf("get by name: %v", err)
	}
	byID, err := c.GetStream(id(t, uint32(0)))
	if err != nil {
		t.Fatalf("get by id: %v", err)
	}
	if byName.Id != 0 || byID.Name != "s" || len(byID.Topics) != 1 || byID.Topics[0].Name != "t" || byID.TopicsCount != 1 {
		t.Fatalf("by name %+v, by id %+v", byName, byID)
	}
}

func TestCreateDuplicateStreamFails(t *testing.T) {
	c := login(t, iggytest.Start(t, iggytest.Config{}))
	setup(t, c, 1)
	_, err := c.CreateStream("s")
	wantCode(t, err, ierror.StreamNameAlreadyExistsCode)
}

func TestCreateDuplicateTopicFails(t *testing.T) {
	c := login(t, iggytest.Start(t, iggytest.Config{}))
	setup(t, c, 1)
	_, err := c.CreateTopic(id(t, "s"), "t", 1, iggcon.CompressionAlgorithmNone, iggcon.IggyExpiryNeverExpire, 0, nil)
	wantCode(t, err, ierror.TopicNameAlreadyExistsCode)
}

func TestCreateTopicWithCompressionZeroFails(t *testing.T) {
	c := login(t, iggytest.Start(t, iggytest.Config{}))
	if _, err := c.CreateStream("s"); err != nil {
		t.Fatal(err)
	}
	_, err := c.CreateTopic(id(t, "s"), "t", 1, 0, iggcon.IggyExpiryNeverExpire, 0, nil)
	wantCode(t, err, ierror.InvalidCommandCode)
}

func TestCreateTopicInMissingStreamFails(t *testing.T) {
	c := login(t, iggytest.Start(t, iggytest.Config{}))
	_, err := c.CreateTopic(id(t, "nope"), "t", 1, iggcon.CompressionAlgorithmNone, 0, 0, nil)
	wantCode(t, err, ierror.StreamNameNotFoundCode)
}

func TestCreateTopicDescribesPartitions(t *testing.T) {
	c := login(t, iggytest.Start(t, iggytest.Config{}))
	if _, err := c.CreateStream("s"); err != nil {
		t.Fatal(err)
	}
	td, err := c.CreateTopic(id(t, uint32(0)), "t", 3, iggcon.CompressionAlgorithmNone, 0, 0, nil)
	if err != nil {
		t.Fatalf("create topic: %v", err)
	}
	if td.Id != 0 || td.PartitionsCount != 3 || len(td.Partitions) != 3 || td.Partitions[2].Id != 2 {
		t.Fatalf("topic = %+v", td)
	}
	if td.MessageExpiry != iggcon.IggyExpiryNeverExpire || td.MaxTopicSize != math.MaxUint64 || td.ReplicationFactor != 1 || td.CompressionAlgorithm != 1 {
		t.Fatalf("server defaults not resolved: %+v", td.Topic)
	}
}

func TestNotFoundLookupsAnswerEmptyOK(t *testing.T) {
	s := iggytest.Start(t, iggytest.Config{})
	c := login(t, s)
	if _, err := c.GetStream(id(t, "nope")); !errors.Is(err, ierror.ErrStreamIdNotFound) {
		t.Fatalf("get stream: %v, want ErrStreamIdNotFound", err)
	}
	setup(t, c, 1)
	if _, err := c.GetTopic(id(t, "s"), id(t, "nope")); !errors.Is(err, ierror.ErrTopicIdNotFound) {
		t.Fatalf("get topic: %v, want ErrTopicIdNotFound", err)
	}
	if _, err := c.GetConsumerGroup(id(t, "s"), id(t, "t"), id(t, "nope")); !errors.Is(err, ierror.ErrConsumerGroupIdNotFound) {
		t.Fatalf("get group: %v, want ErrConsumerGroupIdNotFound", err)
	}
	off, err := c.GetConsumerOffset(iggcon.NewGroupConsumer(id(t, "nope")), id(t, "s"), id(t, "t"), ptr(0))
	if off != nil || err != nil {
		t.Fatalf("get offset of missing group = %+v, %v; want nil, nil", off, err)
	}
	if s.Requests(iggytest.CmdGetStream) != 1 || s.Requests(iggytest.CmdGetTopic) != 1 {
		t.Fatalf("request counters: get stream %d, get topic %d", s.Requests(iggytest.CmdGetStream), s.Requests(iggytest.CmdGetTopic))
	}
}

func TestDeleteStreamRemovesIt(t *testing.T) {
	c := login(t, iggytest.Start(t, iggytest.Config{}))
	setup(t, c, 1)
	if err := c.DeleteStream(id(t, "s")); err != nil {
		t.Fatalf("delete: %v", err)
	}
	if _, err := c.GetStream(id(t, "s")); !errors.Is(err, ierror.ErrStreamIdNotFound) {
		t.Fatalf("get after delete: %v", err)
	}
	wantCode(t, c.DeleteStream(id(t, "s")), ierror.StreamNameNotFoundCode)
}

func TestDeleteTopicRemovesIt(t *testing.T) {
	c := login(t, iggytest.Start(t, iggytest.Config{}))
	setup(t, c, 1)
	if err := c.DeleteTopic(id(t, "s"), id(t, uint32(0))); err != nil {
		t.Fatalf("delete: %v", err)
	}
	topics, err := c.GetTopics(id(t, "s"))
	if err != nil || len(topics) != 0 {
		t.Fatalf("topics after delete = %+v, %v", topics, err)
	}
}

func TestCreatePartitionsAddsToTheTopic(t *testing.T) {
	c := login(t, iggytest.Start(t, iggytest.Config{}))
	setup(t, c, 1)
	if err := c.CreatePartitions(id(t, "s"), id(t, "t"), 2); err != nil {
		t.Fatalf("create partitions: %v", err)
	}
	td, err := c.GetTopic(id(t, "s"), id(t, "t"))
	if err != nil || td.PartitionsCount != 3 || len(td.Partitions) != 3 {
		t.Fatalf("topic = %+v, %v; want 3 partitions", td, err)
	}
}

func TestCreateDuplicateGroupFails(t *testing.T) {
	c := login(t, iggytest.Start(t, iggytest.Config{}))
	setup(t, c, 1)
	g, err := c.CreateConsumerGroup(id(t, "s"), id(t, "t"), "g")
	if err != nil || g.Id != 0 || g.Name != "g" || g.PartitionsCount != 1 {
		t.Fatalf("create group = %+v, %v", g, err)
	}
	_, err = c.CreateConsumerGroup(id(t, "s"), id(t, "t"), "g")
	wantCode(t, err, ierror.ConsumerGroupNameAlreadyExistsCode)
}

func TestGroupsAreListedAndDeleted(t *testing.T) {
	c := login(t, iggytest.Start(t, iggytest.Config{}))
	setup(t, c, 1)
	for _, name := range []string{"a", "b"} {
		if _, err := c.CreateConsumerGroup(id(t, "s"), id(t, "t"), name); err != nil {
			t.Fatal(err)
		}
	}
	groups, err := c.GetConsumerGroups(id(t, "s"), id(t, "t"))
	if err != nil || len(groups) != 2 || groups[1].Id != 1 || groups[1].Name != "b" {
		t.Fatalf("groups = %+v, %v", groups, err)
	}
	if err := c.DeleteConsumerGroup(id(t, "s"), id(t, "t"), id(t, uint32(0))); err != nil {
		t.Fatalf("delete: %v", err)
	}
	wantCode(t, c.DeleteConsumerGroup(id(t, "s"), id(t, "t"), id(t, "a")), ierror.ConsumerGroupNameNotFoundCode)
}

func TestUnsupportedCommandAnswersFeatureUnavailable(t *testing.T) {
	c := login(t, iggytest.Start(t, iggytest.Config{}))
	setup(t, c, 1)
	wantCode(t, c.UpdateStream(id(t, "s"), "renamed"), ierror.FeatureUnavailableCode)
}
