package runtime

import "time"

// Defaults: a zero field of a config struct, or an option left out, takes
// these.
const (
	// Defaults of ConsumerConfig and Tuning.
	DefaultPollInterval     = 10 * time.Millisecond
	DefaultPollBatch        = 100
	DefaultCommitInterval   = 10 * time.Millisecond
	DefaultShutdownGrace    = 30 * time.Second
	DefaultMaxQueuedRecords = 4096
	DefaultMaxQueuedBytes   = 64 << 20

	// DefaultRequestTimeout bounds a request without WithTimeout.
	DefaultRequestTimeout = 30 * time.Second

	// DefaultStreamBuffer is the default number of chunks a read stream holds
	// ahead of its reader: out of order, or read but not yet consumed.
	DefaultStreamBuffer = 256

	// MaxDeadLetterDetail caps the detail text of a dead-letter capsule in
	// bytes: a handler error that quotes a huge body must not make the capsule
	// too large for the dead-letter topic (which would stop the consumer).
	MaxDeadLetterDetail = 16 << 10
)

// Names on the log: topics, headers, operations and reasons the runtime
// writes and reads.
const (
	// Well-known agent topics, shared with the other laser SDKs. They live on
	// the transport's stream; custom topic names work everywhere too.
	TopicCommands        = "agent.commands"
	TopicResponses       = "agent.responses"
	TopicToolCalls       = "agent.tool_calls"
	TopicToolResults     = "agent.tool_results"
	TopicLLMIO           = "agent.llm_io"
	TopicHumanInput      = "agent.human_input"
	TopicAudit           = "agent.audit"
	TopicRegistry        = "agent.registry"
	TopicWorkflowJournal = "agent.workflow_journal"
	TopicDLQ             = "agent.dlq"

	// Capsule signatures. A consumer with a SigningKey signs each capsule it
	// parks: the dead-letter topic, its own agent id (the group's name without
	// one) and the capsule bytes, under DeadLetterDomain, in two headers beside
	// the reference's capsule encoding, which stays as it is.
	DeadLetterDomain          = "laser.dead-letter.v1"
	HeaderDeadLetterBy        = "laser.dlq.by"
	HeaderDeadLetterSignature = "laser.dlq.sig"

	// OperationRedrive is the operation of the effect a redrive asks the gate
	// about: republishing a parked record is an effect like any other.
	OperationRedrive = "redrive"

	// FinishStop is the finish reason of a stream that ended normally.
	FinishStop = "stop"
)

// Default values of config fields that are not plain constants.
var (
	// BootstrapTopics are the topics Client.Bootstrap creates: every well-known topic
	// except the registry, which is created when first used.
	BootstrapTopics = []string{
		TopicCommands, TopicResponses, TopicToolCalls, TopicToolResults, TopicLLMIO,
		TopicHumanInput, TopicAudit, TopicWorkflowJournal, TopicDLQ,
	}

	// DefaultRetryPolicy is 5 attempts with 200, 400, 800 and 1600 ms between them.
	DefaultRetryPolicy = RetryPolicy{MaxAttempts: 5, BaseDelay: 200 * time.Millisecond}

	// Serial handles one message at a time across every partition: the ordered,
	// simplest default, where a slow message holds the whole member.
	Serial = Concurrency{}
)
