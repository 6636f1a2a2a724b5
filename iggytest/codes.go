package iggytest

import (
	"errors"

	"github.com/lasergo/laser/internal/logstore"
)

// Command codes of the Iggy 0.8 binary protocol that the server answers.
// Fault injection (Hang, FailNext) and Requests take these codes.
const (
	CmdPing                uint32 = 1
	CmdGetStats            uint32 = 10
	CmdClusterMetadata     uint32 = 12
	CmdGetMe               uint32 = 20
	CmdLogin               uint32 = 38
	CmdLogout              uint32 = 39
	CmdGetTokens           uint32 = 41
	CmdCreateToken         uint32 = 42
	CmdDeleteToken         uint32 = 43
	CmdLoginWithToken      uint32 = 44
	CmdPoll                uint32 = 100
	CmdSend                uint32 = 101
	CmdGetOffset           uint32 = 120
	CmdStoreOffset         uint32 = 121
	CmdDeleteOffset        uint32 = 122
	CmdGetStream           uint32 = 200
	CmdGetStreams          uint32 = 201
	CmdCreateStream        uint32 = 202
	CmdDeleteStream        uint32 = 203
	CmdUpdateStream        uint32 = 204
	CmdGetTopic            uint32 = 300
	CmdGetTopics           uint32 = 301
	CmdCreateTopic         uint32 = 302
	CmdDeleteTopic         uint32 = 303
	CmdUpdateTopic         uint32 = 304
	CmdCreatePartitions    uint32 = 402
	CmdDeletePartitions    uint32 = 403
	CmdGetConsumerGroup    uint32 = 600
	CmdGetConsumerGroups   uint32 = 601
	CmdCreateConsumerGroup uint32 = 602
	CmdDeleteConsumerGroup uint32 = 603
	CmdJoinConsumerGroup   uint32 = 604
	CmdLeaveConsumerGroup  uint32 = 605
	// Codes of the VSR framing only: register (log in and open a session)
	// with a password or a personal access token, and a group member's
	// partition assignment.
	CmdLoginRegister          uint32 = 40
	CmdLoginRegisterWithToken uint32 = 45
	CmdSyncConsumerGroup      uint32 = 606
)

// Codes the VSR framing maps operations to that the server does not
// support; they answer FeatureUnavailable.
const (
	cmdCreateUser        uint32 = 33
	cmdDeleteUser        uint32 = 34
	cmdUpdateUser        uint32 = 35
	cmdUpdatePermissions uint32 = 36
	cmdChangePassword    uint32 = 37
	cmdPurgeStream       uint32 = 205
	cmdPurgeTopic        uint32 = 305
	cmdDeleteSegments    uint32 = 503
)

// Status codes the server answers with, Iggy 0.8's error codes. A test can
// also hand any other code to FailNext.
const (
	StatusError                       uint32 = 1
	StatusInvalidCommand              uint32 = 3
	StatusFeatureUnavailable          uint32 = 5
	StatusInvalidIdentifier           uint32 = 6
	StatusDisconnected                uint32 = 8
	StatusResourceNotFound            uint32 = 20
	StatusStaleClient                 uint32 = 30
	StatusUnauthenticated             uint32 = 40
	StatusUnauthorized                uint32 = 41
	StatusInvalidCredentials          uint32 = 42
	StatusInvalidTokenName            uint32 = 50
	StatusTokenAlreadyExists          uint32 = 51
	StatusInvalidToken                uint32 = 53
	StatusTokenExpired                uint32 = 54
	StatusStreamIDNotFound            uint32 = 1009
	StatusStreamNameNotFound          uint32 = 1010
	StatusStreamNameAlreadyExists     uint32 = 1012
	StatusInvalidStreamName           uint32 = 1013
	StatusTopicIDNotFound             uint32 = 2010
	StatusTopicNameNotFound           uint32 = 2011
	StatusTopicNameAlreadyExists      uint32 = 2013
	StatusInvalidTopicName            uint32 = 2014
	StatusTooManyPartitions           uint32 = 2015
	StatusInvalidReplicationFactor    uint32 = 2018
	StatusInvalidPartitionsCount      uint32 = 2019
	StatusPartitionNotFound           uint32 = 3007
	StatusConsumerOffsetNotFound      uint32 = 3021
	StatusNotResolvedConsumer         uint32 = 3022
	StatusInvalidMessagesCount        uint32 = 4009
	StatusTooBigUserHeaders           uint32 = 4017
	StatusInvalidHeaderKey            uint32 = 4018
	StatusInvalidHeaderValue          uint32 = 4019
	StatusTooBigMessagePayload        uint32 = 4022
	StatusInvalidMessagePayloadLength uint32 = 4025
	StatusInvalidMessageChecksum      uint32 = 4027
	StatusInvalidKeyValueLength       uint32 = 4028
	StatusInvalidMessagesSize         uint32 = 4036
	StatusInvalidOffset               uint32 = 4100
	StatusInvalidReservedField        uint32 = 4101
	StatusConsumerGroupIDNotFound     uint32 = 5000
	StatusConsumerGroupNameNotFound   uint32 = 5003
	StatusConsumerGroupNameExists     uint32 = 5004
	StatusInvalidConsumerGroupName    uint32 = 5005
	StatusConsumerGroupMemberNotFound uint32 = 5006
)

// statusError is a request failure answered with an Iggy status code.
type statusError struct {
	status uint32
	detail string
}

func (e *statusError) Error() string { return e.detail }

func fail(status uint32, detail string) error { return &statusError{status: status, detail: detail} }

// errMalformed is a request whose bytes do not parse; the real server
// answers such a request with InvalidCommand.
var errMalformed = fail(StatusInvalidCommand, "malformed request payload")

// statusOf maps a handler error to the status code sent back: handler errors
// carry their code, and the log engine's sentinels (internal/logstore) map to Iggy's codes for the same
// conditions.
func statusOf(err error) uint32 {
	var se *statusError
	if errors.As(err, &se) {
		return se.status
	}
	switch {
	case errors.Is(err, logstore.ErrNoTopic):
		return StatusTopicIDNotFound
	case errors.Is(err, logstore.ErrTopicExists):
		return StatusTopicNameAlreadyExists
	case errors.Is(err, logstore.ErrBadPartitions):
		return StatusInvalidPartitionsCount
	case errors.Is(err, logstore.ErrNoPartition):
		return StatusPartitionNotFound
	case errors.Is(err, logstore.ErrNoGroup):
		return StatusConsumerGroupIDNotFound
	case errors.Is(err, logstore.ErrGroupExists):
		return StatusConsumerGroupNameExists
	case errors.Is(err, logstore.ErrNotMember):
		return StatusConsumerGroupMemberNotFound
	case errors.Is(err, logstore.ErrNotOwner):
		return StatusNotResolvedConsumer
	case errors.Is(err, logstore.ErrInvalidOffset):
		return StatusInvalidOffset
	case errors.Is(err, logstore.ErrNoOffset):
		return StatusConsumerOffsetNotFound
	case errors.Is(err, logstore.ErrBadName):
		return StatusInvalidTopicName
	case errors.Is(err, logstore.ErrBadCount):
		return StatusInvalidMessagesCount
	}
	return StatusError
}
