// Command bridges serves a laser agent to the three protocols of 2026's
// agent tooling at once, each driven by its official client: a Model
// Context Protocol client lists the help desk's tools, calls one and
// follows a streaming one; an AG-UI client runs the help desk as a chat
// front end does; an Agent2Agent client sends a ticket and reads the task
// back. Everything runs on the embedded log, so it needs no server.
//
//	go run ./examples/bridges                        the demo, then the desktop MCP config line
//	go run ./examples/bridges -stdio                 serve the help desk over MCP on stdin/stdout
//	go run ./examples/bridges -serve 127.0.0.1:8080  serve it over A2A (at /) and AG-UI (at /agui)
//
// The demo's last line is what a desktop MCP client (Claude Desktop,
// Cursor, an IDE) puts in its server list to launch the help desk itself.
// With -serve the first line names the URL it listens on (":0" or
// "127.0.0.1:0" picks a free port); it serves until interrupted.
package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/a2aproject/a2a-go/a2a"
	"github.com/a2aproject/a2a-go/a2aclient"
	"github.com/a2aproject/a2a-go/a2aclient/agentcard"
	"github.com/a2aproject/a2a-go/a2asrv"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	a2ab "github.com/lasergo/laser/bridge/a2a"
	"github.com/lasergo/laser/bridge/agui"
	mcpb "github.com/lasergo/laser/bridge/mcp"
	"github.com/lasergo/laser/embedlog"
	"github.com/lasergo/laser/runtime"
	"github.com/lasergo/laser/wire"
)

func main() {
	stdio := flag.Bool("stdio", false, "serve the help desk over MCP on stdin and stdout")
	addr := flag.String("serve", "", "serve the help desk over A2A (at /) and AG-UI (at /agui) on this loopback `address`, e.g. 127.0.0.1:0")
	flag.Parse()
	if *stdio && *addr != "" {
		fmt.Fprintln(os.Stderr, "bridges: -stdio and -serve are two ways to serve the help desk: pick one")
		os.Exit(2)
	}
	var err error
	switch {
	case *stdio:
		err = serveStdio(context.Background())
	case *addr != "":
		ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
		defer stop()
		err = serveHTTP(ctx, *addr, os.Stdout)
	default:
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		err = run(ctx, os.Stdout)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "bridges:", err)
		os.Exit(1)
	}
}

// start runs the help desk on an embedded log and returns its client.
func start(ctx context.Context) (*runtime.Client, func(), error) {
	client := runtime.NewClient(embedlog.New("bridges", embedlog.Config{}), runtime.ClientConfig{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err := client.Bootstrap(ctx, 1, HelpdeskListenTopic); err != nil {
		return nil, nil, err
	}
	agent, err := NewHelpdeskAgent(client, &Helpdesk{})
	if err != nil {
		return nil, nil, err
	}
	h := agent.Start(ctx)
	if err := h.Ready(ctx); err != nil {
		return nil, nil, err
	}
	return client, func() { _ = h.Shutdown(context.Background()); _ = client.Close() }, nil
}

func serveStdio(ctx context.Context) error {
	client, stop, err := start(ctx)
	if err != nil {
		return err
	}
	defer stop()
	b, err := mcpb.New(client, mcpb.Config{Name: "laser-helpdesk", Operations: HelpdeskOperations()})
	if err != nil {
		return err
	}
	return b.ServeStdio(ctx)
}

// serveHTTP serves the help desk over A2A and AG-UI on addr until ctx
// ends, after printing the URL it listens on to out. The bridges
// authenticate nobody, so addr must be a loopback address, and a request
// must name a loopback Host (handler): loopback alone does not keep a web
// page's requests out.
func serveHTTP(ctx context.Context, addr string, out io.Writer) error {
	ln, err := listenLoopback(addr)
	if err != nil {
		return err
	}
	defer ln.Close()
	client, stop, err := start(ctx)
	if err != nil {
		return err
	}
	defer stop()
	url := "http://" + ln.Addr().String()
	h, err := handler(client, url)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "serving the help desk at %s\n", url)
	fmt.Fprintf(out, "  A2A (0.3 and 1.0 JSON-RPC): %s, card %s%s\n", url, url, a2asrv.WellKnownAgentCardPath)
	fmt.Fprintf(out, "  AG-UI (POST a RunAgentInput): %s%s\n", url, aguiPath)
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 5 * time.Second}
	go func() { <-ctx.Done(); _ = srv.Close() }()
	if err := srv.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// listenLoopback listens on addr, refusing a host that is not loopback;
// an empty host is 127.0.0.1.
func listenLoopback(addr string) (net.Listener, error) {
	return listenLoopbackWith(net.Listen, addr)
}

// listenLoopbackWith is listenLoopback over listen.
func listenLoopbackWith(listen func(network, addr string) (net.Listener, error), addr string) (net.Listener, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, fmt.Errorf("-serve %q: %w", addr, err)
	}
	if host == "" {
		host = "127.0.0.1"
	}
	if ip := net.ParseIP(host); host != "localhost" && (ip == nil || !ip.IsLoopback()) {
		return nil, fmt.Errorf("-serve %q: the bridges authenticate nobody, so the example serves on loopback only (127.0.0.1, ::1 or localhost)", addr)
	}
	ln, err := listen("tcp", net.JoinHostPort(host, port))
	if err != nil {
		return nil, err
	}
	// localhost is whatever the resolver says: check what was bound.
	if tcp, ok := ln.Addr().(*net.TCPAddr); !ok || !tcp.IP.IsLoopback() {
		_ = ln.Close()
		return nil, fmt.Errorf("-serve %q: bound %s, which is not a loopback address", addr, ln.Addr())
	}
	return ln, nil
}

// loopbackHost refuses a request whose Host is not a loopback name or
// address: a page whose own name was rebound to 127.0.0.1 is same-origin
// to the browser, so only its Host header gives it away.
func loopbackHost(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		host, _, err := net.SplitHostPort(r.Host)
		if err != nil {
			host = r.Host
		}
		host = strings.TrimSuffix(strings.TrimPrefix(host, "["), "]")
		if ip := net.ParseIP(host); !strings.EqualFold(host, "localhost") && (ip == nil || !ip.IsLoopback()) {
			http.Error(w, "bridges: Host "+r.Host+" is not a loopback name or address", http.StatusForbidden)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// aguiPath is where the AG-UI endpoint is served; A2A has the root, where
// A2A clients look for the agent card.
const aguiPath = "/agui"

// handler serves the help desk at url: A2A at the root (both protocol
// versions' methods on one endpoint, the card at its well-known path) and
// AG-UI at aguiPath, each run a reply to the last user message.
func handler(client *runtime.Client, url string) (http.Handler, error) {
	b, err := a2ab.New(client, a2ab.Config{Operations: HelpdeskOperations(), Card: HelpdeskCard(), URL: url})
	if err != nil {
		return nil, err
	}
	mux := http.NewServeMux()
	mux.Handle("/", b.Handler())
	mux.Handle(aguiPath, &agui.Handler{Client: client, Topic: HelpdeskRespondTopic, Run: chatRun(client)})
	return loopbackHost(mux), nil
}

// chatCustomer is whom an AG-UI run's ticket is from: a chat front end
// does not name its user.
const chatCustomer = "there"

// chatRun starts an AG-UI run: the last user message goes to the help
// desk's reply as a ticket, on the thread's conversation, where the
// AG-UI handler follows the words it streams back (or its refusal).
func chatRun(client *runtime.Client) func(context.Context, agui.RunInput) (*wire.Envelope, error) {
	return func(ctx context.Context, in agui.RunInput) (*wire.Envelope, error) {
		body, err := json.Marshal(Ticket{Customer: chatCustomer, Text: in.LastUserText()})
		if err != nil {
			return nil, err
		}
		return client.Send(ctx, runtime.Out{Topic: HelpdeskListenTopic, From: "agui-gateway", Target: HelpdeskAgentID, Body: body},
			runtime.WithOperation(HelpdeskOpReply), runtime.WithContentType(wire.ContentJSON), runtime.WithConversation(in.Thread))
	}
}

// run is the demo: each protocol's client drives the help desk, the A2A
// and AG-UI ones over the same endpoints -serve serves.
func run(ctx context.Context, out io.Writer) error {
	client, stop, err := start(ctx)
	if err != nil {
		return err
	}
	defer stop()
	if err := mcpDemo(ctx, client, out); err != nil {
		return fmt.Errorf("mcp: %w", err)
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	// The A2A card names the URL it is served at, so listen first.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	url := "http://" + ln.Addr().String()
	h, err := handler(client, url)
	if err != nil {
		_ = ln.Close()
		return err
	}
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 5 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	defer srv.Close()
	if err := aguiDemo(ctx, client, url+aguiPath, out); err != nil {
		return fmt.Errorf("ag-ui: %w", err)
	}
	if err := a2aDemo(ctx, url, out); err != nil {
		return fmt.Errorf("a2a: %w", err)
	}
	line, err := desktopConfig()
	if err != nil {
		return err
	}
	fmt.Fprintln(out, "desktop MCP client config:")
	fmt.Fprintln(out, line)
	return nil
}

// mcpDemo drives the help desk with the go-sdk's MCP client.
func mcpDemo(ctx context.Context, client *runtime.Client, out io.Writer) error {
	b, err := mcpb.New(client, mcpb.Config{Name: "laser-helpdesk", Operations: HelpdeskOperations()})
	if err != nil {
		return err
	}
	st, ct := mcp.NewInMemoryTransports()
	ss, err := b.Server().Connect(ctx, st, nil)
	if err != nil {
		return err
	}
	defer ss.Close()
	progress := make(chan string, 16)
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "demo", Version: "1"}, &mcp.ClientOptions{
		ProgressNotificationHandler: func(_ context.Context, r *mcp.ProgressNotificationClientRequest) { progress <- r.Params.Message },
	}).Connect(ctx, ct, nil)
	if err != nil {
		return err
	}
	defer cs.Close()
	tools, err := cs.ListTools(ctx, nil)
	if err != nil {
		return err
	}
	for _, t := range tools.Tools {
		fmt.Fprintf(out, "mcp: tool %s: %s\n", t.Name, t.Description)
	}
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "helpdesk_classify", Arguments: Ticket{Customer: "ada", Text: "the site is down"}})
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "mcp: helpdesk_classify -> %s\n", text(res))
	res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "helpdesk_classify", Arguments: Ticket{Customer: "ada"}})
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "mcp: helpdesk_classify without text -> isError=%v: %s\n", res.IsError, text(res))
	params := &mcp.CallToolParams{Name: "helpdesk_reply", Arguments: Ticket{Customer: "ada", Text: "the site is down"}}
	params.SetProgressToken("reply")
	res, err = cs.CallTool(ctx, params)
	if err != nil {
		return err
	}
	items, _ := res.StructuredContent.(map[string]any)["items"].([]any)
	for range items {
		select {
		case p := <-progress:
			fmt.Fprintf(out, "mcp: progress %q\n", p)
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return nil
}

func text(res *mcp.CallToolResult) string {
	if len(res.Content) == 0 {
		return ""
	}
	if t, ok := res.Content[0].(*mcp.TextContent); ok {
		return t.Text
	}
	return ""
}

// aguiDemo runs the help desk as a chat front end would: it POSTs an AG-UI
// RunAgentInput with the user's message to url and reads the run's events
// as server-sent events.
func aguiDemo(ctx context.Context, client *runtime.Client, url string, out io.Writer) error {
	input, err := json.Marshal(map[string]any{
		"threadId": client.IDs().NewID().String(), "runId": "demo",
		"messages": []map[string]string{{"id": "m1", "role": "user", "content": "the site is down"}},
		"state":    map[string]any{}, "tools": []any{}, "context": []any{}, "forwardedProps": map[string]any{},
	})
	if err != nil {
		return err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(input))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "text/event-stream")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("POST %s: %s", url, resp.Status)
	}
	var types []string
	var said strings.Builder
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		data, ok := strings.CutPrefix(sc.Text(), "data: ")
		if !ok {
			continue
		}
		var e agui.Event
		if err := json.Unmarshal([]byte(data), &e); err != nil {
			return err
		}
		types = append(types, string(e.Type))
		said.WriteString(e.Delta)
	}
	fmt.Fprintf(out, "ag-ui: %s\n", strings.Join(types, " "))
	fmt.Fprintf(out, "ag-ui: the assistant said %q\n", strings.TrimSpace(said.String()))
	return sc.Err()
}

// a2aDemo sends a ticket with the a2a-go client to the A2A endpoint at url
// and reads the task back.
func a2aDemo(ctx context.Context, url string, out io.Writer) error {
	card, err := agentcard.DefaultResolver.Resolve(ctx, url)
	if err != nil {
		return err
	}
	for _, s := range card.Skills {
		fmt.Fprintf(out, "a2a: skill %s: %s\n", s.ID, s.Description)
	}
	c, err := a2aclient.NewFromCard(ctx, card)
	if err != nil {
		return err
	}
	defer c.Destroy()
	msg := a2a.NewMessage(a2a.MessageRoleUser, a2a.DataPart{Data: map[string]any{"customer": "bob", "text": "I was charged twice"}})
	msg.Metadata = map[string]any{a2ab.MetaSkill: "classify"}
	res, err := c.SendMessage(ctx, &a2a.MessageSendParams{Message: msg})
	if err != nil {
		return err
	}
	task, ok := res.(*a2a.Task)
	if !ok {
		return fmt.Errorf("message/send answered %T, want a task", res)
	}
	fmt.Fprintf(out, "a2a: message/send -> task %s\n", task.Status.State)
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for !task.Status.State.Terminal() {
		select {
		case <-ctx.Done():
			return errors.New("the task did not finish")
		case <-tick.C:
		}
		if task, err = c.GetTask(ctx, &a2a.TaskQueryParams{ID: task.ID}); err != nil {
			return err
		}
	}
	answer, _ := json.Marshal(task.Artifacts[0].Parts[0])
	fmt.Fprintf(out, "a2a: tasks/get -> %s %s\n", task.Status.State, answer)
	return nil
}

// desktopConfig is the mcpServers entry that launches this example over
// stdio from the module it lives in.
func desktopConfig() (string, error) {
	root, err := moduleRoot()
	if err != nil {
		return "", err
	}
	entry := map[string]any{"mcpServers": map[string]any{"laser-helpdesk": map[string]any{
		"command": "go", "args": []string{"-C", root, "run", "./examples/bridges", "-stdio"},
	}}}
	b, err := json.Marshal(entry)
	return string(b), err
}

// moduleRoot is the directory of the go.mod above the working directory.
func moduleRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("no go.mod above the working directory: run from the laser-go checkout")
		}
		dir = parent
	}
}
