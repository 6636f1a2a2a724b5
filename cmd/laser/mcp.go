package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"sort"

	"github.com/spf13/cobra"

	"github.com/lasergo/laser/bridge"
	mcpb "github.com/lasergo/laser/bridge/mcp"
	"github.com/lasergo/laser/operation"
	"github.com/lasergo/laser/registry"
	"github.com/lasergo/laser/runtime"
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

With no --http it speaks MCP on stdin and stdout, which is how desktop MCP
clients run a server; --list prints the tools and exits.`,
		Args: noArgs,
	}
	sf := a.serverFlags(cmd)
	httpAddr := cmd.Flags().String("http", "", "serve streamable HTTP on this address (e.g. 127.0.0.1:8765) instead of stdio")
	topic := cmd.Flags().String("topic", runtime.TopicCommands, "topic the agents listen on")
	replies := cmd.Flags().String("reply-topic", runtime.TopicResponses, "topic the agents answer on")
	listens := cmd.Flags().StringToString("listen", nil, "agent=topic for agents listening elsewhere than --topic")
	registryTopic := cmd.Flags().String("registry", runtime.TopicRegistry, "registry topic")
	list := cmd.Flags().Bool("list", false, "print the tools and exit")
	cmd.RunE = func(cmd *cobra.Command, _ []string) error {
		ctx := cmd.Context()
		t, err := sf.dial(ctx)
		if err != nil {
			return err
		}
		defer t.Close()
		// stdout is the MCP stream under stdio: every log goes to stderr.
		client := runtime.NewClient(t, runtime.ClientConfig{Logger: slog.New(slog.NewTextHandler(a.stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))})
		defer client.Close()
		ops, err := registryOperations(ctx, client, *registryTopic, *topic, *replies, *listens)
		if err != nil {
			return err
		}
		b, err := mcpb.New(client, mcpb.Config{Name: "laser", Operations: ops})
		if err != nil {
			return err
		}
		if *list {
			return a.printTools(b)
		}
		if *httpAddr != "" {
			return a.serveMCPHTTP(ctx, b, *httpAddr)
		}
		return b.ServeStdio(ctx)
	}
	return cmd
}

// registryOperations are the skills of every fresh, unquarantined card.
func registryOperations(ctx context.Context, client *runtime.Client, registryTopic, topic, replies string, listens map[string]string) ([]operation.Info, error) {
	reg := registry.New(client.Transport(), registry.Config{Topic: registryTopic, Clock: client.Clock()})
	if err := reg.Refresh(ctx); err != nil {
		return nil, fmt.Errorf("read the registry %s: %w", registryTopic, err)
	}
	entries := reg.Cards()
	sort.Slice(entries, func(i, j int) bool { return entries[i].Agent < entries[j].Agent })
	var ops []operation.Info
	now := client.Clock().Now()
	for _, e := range entries {
		if !e.Fresh(now) || reg.Quarantined(e.Agent) {
			continue
		}
		listen := topic
		if l, ok := listens[e.Agent]; ok {
			listen = l
		}
		ops = append(ops, bridge.CardOperations(e.Card, listen, replies)...)
	}
	return ops, nil
}

// toolView is one tool as `laser mcp --list --json` prints it.
type toolView struct {
	Name        string `json:"name"`
	Description string `json:"description"`
}

func (a *app) printTools(b *mcpb.Bridge) error {
	tools := b.Tools()
	views := make([]toolView, len(tools))
	for i, t := range tools {
		views[i] = toolView{Name: t.Name, Description: t.Description}
	}
	if a.json {
		return a.printJSON(views)
	}
	if len(views) == 0 {
		fmt.Fprintln(a.stdout, "no agent cards on the registry")
		return nil
	}
	for _, v := range views {
		fmt.Fprintf(a.stdout, "%s\t%s\n", v.Name, v.Description)
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
