package main

import (
	"bytes"
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"slices"
	"sort"
	"strings"

	"github.com/spf13/cobra"

	"github.com/lasergo/laser/bridge"
	mcpb "github.com/lasergo/laser/bridge/mcp"
	"github.com/lasergo/laser/operation"
	"github.com/lasergo/laser/registry"
	"github.com/lasergo/laser/runtime"
	"github.com/lasergo/laser/sign"
)

// mcpCommand serves the agents of the registry as MCP tools: over stdio
// (what a desktop MCP client launches) or streamable HTTP.
func (a *app) mcpCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "mcp",
		Short: "serve the registry's agents as MCP tools (stdio, or --http)",
		Long: `Serve every agent with a fresh card on the registry topic as Model Context
Protocol tools, one per skill: a skill with an output is a request, one without
a command. The card names skills, not their Go types, so each tool takes any
JSON object; for the generated schemas, serve the agents' <Agent>Operations
with package bridge/mcp from your own program.

A card does not say whether a skill answers in one piece or as a chunk stream
(it names what a skill takes and returns, not how it answers), so a streaming
skill is named with --stream AGENT=SKILL: its tool reports each chunk as a
progress notification and returns all of them. Served as a request, a
streaming skill's call ends at its deadline with no answer.

An agent is called on its own topic AGENT.commands and answered on
AGENT.responses when those exist (lasergen's convention), else on --topic and
--reply-topic; --listen and --reply name them per agent. An agent whose topic
cannot be read is named in a warning.

--prompts FILE serves the prompt templates of a JSON file as MCP prompts.

With no --http it speaks MCP on stdin and stdout, which is how desktop MCP
clients run a server; --list prints the tools and exits.

With --keys only cards signed by their agent's enrolled key become tools, and
only answers that verify count; an unsigned or forged card is skipped with a
warning. A card that cannot be served (one skill listed twice, a tool name
another card already has) is skipped with a warning too: one bad card never
stops the others being served.

--key signs every call. An agent that verifies what it handles dead-letters
an unsigned call, and a card does not say whether its agent verifies, so
--keys without --key warns at start; a call such an agent refused fails at its
deadline saying so.`,
		Args: noArgs,
	}
	sf := a.serverFlags(cmd)
	httpAddr := cmd.Flags().String("http", "", "serve streamable HTTP on this address (e.g. 127.0.0.1:8765) instead of stdio")
	topic := cmd.Flags().String("topic", runtime.TopicCommands, "topic an agent listens on when it has no AGENT.commands topic")
	replies := cmd.Flags().String("reply-topic", runtime.TopicResponses, "topic an agent answers on when it has no AGENT.responses topic")
	listens := cmd.Flags().StringToString("listen", nil, "agent=topic for an agent listening elsewhere")
	answers := cmd.Flags().StringToString("reply", nil, "agent=topic for an agent answering elsewhere")
	registryTopic := cmd.Flags().String("registry", runtime.TopicRegistry, "registry topic")
	list := cmd.Flags().Bool("list", false, "print the tools and exit")
	keyFile := cmd.Flags().String("key", "", "file holding the hex Ed25519 seed that signs every call (needed when the agents verify; enroll its principal for mcp-gateway)")
	keysFile := cmd.Flags().String("keys", "", "file of enrolled keys: only cards signed by their agent's key are served, and only answers that verify count")
	promptsFile := cmd.Flags().String("prompts", "", "JSON file of MCP prompts to serve: [{name, title, description, arguments: [{name, description, required}], messages: [{role, text}]}], {{argument}} filled on get")
	streamFlags := cmd.Flags().StringArray("stream", nil, "AGENT=SKILL of a skill that answers with a chunk stream (a card cannot say so); repeatable")
	cmd.RunE = func(cmd *cobra.Command, _ []string) error {
		ctx := cmd.Context()
		streams, err := streamingSkills(*streamFlags)
		if err != nil {
			return err
		}
		prompts, err := readPrompts(*promptsFile)
		if err != nil {
			return err
		}
		t, err := sf.dial(ctx)
		if err != nil {
			return err
		}
		defer t.Close()
		key, err := seedKey(*keyFile)
		if err != nil {
			return err
		}
		var keys *sign.Registry
		if *keysFile != "" {
			if keys, err = loadKeys(*keysFile); err != nil {
				return err
			}
		}
		// stdout is the MCP stream under stdio: every log goes to stderr.
		cc := runtime.ClientConfig{Logger: slog.New(slog.NewTextHandler(a.stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))}
		if keys != nil {
			cc.Verifier = keys
		}
		client := runtime.NewClient(t, cc)
		defer client.Close()
		ops, err := a.registryOperations(ctx, client, keys, *registryTopic, agentTopics{listen: *topic, reply: *replies, listens: *listens, replies: *answers, streams: streams})
		if err != nil {
			return err
		}
		if keys != nil && key == nil {
			a.warnUnsigned(ops)
		}
		b, err := mcpb.New(client, mcpb.Config{Name: "laser", Operations: ops, Key: key, Prompts: prompts})
		if err != nil {
			return usagef("%v", err)
		}
		if *list {
			return a.printTools(b, ops)
		}
		if *httpAddr != "" {
			return a.serveMCPHTTP(ctx, b, *httpAddr)
		}
		return b.ServeStdio(ctx)
	}
	return cmd
}

// registryOperations are the skills of every fresh, unquarantined card
// (under keys, every verified one). A card that cannot be served is skipped
// with a warning on stderr, never fatal.
func (a *app) registryOperations(ctx context.Context, client *runtime.Client, keys *sign.Registry, registryTopic string, topics agentTopics) ([]operation.Info, error) {
	rc := registry.Config{Topic: registryTopic, Clock: client.Clock()}
	if keys != nil {
		rc.Verifier = keys
	}
	reg := registry.New(client.Transport(), rc)
	if err := reg.Refresh(ctx); err != nil {
		return nil, fmt.Errorf("read the registry %s: %w", registryTopic, err)
	}
	entries := reg.Cards()
	sort.Slice(entries, func(i, j int) bool { return entries[i].Agent < entries[j].Agent })
	if keys != nil {
		a.warnUnverified(ctx, client, registryTopic, reg)
	}
	var ops []operation.Info
	tools := make(map[string]string)
	streamed := make(map[string]bool)
	now := client.Clock().Now()
	for _, e := range entries {
		if !e.Fresh(now) || reg.Quarantined(e.Agent) {
			continue
		}
		listen, reply := topics.of(ctx, client.Transport(), e.Agent)
		if _, err := client.Transport().Partitions(ctx, listen); err != nil {
			fmt.Fprintf(a.stderr, "laser mcp: agent %s: its topic %s cannot be read (%v): calls would go unanswered; name its topic with --listen %s=TOPIC\n", e.Agent, listen, err, e.Agent)
		}
		cardOps := bridge.CardOperations(e.Card, listen, reply)
		topics.markStreams(cardOps, reply, streamed)
		if err := servable(cardOps, tools); err != nil {
			fmt.Fprintf(a.stderr, "laser mcp: skipping the card of %s: %v\n", e.Agent, err)
			continue
		}
		for _, op := range cardOps {
			tools[mcpb.ToolName(op)] = e.Agent
		}
		ops = append(ops, cardOps...)
	}
	a.warnUnstreamed(topics.streams, streamed)
	return ops, nil
}

// readPrompts reads the --prompts file; no path is no prompts.
func readPrompts(path string) ([]mcpb.Prompt, error) {
	if path == "" {
		return nil, nil
	}
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("--prompts: %w", err)
	}
	var prompts []mcpb.Prompt
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&prompts); err != nil {
		return nil, usagef("--prompts %s: %v", path, err)
	}
	return prompts, nil
}

// streamingSkills reads the --stream flags: agent to its streaming skills.
func streamingSkills(flags []string) (map[string][]string, error) {
	out := make(map[string][]string, len(flags))
	for _, f := range flags {
		agent, skill, ok := strings.Cut(f, "=")
		if !ok || agent == "" || skill == "" {
			return nil, usagef("--stream %q: want AGENT=SKILL", f)
		}
		out[agent] = append(out[agent], skill)
	}
	return out, nil
}

// markStreams makes the skills of cardOps that topics.streams names
// streaming operations answered on reply, and records them in found.
func (t agentTopics) markStreams(cardOps []operation.Info, reply string, found map[string]bool) {
	for i := range cardOps {
		op := &cardOps[i]
		if slices.Contains(t.streams[op.Agent], op.Name) {
			op.Kind, op.ReplyTopic = operation.Stream, reply
			found[op.Agent+"="+op.Name] = true
		}
	}
}

// warnUnstreamed names, for each --stream no served card lists, what was
// not found.
func (a *app) warnUnstreamed(streams map[string][]string, found map[string]bool) {
	agents := make([]string, 0, len(streams))
	for agent := range streams {
		agents = append(agents, agent)
	}
	sort.Strings(agents)
	for _, agent := range agents {
		for _, skill := range streams[agent] {
			if !found[agent+"="+skill] {
				fmt.Fprintf(a.stderr, "laser mcp: --stream %s=%s: no served card of %s lists skill %s\n", agent, skill, agent, skill)
			}
		}
	}
}

// seedKey reads a signing key from a file holding its hex Ed25519 seed;
// no path is no key.
func seedKey(path string) (*sign.Key, error) {
	if path == "" {
		return nil, nil
	}
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	seed, err := hex.DecodeString(strings.TrimSpace(string(raw)))
	if err != nil {
		return nil, usagef("--key: %v", err)
	}
	key, err := sign.KeyFromSeed(seed)
	if err != nil {
		return nil, usagef("--key: %v", err)
	}
	return key, nil
}

// agentTopics say where each agent listens and answers, and how: the flags
// naming it, else the topics lasergen's convention names (AGENT.commands,
// AGENT.responses) when they exist, else the defaults.
type agentTopics struct {
	listen, reply    string
	listens, replies map[string]string
	// streams names each agent's streaming skills (--stream).
	streams map[string][]string
}

func (t agentTopics) of(ctx context.Context, tr runtime.Transport, agent string) (listen, reply string) {
	pick := func(named map[string]string, own, fallback string) string {
		if topic, ok := named[agent]; ok {
			return topic
		}
		if _, err := tr.Partitions(ctx, own); err == nil {
			return own
		}
		return fallback
	}
	return pick(t.listens, agent+".commands", t.listen), pick(t.replies, agent+".responses", t.reply)
}

// servable checks that a card's operations make tools the server can hold
// next to the ones already taken (tool name to agent).
func servable(ops []operation.Info, taken map[string]string) error {
	mine := make(map[string]bool, len(ops))
	for _, op := range ops {
		name := mcpb.ToolName(op)
		if mine[name] {
			return fmt.Errorf("it lists skill %q twice", op.Name)
		}
		if other, ok := taken[name]; ok {
			return fmt.Errorf("tool %s is already served for agent %s", name, other)
		}
		mine[name] = true
		if _, err := bridge.NewOperation(op); err != nil {
			return err
		}
	}
	return nil
}

// warnUnsigned warns, under --keys without --key, that the calls to the
// agents served go unsigned: a card does not say whether its agent
// verifies what it handles, and one that does parks an unsigned call
// unanswered (the call then ends at its deadline, saying so).
func (a *app) warnUnsigned(ops []operation.Info) {
	var agents []string
	for _, op := range ops {
		if !slices.Contains(agents, op.Agent) {
			agents = append(agents, op.Agent)
		}
	}
	if len(agents) == 0 {
		return
	}
	fmt.Fprintf(a.stderr, "laser mcp: --keys without --key: calls to %s go unsigned; an agent that verifies what it handles dead-letters them unanswered (the call fails at its deadline, saying so): give --key FILE, a seed whose principal is enrolled for mcp-gateway\n", strings.Join(agents, ", "))
}

// warnUnverified names the agents with a card on the registry that does
// not verify under the keys: skipped, and the user should know why.
func (a *app) warnUnverified(ctx context.Context, client *runtime.Client, registryTopic string, verified *registry.Registry) {
	all := registry.New(client.Transport(), registry.Config{Topic: registryTopic, Clock: client.Clock()})
	if err := all.Refresh(ctx); err != nil {
		return
	}
	for _, e := range all.Cards() {
		if _, ok := verified.Card(e.Agent); !ok {
			fmt.Fprintf(a.stderr, "laser mcp: skipping the card of %s: it is not signed by a key enrolled for %s\n", e.Agent, e.Agent)
		}
	}
}

// toolView is one tool as `laser mcp --list --json` prints it.
type toolView struct {
	Name        string `json:"name"`
	Description string `json:"description"`
	// Kind is how a call runs: request, stream or command.
	Kind string `json:"kind"`
	// Topic is where a call goes and ReplyTopic where its answer is read.
	Topic      string `json:"topic"`
	ReplyTopic string `json:"reply_topic,omitempty"`
}

// printTools prints b's tools with the topics of ops, in the same order.
func (a *app) printTools(b *mcpb.Bridge, ops []operation.Info) error {
	tools := b.Tools()
	views := make([]toolView, len(tools))
	for i, t := range tools {
		views[i] = toolView{Name: t.Name, Description: t.Description, Kind: ops[i].Kind.String(), Topic: ops[i].Topic, ReplyTopic: ops[i].ReplyTopic}
	}
	if a.json {
		return a.printJSON(views)
	}
	if len(views) == 0 {
		fmt.Fprintln(a.stdout, "no agent cards on the registry")
		return nil
	}
	for _, v := range views {
		fmt.Fprintf(a.stdout, "%s\t%s\t%s\t%s\n", v.Name, v.Kind, v.Topic, v.Description)
	}
	return nil
}

func (a *app) serveMCPHTTP(ctx context.Context, b *mcpb.Bridge, addr string) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	srv := &http.Server{Handler: b.HTTPHandler(), ErrorLog: nil}
	fmt.Fprintf(a.stderr, "laser mcp: serving %d tools on http://%s\n", len(b.Tools()), ln.Addr())
	go func() {
		<-ctx.Done()
		_ = srv.Close()
	}()
	if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}
