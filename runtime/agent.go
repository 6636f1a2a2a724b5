package runtime

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/lasergo/laser/effect"
	"github.com/lasergo/laser/sign"
	"github.com/lasergo/laser/wire"
)

// AgentConfig describes an agent: an identity that listens on a topic and
// answers. ID, Listen and Handler are required.
type AgentConfig struct {
	// ID is the agent's identity: messages targeted elsewhere are skipped,
	// and replies, acks and events are sent from it.
	ID string
	// Listen is the topic the agent consumes.
	Listen string
	// Respond is where Respond, Fail, Status and acks go. Optional.
	Respond string
	// Group is the consumer group; replicas of one agent share it. Default ID.
	Group   string
	Handler Handler
	// Verifier, SigningKey and Middleware are the agent consumer's (see
	// ConsumerConfig); SigningKey also signs the agent's card.
	Verifier   Verifier
	SigningKey *sign.Key
	Middleware []Middleware
	// Tuning is how the agent's consumer runs; its clock, ids and logger
	// are the client's.
	Tuning Tuning
	// Card is what the agent advertises; lasergen fills it in.
	Card *wire.AgentCard
	// CardTopic, when set, is where the agent publishes Card as it starts,
	// before it becomes ready, so a registry refreshed after Ready sees it
	// (TopicRegistry is where package registry reads cards). Empty
	// publishes nothing.
	CardTopic string
	// EffectGate, when set, decides before the effects of the agent's handlers in
	// place of the client's (ClientConfig.EffectGate).
	EffectGate EffectGate
	// Claims are what the agent's handlers declare about their effects
	// (lasergen fills them in from //laser: directives); a gate sees them
	// on every effect of a handler.
	Claims effect.Claims
}

// Agent is a configured agent, ready to Start.
type Agent struct {
	client *Client
	cfg    AgentConfig
}

// NewAgent validates cfg and returns an agent running on the client. Every
// configuration error is reported here, as a CodeConfig error, so Start
// fails only when the log or the client's state does (see Start).
func (c *Client) NewAgent(cfg AgentConfig) (*Agent, error) {
	if cfg.CardTopic != "" && cfg.Card == nil {
		return nil, &Error{Code: CodeConfig, Msg: "agent " + cfg.ID + " publishes its card but has none"}
	}
	if cfg.ID == "" {
		return nil, &Error{Code: CodeConfig, Msg: "agent needs an id"}
	}
	if cfg.Listen == "" {
		return nil, &Error{Code: CodeConfig, Msg: "agent " + cfg.ID + " needs a listen topic"}
	}
	if cfg.Handler == nil {
		return nil, &Error{Code: CodeConfig, Msg: "agent " + cfg.ID + " needs a handler"}
	}
	if cfg.Group == "" {
		cfg.Group = cfg.ID
	}
	// Validate now, so a bad id or option fails here and not in Start.
	if _, err := NewConsumer(c.t, cfg.consumer(c)); err != nil {
		return nil, err
	}
	return &Agent{client: c, cfg: cfg}, nil
}

// consumer is the consumer configuration of the agent running on c.
func (cfg *AgentConfig) consumer(c *Client) ConsumerConfig {
	return ConsumerConfig{
		Topic: cfg.Listen, Group: cfg.Group, Agent: cfg.ID, Handler: cfg.Handler, RespondTopic: cfg.Respond, Client: c,
		EffectGate: cfg.EffectGate, Claims: cfg.Claims,
		Verifier: cfg.Verifier, SigningKey: cfg.SigningKey, Middleware: cfg.Middleware,
		Tuning: cfg.Tuning,
	}
}

// ID returns the agent's id.
func (a *Agent) ID() string { return a.cfg.ID }

// Start runs the agent in the background and returns its handle. ctx bounds
// the agent's whole life: cancelling it is a hard stop. Dropping the handle
// does not stop the agent.
//
// A client runs one agent per id: while an agent is running, starting
// another with its id fails at once (Ready and Wait return a CodeConfig
// error naming the id). Two agents with one id would share a consumer group
// and each receive part of the other's messages; replicas of one agent run
// on clients of their own, as they do in separate processes.
func (a *Agent) Start(ctx context.Context) *AgentHandle {
	c, err := NewConsumer(a.client.t, a.cfg.consumer(a.client))
	if err == nil {
		err = a.client.claim(a.cfg.ID)
	}
	runCtx, cancel := context.WithCancel(ctx)
	h := &AgentHandle{id: a.cfg.ID, ready: make(chan struct{}), stop: make(chan struct{}), done: make(chan struct{}), cancel: cancel}
	go func() {
		defer close(h.done)
		defer cancel()
		if err != nil {
			h.err = err
			return
		}
		defer a.client.release(a.cfg.ID)
		if a.cfg.CardTopic != "" {
			if err := a.client.publishCard(runCtx, a.cfg.CardTopic, a.cfg.ID, a.cfg.Card, a.cfg.SigningKey); err != nil {
				h.err = err
				return
			}
		}
		h.err = c.Run(runCtx, func() { close(h.ready) }, h.stop)
	}()
	return h
}

// claim records that an agent with id runs on the client, or says why it
// cannot.
func (c *Client) claim(id string) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.running[id] {
		return &Error{Code: CodeConfig, Msg: fmt.Sprintf("agent %q is already running on this client: two agents with one id share "+
			"a consumer group and each gets part of the other's messages; give each agent its own id "+
			"(check the id= of every //laser:agent), or run replicas on clients of their own", id)}
	}
	if c.running == nil {
		c.running = make(map[string]bool)
	}
	c.running[id] = true
	return nil
}

// release forgets a stopped agent's id.
func (c *Client) release(id string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.running, id)
}

// AgentHandle controls a running agent.
type AgentHandle struct {
	id       string
	ready    chan struct{}
	stop     chan struct{}
	stopOnce sync.Once
	done     chan struct{}
	cancel   context.CancelFunc
	err      error
}

// Ready waits until the agent has joined its group (and warmed its dedup
// window); publish to it only after this, or the join may miss the message.
// An agent that stopped first fails it with an *Error ("agent stopped
// before it became ready") wrapping why it stopped, with that cause's Code.
func (h *AgentHandle) Ready(ctx context.Context) error {
	select {
	case <-h.ready:
		return nil
	case <-h.done:
		select {
		case <-h.ready:
			return nil
		default:
		}
		return notReady(h.err)
	case <-ctx.Done():
		return ctx.Err()
	}
}

// notReady is Ready's error for an agent that stopped with cause (nil when
// it stopped cleanly) before it became ready.
func notReady(cause error) error {
	code := CodeHandler
	if cause != nil {
		code = CodeOf(cause)
	}
	return &Error{Code: code, Msg: "agent stopped before it became ready", Err: cause}
}

// Shutdown stops the agent gracefully (see Consumer.Run) and returns its
// result; if ctx ends first it returns ctx.Err() and the drain continues.
func (h *AgentHandle) Shutdown(ctx context.Context) error {
	h.stopOnce.Do(func() { close(h.stop) })
	select {
	case <-h.done:
		return h.err
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Wait blocks until the agent stops on its own (or is stopped) and returns
// its result.
func (h *AgentHandle) Wait() error {
	<-h.done
	return h.err
}

// Stop is the hard stop: no drain, no commit of unfinished work, no leave.
func (h *AgentHandle) Stop() error {
	h.cancel()
	<-h.done
	if errors.Is(h.err, context.Canceled) {
		return nil
	}
	return h.err
}

// Done is closed once the agent has stopped.
func (h *AgentHandle) Done() <-chan struct{} { return h.done }
