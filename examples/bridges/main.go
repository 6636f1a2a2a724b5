// Command bridges serves a laser agent to the three protocols of 2026's
// agent tooling at once, each driven by its official client: a Model
// Context Protocol client lists the help desk's tools, calls one and
// follows a streaming one; an AG-UI stream renders that reply as a chat
// front end sees it; an Agent2Agent client sends a ticket and reads the
// task back. Everything runs on the embedded log, so it needs no server.
//
//	go run ./examples/bridges          the demo, then the desktop MCP config line
//	go run ./examples/bridges -stdio   serve the help desk over MCP on stdin/stdout
//
// The last line it prints is what a desktop MCP client (Claude Desktop,
// Cursor, an IDE) puts in its server list to launch the help desk itself.
package main

import (
	"bufio"
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
	"path/filepath"
	"strings"
	"time"

	"github.com/a2aproject/a2a-go/a2a"
	"github.com/a2aproject/a2a-go/a2aclient"
	"github.com/a2aproject/a2a-go/a2aclient/agentcard"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	a2ab "github.com/lasergo/laser/bridge/a2a"
	"github.com/lasergo/laser/bridge/agui"
	mcpb "github.com/lasergo/laser/bridge/mcp"
	"github.com/lasergo/laser/embedlog"
	"github.com/lasergo/laser/runtime"
)

func main() {
	stdio := flag.Bool("stdio", false, "serve the help desk over MCP on stdin and stdout")
	flag.Parse()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	if *stdio {
		cancel()
		ctx, cancel = context.WithCancel(context.Background())
	}
	defer cancel()
	var err error
	if *stdio {
		err = serveStdio(ctx)
	} else {
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

func run(ctx context.Context, out io.Writer) error {
	client, stop, err := start(ctx)
	if err != nil {
		return err
	}
	defer stop()
	conv, err := mcpDemo(ctx, client, out)
	if err != nil {
		return fmt.Errorf("mcp: %w", err)
	}
	if err := aguiDemo(ctx, client, conv, out); err != nil {
		return fmt.Errorf("ag-ui: %w", err)
	}
	if err := a2aDemo(ctx, client, out); err != nil {
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

// mcpDemo drives the help desk with the go-sdk's MCP client and returns the
// conversation of the streamed reply.
func mcpDemo(ctx context.Context, client *runtime.Client, out io.Writer) (string, error) {
	b, err := mcpb.New(client, mcpb.Config{Name: "laser-helpdesk", Operations: HelpdeskOperations()})
	if err != nil {
		return "", err
	}
	st, ct := mcp.NewInMemoryTransports()
	ss, err := b.Server().Connect(ctx, st, nil)
	if err != nil {
		return "", err
	}
	defer ss.Close()
	progress := make(chan string, 16)
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "demo", Version: "1"}, &mcp.ClientOptions{
		ProgressNotificationHandler: func(_ context.Context, r *mcp.ProgressNotificationClientRequest) { progress <- r.Params.Message },
	}).Connect(ctx, ct, nil)
	if err != nil {
		return "", err
	}
	defer cs.Close()
	tools, err := cs.ListTools(ctx, nil)
	if err != nil {
		return "", err
	}
	for _, t := range tools.Tools {
		fmt.Fprintf(out, "mcp: tool %s: %s\n", t.Name, t.Description)
	}
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "helpdesk_classify", Arguments: Ticket{Customer: "ada", Text: "the site is down"}})
	if err != nil {
		return "", err
	}
	fmt.Fprintf(out, "mcp: helpdesk_classify -> %s\n", text(res))
	res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "helpdesk_classify", Arguments: Ticket{Customer: "ada"}})
	if err != nil {
		return "", err
	}
	fmt.Fprintf(out, "mcp: helpdesk_classify without text -> isError=%v: %s\n", res.IsError, text(res))
	params := &mcp.CallToolParams{Name: "helpdesk_reply", Arguments: Ticket{Customer: "ada", Text: "the site is down"}}
	params.SetProgressToken("reply")
	res, err = cs.CallTool(ctx, params)
	if err != nil {
		return "", err
	}
	items, _ := res.StructuredContent.(map[string]any)["items"].([]any)
	for range items {
		select {
		case p := <-progress:
			fmt.Fprintf(out, "mcp: progress %q\n", p)
		case <-ctx.Done():
			return "", ctx.Err()
		}
	}
	conv, _ := res.Meta[mcpb.MetaConversation].(string)
	return conv, nil
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

// serve runs h on a loopback port until ctx ends and returns its URL.
func serve(ctx context.Context, h http.Handler) (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 5 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	go func() { <-ctx.Done(); _ = srv.Close() }()
	return "http://" + ln.Addr().String(), nil
}

// aguiDemo reads the streamed reply's conversation as a chat front end
// would: AG-UI events over server-sent events.
func aguiDemo(ctx context.Context, client *runtime.Client, conv string, out io.Writer) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	url, err := serve(ctx, &agui.Handler{Client: client, Topic: runtime.TopicResponses})
	if err != nil {
		return err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url+"/?threadId="+conv, nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
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

// a2aDemo sends a ticket with the a2a-go client and reads the task back.
func a2aDemo(ctx context.Context, client *runtime.Client, out io.Writer) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	// The card names the URL it is served at, so listen first.
	mux := http.NewServeMux()
	url, err := serve(ctx, mux)
	if err != nil {
		return err
	}
	b, err := a2ab.New(client, a2ab.Config{Operations: HelpdeskOperations(), Card: HelpdeskCard(), URL: url})
	if err != nil {
		return err
	}
	mux.Handle("/", b.Handler())
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
