package iggy

import (
	iggcon "github.com/apache/iggy/foreign/go/contracts"
)

// iggyClient is what the transport asks of a connection to Iggy: the calls
// it makes, with the signatures of the official SDK v0.8.0, whose client
// serves the 0.8 framing as is; vsrClient serves the VSR framing of Iggy
// 0.9+. The transport's logic (sessions, reconnects, groups, publishing)
// is written once against it.
type iggyClient interface {
	LoginUser(username, password string) (*iggcon.IdentityInfo, error)
	LoginWithPersonalAccessToken(token string) (*iggcon.IdentityInfo, error)
	Ping() error
	Close() error

	GetStream(streamID iggcon.Identifier) (*iggcon.StreamDetails, error)
	CreateStream(name string) (*iggcon.StreamDetails, error)
	DeleteStream(id iggcon.Identifier) error
	GetTopic(streamID, topicID iggcon.Identifier) (*iggcon.TopicDetails, error)
	CreateTopic(streamID iggcon.Identifier, name string, partitionsCount uint32, compression iggcon.CompressionAlgorithm,
		messageExpiry iggcon.Duration, maxTopicSize uint64, replicationFactor *uint8) (*iggcon.TopicDetails, error)

	SendMessages(streamID, topicID iggcon.Identifier, partitioning iggcon.Partitioning, messages []iggcon.IggyMessage) error
	PollMessages(streamID, topicID iggcon.Identifier, consumer iggcon.Consumer, strategy iggcon.PollingStrategy,
		count uint32, autoCommit bool, partitionID *uint32) (*iggcon.PolledMessage, error)

	GetConsumerGroup(streamID, topicID, groupID iggcon.Identifier) (*iggcon.ConsumerGroupDetails, error)
	CreateConsumerGroup(streamID, topicID iggcon.Identifier, name string) (*iggcon.ConsumerGroupDetails, error)
	JoinConsumerGroup(streamID, topicID, groupID iggcon.Identifier) error
	LeaveConsumerGroup(streamID, topicID, groupID iggcon.Identifier) error
	StoreConsumerOffset(consumer iggcon.Consumer, streamID, topicID iggcon.Identifier, offset uint64, partitionID *uint32) error
	GetConsumerOffset(consumer iggcon.Consumer, streamID, topicID iggcon.Identifier, partitionID *uint32) (*iggcon.ConsumerOffsetInfo, error)
}

// The SDK's client is one as it stands.
var _ iggyClient = iggcon.Client(nil)
