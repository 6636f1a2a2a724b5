package main

import (
	"context"
	"crypto/subtle"
	"embed"
	"errors"
	"fmt"
	"html/template"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/lasergo/laser/iggy"
	"github.com/lasergo/laser/sign"
)

// The console is a web view of the log: server-rendered pages over the same
// transport and packages the runtime and the other commands use, so it
// shows what agents see and keeps no state of its own.

//go:embed consoleui
var consoleUI embed.FS

// consoleConfig is how a console is served.
type consoleConfig struct {
	// addr is the connection string as shown on pages (secrets redacted).
	addr string
	// write allows the actions that append to the log: redrive and answer.
	write bool
	// token, when set, must accompany every request (the console's cookie,
	// the X-Laser-Token header or a token form field); required off loopback.
	token string
	// keys verify capsule signatures before a redrive (with none, only
	// unverified allows redriving) and the answers to approvals, as their
	// askers verify them.
	keys       *sign.Registry
	unverified bool
	// stream is the stream the console reads, as its header names it.
	stream string
	// streams, when set, lists the server's streams for the header's
	// picker (laser dev's console serves them all).
	streams func(ctx context.Context) ([]string, error)
	// redact removes the secrets of the connection string from a text.
	redact func(string) string
	logger *slog.Logger
	now    func() time.Time
}

// console serves the pages of one server's log.
type console struct {
	t     *iggy.Transport
	cfg   consoleConfig
	pages *template.Template
	// scans holds a token per request scanning the log (maxScans at most).
	scans chan struct{}
}

func newConsole(t *iggy.Transport, cfg consoleConfig) (*console, error) {
	if cfg.logger == nil {
		cfg.logger = slog.New(slog.DiscardHandler)
	}
	if cfg.now == nil {
		cfg.now = time.Now
	}
	if cfg.redact == nil {
		cfg.redact = func(s string) string { return s }
	}
	pages, err := template.New("").Funcs(pageFuncs).ParseFS(consoleUI, "consoleui/*.html")
	if err != nil {
		return nil, fmt.Errorf("console templates: %w", err)
	}
	return &console{t: t, cfg: cfg, pages: pages, scans: make(chan struct{}, maxScans)}, nil
}

// handler routes every page; each answers bad input with a page saying
// what was wrong and a 4xx status.
func (c *console) handler() http.Handler {
	mux := http.NewServeMux()
	mux.Handle("GET /static/", http.StripPrefix("/static/", filesOnly(http.FileServerFS(mustSub(consoleUI, "consoleui")))))
	mux.HandleFunc("GET /{$}", c.overviewPage)
	mux.HandleFunc("GET /agents", c.agentsPage)
	mux.HandleFunc("GET /topics", c.topicsPage)
	mux.HandleFunc("GET /topics/{topic}", c.topicPage)
	mux.HandleFunc("GET /conversations", c.conversationsPage)
	mux.HandleFunc("GET /conversations/{id}", c.conversationPage)
	mux.HandleFunc("GET /tail", c.tailPage)
	mux.HandleFunc("GET /tail/events", c.tailEvents)
	mux.HandleFunc("GET /dlq", c.dlqPage)
	mux.HandleFunc("GET /dlq/{pos}", c.capsulePage)
	mux.HandleFunc("POST /dlq/redrive", c.redriveAction)
	mux.HandleFunc("GET /approvals", c.approvalsPage)
	mux.HandleFunc("POST /approvals/answer", c.answerAction)
	mux.HandleFunc("GET /workflows", c.workflowsPage)
	mux.HandleFunc("GET /audit", c.auditPage)
	return c.guard(mux)
}

// guard checks the token, sets the headers every page gets and turns a
// panic into a 500 page instead of a dropped connection.
func (c *console) guard(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer func() {
			if v := recover(); v != nil {
				c.cfg.logger.Error("console: page panicked", "path", r.URL.Path, "panic", v)
				c.fail(w, r, http.StatusInternalServerError, "the page failed: %v", v)
			}
		}()
		h := w.Header()
		h.Set("Content-Security-Policy", "default-src 'self'; img-src 'self' data:; style-src 'self'; script-src 'self'; frame-ancestors 'none'")
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Referrer-Policy", "same-origin") // "no-referrer" would make a form post's Origin "null"
		// Without a token, the Host is what tells a page on a rebound name
		// (evil.example resolved to 127.0.0.1) from the operator's browser.
		if c.cfg.token == "" && !loopbackHost(r.Host) {
			c.fail(w, r, http.StatusMisdirectedRequest, "this console answers only loopback names (localhost, 127.0.0.1, ::1), not %q: give it a --token to serve another name", r.Host)
			return
		}
		if c.cfg.token != "" && c.tokenInURL(w, r) {
			return
		}
		if c.cfg.token != "" && !c.authorized(r) {
			c.fail(w, r, http.StatusUnauthorized, "this console needs its token: open the address laser console printed (it carries ?token=)")
			return
		}
		if r.Method == http.MethodPost {
			if !c.cfg.write {
				c.fail(w, r, http.StatusForbidden, "this console is read-only: start it with --write to redrive or answer")
				return
			}
			// A form posted from another site must not act with this
			// console's rights.
			if origin := r.Header.Get("Origin"); origin != "" && !sameHost(origin, r.Host) {
				c.fail(w, r, http.StatusForbidden, "a request from %s may not act on this console", origin)
				return
			}
		}
		next.ServeHTTP(w, r)
	})
}

// filesOnly answers 404 for a directory, so the assets are served one by
// one and never listed.
func filesOnly(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "" || strings.HasSuffix(r.URL.Path, "/") || !strings.Contains(r.URL.Path, ".") {
			http.NotFound(w, r)
			return
		}
		next.ServeHTTP(w, r)
	})
}

const tokenCookie = "laser_console_token"

// authorized reports whether r carries the token.
func (c *console) authorized(r *http.Request) bool {
	given := r.Header.Get("X-Laser-Token")
	if given == "" {
		if ck, err := r.Cookie(tokenCookie); err == nil {
			given = ck.Value
		}
	}
	if q := r.URL.Query().Get("token"); q != "" {
		given = q
	}
	return sameToken(given, c.cfg.token)
}

// tokenInURL answers a GET that carries the right token in its URL: the
// token is kept as a cookie and the browser sent on to the same URL without
// it, so it neither lingers in the address bar and history nor leaks in a
// shared link. It reports whether it answered.
func (c *console) tokenInURL(w http.ResponseWriter, r *http.Request) bool {
	query := r.URL.Query()
	q := query.Get("token")
	if q == "" || !sameToken(q, c.cfg.token) || (r.Method != http.MethodGet && r.Method != http.MethodHead) {
		return false
	}
	http.SetCookie(w, &http.Cookie{Name: tokenCookie, Value: q, Path: "/", HttpOnly: true, SameSite: http.SameSiteStrictMode})
	query.Del("token")
	clean := *r.URL
	clean.RawQuery = query.Encode()
	http.Redirect(w, r, clean.RequestURI(), http.StatusSeeOther)
	return true
}

// sameToken compares tokens in constant time.
func sameToken(given, want string) bool {
	return subtle.ConstantTimeCompare([]byte(given), []byte(want)) == 1
}

// loopbackHost reports whether host (a Host header, port optional) names
// loopback: localhost or a loopback IP literal.
func loopbackHost(host string) bool {
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	host = strings.TrimSuffix(strings.TrimPrefix(host, "["), "]")
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// sameHost reports whether origin (scheme://host[:port]) names host.
func sameHost(origin, host string) bool {
	_, rest, ok := strings.Cut(origin, "://")
	return ok && rest == host
}

// errorView is what the error page shows.
type errorView struct {
	Status  int
	Title   string
	Message string
}

// fail answers with a page saying what went wrong.
func (c *console) fail(w http.ResponseWriter, r *http.Request, status int, format string, args ...any) {
	// Every error text shown passes redact: one may quote the connection
	// string, password included.
	msg := c.cfg.redact(fmt.Sprintf(format, args...))
	if status >= 500 {
		c.cfg.logger.Warn("console: page failed", "path", r.URL.Path, "err", msg)
	}
	c.render(w, status, "error", errorView{Status: status, Title: http.StatusText(status), Message: msg})
}

// failErr answers err with the status its kind calls for.
func (c *console) failErr(w http.ResponseWriter, r *http.Request, err error) {
	var nf *notFound
	switch {
	case errors.As(err, &nf):
		c.fail(w, r, http.StatusNotFound, "%s", nf.msg)
	case errors.Is(err, context.Canceled):
		// The browser went away; nobody reads the answer.
	default:
		c.fail(w, r, http.StatusBadGateway, "the server did not answer as expected: %s", c.cfg.redact(err.Error()))
	}
}

// notFound is a page asked for something the log does not hold.
type notFound struct{ msg string }

func (e *notFound) Error() string { return e.msg }

func notFoundf(format string, args ...any) error { return &notFound{msg: fmt.Sprintf(format, args...)} }

// page is what every page template gets besides its own data.
type page struct {
	Title   string
	Nav     string
	Addr    string
	Write   bool
	Stream  string
	Streams []string
	Data    any
}

func (c *console) render(w http.ResponseWriter, status int, name string, data any) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	title := name
	if v, ok := data.(errorView); ok {
		title = v.Title
	}
	if err := c.pages.ExecuteTemplate(w, name, page{Title: title, Nav: name, Addr: c.cfg.addr, Write: c.cfg.write, Stream: c.cfg.stream, Streams: c.streamNames(), Data: data}); err != nil {
		c.cfg.logger.Warn("console: render failed", "page", name, "err", err)
	}
}

// consoleCommand serves the console for the server --addr names.
func (a *app) consoleCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "console",
		Short: "serve a web console for the log: agents, topics, conversations, dead letters, approvals",
		Long: `Serve a web console for the server --addr names: agents and their cards,
topics and group offsets, conversations as timelines and causal trees, a
live tail, dead letters (with redrive), pending approvals (with answers),
workflow journals and governance decisions with their chain check. It listens on loopback unless --public; actions that write
need --write, and off loopback a token (generated unless --token).`,
		Args: noArgs,
	}
	sf := a.serverFlags(cmd)
	listen := cmd.Flags().String("listen", "127.0.0.1:8088", "address the console listens on")
	write := cmd.Flags().Bool("write", false, "allow redriving dead letters and answering approvals from the console")
	public := cmd.Flags().Bool("public", false, "allow a non-loopback --listen address (a token is then required)")
	token := cmd.Flags().String("token", "", "token every request must carry (generated when --public and none is given)")
	keysFile := cmd.Flags().String("keys", "", "file of enrolled keys: capsule signatures are checked with them before a redrive, and approvals' answers as their askers check them")
	unverified := cmd.Flags().Bool("unverified", false, "redrive capsules without checking their signatures")
	cmd.RunE = func(cmd *cobra.Command, _ []string) error {
		o := consoleOptions{listen: *listen, listenFlag: "console --listen", write: *write, public: *public, token: *token, addr: sf.addr.String(), unverified: *unverified}
		if *keysFile != "" {
			keys, err := loadKeys(*keysFile)
			if err != nil {
				return err
			}
			o.keys = keys
		}
		ctx := cmd.Context()
		t, err := sf.dial(ctx)
		if err != nil {
			return err
		}
		defer t.Close()
		return a.serveConsole(ctx, t, o)
	}
	return cmd
}

// consoleOptions are the console's command-line choices.
type consoleOptions struct {
	listen, token, addr string
	// listenFlag names the command and flag listen came from, for errors.
	listenFlag    string
	write, public bool
	keys          *sign.Registry
	unverified    bool
	// streams, when set, lets the console show every stream of the server.
	streams *streamSource
}

// serveConsole listens and serves until ctx ends, printing the address.
func (a *app) serveConsole(ctx context.Context, t *iggy.Transport, o consoleOptions) error {
	if !o.public {
		if err := requireLoopback(o.listenFlag, o.listen, "the console shows the log to whoever reaches it"); err != nil {
			return err
		}
	} else if o.token == "" {
		o.token = randomToken()
	}
	if o.token != "" {
		a.secrets = append(a.secrets, o.token)
	}
	logger := slog.New(slog.NewTextHandler(a.stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	c, err := newConsole(t, consoleConfig{addr: o.addr, write: o.write, token: o.token, redact: a.redact, keys: o.keys, unverified: o.unverified, logger: logger, stream: t.Stream()})
	if err != nil {
		return err
	}
	handler := c.handler()
	if o.streams != nil {
		p := newStreamPicker(c, o.streams)
		defer p.Close()
		handler = p
	}
	ln, err := net.Listen("tcp", o.listen)
	if err != nil {
		return listenError(o.listen, err)
	}
	srv := &http.Server{
		Handler:           handler,
		ReadHeaderTimeout: 10 * time.Second,
		// A page is written within a minute; the live tail lifts the
		// deadline for its own response (http.ResponseController).
		WriteTimeout: time.Minute,
		IdleTimeout:  2 * time.Minute,
		// Requests end with ctx, so Shutdown does not wait on open tails.
		BaseContext: func(net.Listener) context.Context { return ctx },
		ErrorLog:    slog.NewLogLogger(logger.Handler(), slog.LevelWarn),
	}
	url := "http://" + ln.Addr().String() + "/"
	if o.token != "" {
		url += "?token=" + o.token
	}
	if a.json {
		if err := a.printJSON(map[string]string{"console": url}); err != nil {
			return err
		}
	} else {
		fmt.Fprintf(a.stdout, "laser console: %s\n", url)
	}
	shutDown := make(chan struct{})
	go func() {
		defer close(shutDown)
		<-ctx.Done()
		shut, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		if err := srv.Shutdown(shut); err != nil {
			logger.Warn("console: shutdown left requests open", "err", err)
		}
	}()
	if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	// The handlers read through t, which the caller closes once this returns.
	<-shutDown
	return nil
}
