// Package a2a bridges the Agent2Agent protocol onto the log with the
// official a2a-go library: the agent card from the laser card and the
// generated operation table (one skill per operation), message/send as a
// command on a fresh task conversation, tasks/get replaying the task's
// state from the status and answer records on the reply topic, tasks/cancel
// as a canceled terminal, and message/stream following the task's chunk
// streams. The bridge keeps no state of its own: the task id is the
// conversation id, and the log is the task store.
package a2a

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"time"

	"github.com/a2aproject/a2a-go/a2a"

	"github.com/lasergo/laser/bridge"
	"github.com/lasergo/laser/effect"
	"github.com/lasergo/laser/operation"
	"github.com/lasergo/laser/runtime"
	"github.com/lasergo/laser/sign"
	"github.com/lasergo/laser/wire"
)

// DefaultID is the bridge's agent id when Config.ID is empty.
const DefaultID = "a2a-gateway"

// DefaultPollInterval is how often a stream re-reads its task's records.
const DefaultPollInterval = 20 * time.Millisecond

// MetaSkill is the message metadata key naming the skill (operation) a
// message asks for, when the bridge serves more than one.
const MetaSkill = "skill"

// MetaCancelToken is the metadata key of the capability that cancels a
// task: message/send returns it in the task's metadata, and tasks/cancel
// must present it in its params' metadata. Only whoever submitted the task
// (or was handed the token) can cancel it; the task id alone is not enough,
// as it is readable by anyone polling or streaming the task.
const MetaCancelToken = "cancelToken"

// metaOwner is the status metadata key holding the SHA-256 of a task's
// cancel token: the log keeps who may cancel, never the token itself.
const metaOwner = "a2a_cancel_digest"

// Config configures a Bridge.
type Config struct {
	// ID is the bridge's agent id: the source of what it publishes and its
	// entry on the bridge_hops path. Default DefaultID.
	ID string
	// Operations are the skills served, from a generated <Agent>Operations.
	// Without any, a message tunnels its params JSON verbatim as a chat
	// command on Topic.
	Operations []operation.Info
	// Card is the laser card the A2A card is built from (name and, without
	// Operations, the skills).
	Card *wire.AgentCard
	// Description, URL and Version go on the A2A card.
	Description, URL, Version string
	// Topic is where untyped messages go (default agent.commands) and
	// ReplyTopic where task records are kept and read when an operation has
	// no reply topic of its own (default agent.responses).
	Topic, ReplyTopic string
	// PollInterval is how often a stream re-reads its task; default
	// DefaultPollInterval, on the client's clock.
	PollInterval time.Duration
	// CardKey, when set, signs the served card (SignCard), under key id
	// CardKeyID.
	CardKey   ed25519.PrivateKey
	CardKeyID string
	// Key signs every record the bridge writes (task statuses, commands,
	// cancels). Required when the client verifies (ClientConfig.Verifier):
	// then a task is replayed only from records that verify, the bridge's
	// own included, so an unsigned answer cannot complete a task; enroll
	// Key's principal for the bridge's ID (sign.Registry.AllowSource).
	Key *sign.Key
	// BlockTimeout bounds how long a blocking message/send waits for its
	// task to finish before returning it unfinished; default
	// DefaultBlockTimeout.
	BlockTimeout time.Duration
	// Rand is where cancel tokens come from; default crypto/rand.
	Rand io.Reader
	// MaxBodyBytes bounds a JSON-RPC request body; a larger one is refused
	// with 413 before anything is decoded or published. Default
	// DefaultMaxBodyBytes.
	MaxBodyBytes int64
	// AllowedOrigins are the browser origins (scheme://host[:port]), besides
	// the server's own, whose JSON-RPC requests are served; a request
	// carrying any other Origin header is refused with 403. Default none.
	AllowedOrigins []string
}

// DefaultBlockTimeout is Config.BlockTimeout's default.
const DefaultBlockTimeout = 60 * time.Second

// DefaultMaxBodyBytes is the largest request body the handler reads when
// Config.MaxBodyBytes is zero: well above any message a skill takes, far
// below what would let one caller fill the bridge's memory or the log.
const DefaultMaxBodyBytes = 1 << 20

// Bridge maps A2A tasks onto the log.
type Bridge struct {
	client *runtime.Client
	cfg    Config
	ops    map[string]*bridge.Operation
	order  []string
}

// New returns a bridge publishing through client.
func New(client *runtime.Client, cfg Config) (*Bridge, error) {
	if cfg.ID == "" {
		cfg.ID = DefaultID
	}
	if _, err := wire.ParseAgentID(cfg.ID); err != nil {
		return nil, fmt.Errorf("a2a: bridge id: %w", err)
	}
	if cfg.Topic == "" {
		cfg.Topic = runtime.TopicCommands
	}
	if cfg.ReplyTopic == "" {
		cfg.ReplyTopic = runtime.TopicResponses
	}
	if cfg.PollInterval <= 0 {
		cfg.PollInterval = DefaultPollInterval
	}
	if cfg.BlockTimeout <= 0 {
		cfg.BlockTimeout = DefaultBlockTimeout
	}
	if cfg.Rand == nil {
		cfg.Rand = rand.Reader
	}
	if cfg.MaxBodyBytes <= 0 {
		cfg.MaxBodyBytes = DefaultMaxBodyBytes
	}
	if client.Verifier() != nil && cfg.Key == nil {
		return nil, fmt.Errorf("a2a: the client verifies what it reads, so the bridge's own task records must be signed: set Config.Key")
	}
	b := &Bridge{client: client, cfg: cfg, ops: make(map[string]*bridge.Operation)}
	for _, info := range cfg.Operations {
		if info.Kind == operation.Event {
			continue // a subscription, not a skill a caller asks for
		}
		op, err := bridge.NewOperation(info)
		if err != nil {
			return nil, err
		}
		if _, dup := b.ops[info.Name]; dup {
			return nil, fmt.Errorf("a2a: two operations named %q", info.Name)
		}
		b.ops[info.Name] = op
		b.order = append(b.order, info.Name)
	}
	return b, nil
}

// ID returns the bridge's agent id.
func (b *Bridge) ID() string { return b.cfg.ID }

// replyTopic is where op's task records live.
func (b *Bridge) replyTopic(op *bridge.Operation) string {
	if op != nil && op.ReplyTopic != "" {
		return op.ReplyTopic
	}
	return b.cfg.ReplyTopic
}

// skill picks the operation a message asks for: the one its metadata names,
// or the only one there is; nil for the untyped tunnel.
func (b *Bridge) skill(p *a2a.MessageSendParams) (*bridge.Operation, error) {
	if len(b.ops) == 0 {
		return nil, nil
	}
	name, _ := p.Message.Metadata[MetaSkill].(string)
	if name == "" {
		name, _ = p.Metadata[MetaSkill].(string)
	}
	if name == "" {
		if len(b.order) == 1 {
			return b.ops[b.order[0]], nil
		}
		return nil, fmt.Errorf("%w: name the skill in the message metadata %q (one of %v)", a2a.ErrInvalidParams, MetaSkill, b.order)
	}
	op, ok := b.ops[name]
	if !ok {
		return nil, fmt.Errorf("%w: no skill %q (one of %v)", a2a.ErrInvalidParams, name, b.order)
	}
	return op, nil
}

// input is the operation's JSON arguments a message carries: its first data
// part, or a text part (JSON, or a string for a string input).
func input(m *a2a.Message, op *bridge.Operation) ([]byte, error) {
	for _, part := range m.Parts {
		switch p := part.(type) {
		case a2a.DataPart:
			return json.Marshal(p.Data)
		case *a2a.DataPart:
			return json.Marshal(p.Data)
		}
	}
	for _, part := range m.Parts {
		var text string
		switch p := part.(type) {
		case a2a.TextPart:
			text = p.Text
		case *a2a.TextPart:
			text = p.Text
		default:
			continue
		}
		if json.Valid([]byte(text)) {
			return []byte(text), nil
		}
		if op.Input != nil && op.Input.Kind() == reflect.String {
			return json.Marshal(text)
		}
		return nil, fmt.Errorf("%w: skill %s takes JSON input (a data part, or JSON text)", a2a.ErrInvalidParams, op.Name)
	}
	return nil, fmt.Errorf("%w: the message has no data or text part", a2a.ErrInvalidParams)
}

// Submit handles message/send: the message becomes a command on a fresh
// task conversation, and a submitted status on the reply topic opens the
// task. The message's bridge_hops metadata is the path it came by; a path
// already holding this bridge is refused with bridge.ErrLoop.
func (b *Bridge) Submit(ctx context.Context, p *a2a.MessageSendParams) (*a2a.Task, error) {
	if p == nil || p.Message == nil {
		return nil, fmt.Errorf("%w: no message", a2a.ErrInvalidParams)
	}
	prev, err := bridge.HopsFromJSON(p.Message.Metadata[wire.MetaBridgeHops])
	if err != nil {
		return nil, fmt.Errorf("%w: %v", a2a.ErrInvalidParams, err)
	}
	hops, err := bridge.Enter(b.cfg.ID, prev)
	if err != nil {
		return nil, err
	}
	op, err := b.skill(p)
	if err != nil {
		return nil, err
	}
	task := b.client.IDs().NewID()
	cmd := commandSpec{topic: b.cfg.Topic, operation: wire.OperationChat, ct: wire.ContentJSON}
	if op == nil {
		if cmd.body, err = json.Marshal(p); err != nil {
			return nil, fmt.Errorf("a2a: encode message params: %w", err)
		}
	} else {
		args, err := input(p.Message, op)
		if err != nil {
			return nil, err
		}
		if cmd.body, err = op.EncodeInput(args); err != nil {
			return nil, fmt.Errorf("%w: %v", a2a.ErrInvalidParams, err)
		}
		cmd.topic, cmd.target, cmd.operation, cmd.ct = op.Topic, op.Agent, op.Name, op.ContentType
	}
	// The call is the bridge's effect on the log: the gate may refuse it
	// before the task opens, or replace its body.
	effect := &effect.Effect{Kind: effect.BridgeCall, Topic: cmd.topic, Operation: cmd.operation, Agent: b.cfg.ID, Target: cmd.target, Conversation: task, Body: cmd.body}
	if err := b.client.Govern(ctx, effect); err != nil {
		return nil, fmt.Errorf("a2a: refused: %w", err)
	}
	cmd.body = effect.Body
	var secret [16]byte
	if _, err := io.ReadFull(b.cfg.Rand, secret[:]); err != nil {
		return nil, fmt.Errorf("a2a: mint a cancel token: %w", err)
	}
	token := base64.RawURLEncoding.EncodeToString(secret[:])
	// The status opens the task before the command can be answered: a
	// replay ignores what precedes it, so an instant answer is never lost.
	// It records the digest of the cancel token, the task's owner.
	status := b.envelope(wire.KindStatus, task, hops)
	status.Metadata.Set(metaOwner, wire.StrValue(digest(token)))
	if err := b.publishStatus(ctx, status, b.replyTopic(op), wire.TaskSubmitted); err != nil {
		return nil, err
	}
	if err := b.publishCommand(ctx, task, cmd, hops); err != nil {
		return nil, err
	}
	t := b.taskOf(task, a2a.TaskStateSubmitted)
	t.Metadata = map[string]any{MetaCancelToken: token}
	return t, nil
}

// digest is the hex SHA-256 of a cancel token.
func digest(token string) string {
	sum := sha256.Sum256([]byte(token))
	return hex.EncodeToString(sum[:])
}

type commandSpec struct {
	topic, target, operation string
	ct                       wire.ContentType
	body                     []byte
}

// publishCommand appends the task's command: correlation and conversation
// are the task id, so every answer names the task without a lookup table.
func (b *Bridge) publishCommand(ctx context.Context, task wire.ID, c commandSpec, hops []string) error {
	env := b.envelope(wire.KindCommand, task, hops)
	env.Operation, env.Body = &c.operation, c.body
	if c.target != "" {
		target, err := wire.ParseAgentID(c.target)
		if err != nil {
			return fmt.Errorf("a2a: target: %w", err)
		}
		env.Target = &target
	}
	_, err := bridge.PublishSigned(ctx, b.client, c.topic, env, c.ct, b.cfg.Key)
	return err
}

func (b *Bridge) publishStatus(ctx context.Context, env *wire.Envelope, topic string, state wire.TaskState) error {
	op := wire.OperationTask
	env.Operation, env.TaskState = &op, &state
	_, err := bridge.PublishSigned(ctx, b.client, topic, env, wire.ContentRaw, b.cfg.Key)
	return err
}

func (b *Bridge) envelope(kind wire.Kind, task wire.ID, hops []string) *wire.Envelope {
	corr := task
	env := &wire.Envelope{Kind: kind, Conversation: task, Source: wire.AgentID(b.cfg.ID), Correlation: &corr}
	if hops != nil {
		env.Metadata.Set(wire.MetaBridgeHops, bridge.HopsValue(hops))
	}
	return env
}

// Task handles tasks/get: the task's state replayed from its records on the
// reply topics. A task id with no records is a2a.ErrTaskNotFound.
func (b *Bridge) Task(ctx context.Context, id a2a.TaskID) (*a2a.Task, error) {
	r, err := b.replay(ctx, id)
	if err != nil {
		return nil, err
	}
	return r.task, nil
}

// ErrNotOwner is matched by the error of a cancel that does not present
// the task's cancel token (MetaCancelToken); the error matches
// a2a.ErrTaskNotCancelable too, the A2A code a client gets.
var ErrNotOwner = errors.New("a2a: only the task's submitter can cancel it")

// Cancel handles tasks/cancel: an AGDX error with code cancelled and task
// state canceled on the reply topic, so every later read replays the task
// as canceled. token must be the MetaCancelToken message/send returned
// (ErrNotOwner otherwise); a finished task is a2a.ErrTaskNotCancelable.
func (b *Bridge) Cancel(ctx context.Context, id a2a.TaskID, token string) (*a2a.Task, error) {
	r, err := b.replay(ctx, id)
	if err != nil {
		return nil, err
	}
	if r.owner == "" || token == "" || subtle.ConstantTimeCompare([]byte(digest(token)), []byte(r.owner)) != 1 {
		return nil, fmt.Errorf("%w: %w: task %s: present the %q message/send returned in the tasks/cancel params' metadata", a2a.ErrTaskNotCancelable, ErrNotOwner, id, MetaCancelToken)
	}
	if r.task.Status.State.Terminal() {
		return nil, fmt.Errorf("%w: task %s is %s", a2a.ErrTaskNotCancelable, id, r.task.Status.State)
	}
	msg := "canceled by the A2A client"
	eb, err := (&wire.ErrorBody{Code: wire.ErrorCancelled, Message: &msg}).Marshal()
	if err != nil {
		return nil, fmt.Errorf("a2a: encode cancel: %w", err)
	}
	env := b.envelope(wire.KindError, r.conv, nil)
	state := wire.TaskCanceled
	env.TaskState, env.Body = &state, eb
	if _, err := bridge.PublishSigned(ctx, b.client, r.topic, env, wire.ContentCBOR, b.cfg.Key); err != nil {
		return nil, err
	}
	return b.taskOf(r.conv, a2a.TaskStateCanceled), nil
}

// replyTopics are every topic task records may be on, in a fixed order.
func (b *Bridge) replyTopics() []string {
	topics := []string{b.cfg.ReplyTopic}
	for _, name := range b.order {
		if t := b.replyTopic(b.ops[name]); !contains(topics, t) {
			topics = append(topics, t)
		}
	}
	return topics
}

func contains(ss []string, s string) bool {
	for _, x := range ss {
		if x == s {
			return true
		}
	}
	return false
}

func (b *Bridge) taskOf(id wire.ID, state a2a.TaskState) *a2a.Task {
	return &a2a.Task{ID: a2a.TaskID(id.String()), ContextID: id.String(), Status: a2a.TaskStatus{State: state}}
}

// replayed is a task as its records tell it.
type replayed struct {
	conv wire.ID
	// topic holds the task's records: where its submitted status is.
	topic string
	// owner is the digest of the task's cancel token.
	owner string
	task  *a2a.Task
	// events are the stream's updates in order (artifact chunks, then the
	// final status), for message/stream.
	events []a2a.Event
}

func (b *Bridge) replay(ctx context.Context, id a2a.TaskID) (*replayed, error) {
	conv, err := wire.ParseID(string(id))
	if err != nil {
		return nil, fmt.Errorf("%w: %q is no task id of this bridge", a2a.ErrTaskNotFound, id)
	}
	h, err := bridge.ReadTrusted(ctx, b.client, conv, b.replyTopics()...)
	if err != nil {
		return nil, fmt.Errorf("a2a: replay task %s: %w", id, err)
	}
	r := &replayed{conv: conv}
	var f fold
	for _, m := range h {
		f.next(m)
	}
	if !f.seen {
		return nil, fmt.Errorf("%w: %s", a2a.ErrTaskNotFound, id)
	}
	r.topic, r.owner = f.topic, f.owner
	r.task = b.taskOf(conv, f.state)
	r.task.Status.Message = f.message
	r.task.Artifacts = f.artifacts()
	r.events = f.events(r.task)
	return r, nil
}

// ErrUnsupported is matched by the errors of the A2A methods the bridge does
// not serve (push notifications, the extended card).
var ErrUnsupported = errors.New("a2a: not served by the laser bridge")
