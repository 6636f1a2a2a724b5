package runtime

import (
	"context"
	"fmt"
)

// Well-known agent topics, shared with the other laser SDKs. They live on
// the transport's stream; custom topic names work everywhere too.
const (
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
)

// BootstrapTopics are the topics Bootstrap creates: every well-known topic
// except the registry, which is created when first used.
var BootstrapTopics = []string{
	TopicCommands, TopicResponses, TopicToolCalls, TopicToolResults, TopicLLMIO,
	TopicHumanInput, TopicAudit, TopicWorkflowJournal, TopicDLQ,
}

// Bootstrap creates the stream, the well-known topics and any extra topics
// with the given partition count; it is idempotent, so every process of a
// deployment may call it at start.
func Bootstrap(ctx context.Context, t Transport, partitions uint32, extra ...string) error {
	if partitions == 0 {
		return &Error{Code: CodeConfig, Msg: "bootstrap needs at least one partition"}
	}
	topics := append(append([]string(nil), BootstrapTopics...), extra...)
	if err := t.EnsureTopics(ctx, partitions, topics...); err != nil {
		return fmt.Errorf("bootstrap: %w", err)
	}
	return nil
}
