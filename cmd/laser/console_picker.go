package main

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/apache/iggy/foreign/go/client"
	"github.com/apache/iggy/foreign/go/client/tcp"

	"github.com/lasergo/laser/iggy"
)

// A console reads one stream. The console of laser dev serves every stream
// of its server: a request picks one with ?stream=NAME, which a cookie keeps
// for the requests after it, and each stream's console is opened on first
// use. Only streams the server lists are opened, so a request cannot make
// the console dial (or name) anything else.

// streamCookie keeps the stream a browser picked.
const streamCookie = "laser_console_stream"

// maxPickedStreams bounds the streams whose consoles are open at once.
const maxPickedStreams = 64

// streamSource lists a server's streams and opens a transport on one.
type streamSource struct {
	list func(ctx context.Context) ([]string, error)
	dial func(ctx context.Context, stream string) (*iggy.Transport, error)
}

// devStreams is the stream source of laser dev's server at addr.
func devStreams(addr, user, password string) *streamSource {
	return &streamSource{
		list: func(ctx context.Context) ([]string, error) {
			c, err := client.NewIggyClient(client.WithTcp(tcp.WithServerAddress(addr)))
			if err != nil {
				return nil, err
			}
			defer c.Close()
			if _, err := c.LoginUser(user, password); err != nil {
				return nil, err
			}
			streams, err := c.GetStreams()
			if err != nil {
				return nil, err
			}
			names := make([]string, len(streams))
			for i, s := range streams {
				names[i] = s.Name
			}
			slices.Sort(names)
			return names, nil
		},
		dial: func(ctx context.Context, stream string) (*iggy.Transport, error) {
			return iggy.Dial(ctx, "iggy://"+url.UserPassword(user, password).String()+"@"+addr+"/"+url.PathEscape(stream), iggy.Config{})
		},
	}
}

// streamPicker routes each request to the console of the stream it picked.
type streamPicker struct {
	src  *streamSource
	cfg  consoleConfig
	def  *console
	mu   sync.Mutex
	open map[string]picked
}

// picked is an open stream's console and its handler.
type picked struct {
	c *console
	h http.Handler
}

func newStreamPicker(def *console, src *streamSource) *streamPicker {
	def.cfg.streams = src.list
	return &streamPicker{src: src, cfg: def.cfg, def: def, open: map[string]picked{def.cfg.stream: {c: def, h: def.handler()}}}
}

func (p *streamPicker) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if p.cfg.token == "" && !loopbackHost(r.Host) {
		def, _ := p.console(r.Context(), "") // open from the start
		def.h.ServeHTTP(w, r)                // its guard refuses; nothing is opened first
		return
	}
	name := r.URL.Query().Get("stream")
	if name != "" {
		http.SetCookie(w, &http.Cookie{Name: streamCookie, Value: url.QueryEscape(name), Path: "/", HttpOnly: true, SameSite: http.SameSiteStrictMode})
	} else if ck, err := r.Cookie(streamCookie); err == nil {
		name, _ = url.QueryUnescape(ck.Value)
	}
	c, err := p.console(r.Context(), name)
	if err != nil {
		// An unknown stream shows the default one, whose header names the
		// stream shown; the failure is only logged, so nothing about the
		// server is told before the console's guard has run.
		p.cfg.logger.Warn("console: cannot open the stream picked", "stream", name, "err", err)
		c, _ = p.console(r.Context(), "")
	}
	c.h.ServeHTTP(w, r)
}

// console returns the console of stream name (the default for ""), opening
// it when the server lists the stream.
func (p *streamPicker) console(ctx context.Context, name string) (picked, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if name == "" {
		name = p.def.cfg.stream
	}
	if c, ok := p.open[name]; ok {
		return c, nil
	}
	if len(p.open) >= maxPickedStreams {
		return picked{}, fmt.Errorf("%d streams are open already", len(p.open))
	}
	listed, err := p.src.list(ctx)
	if err != nil {
		return picked{}, err
	}
	if !slices.Contains(listed, name) {
		return picked{}, errors.New("the server lists no such stream")
	}
	t, err := p.src.dial(ctx, name)
	if err != nil {
		return picked{}, err
	}
	cfg := p.cfg
	cfg.stream = name
	if base, ok := strings.CutSuffix(cfg.addr, "/"+p.def.cfg.stream); ok {
		cfg.addr = base + "/" + name
	}
	c, err := newConsole(t, cfg)
	if err != nil {
		_ = t.Close()
		return picked{}, err
	}
	pc := picked{c: c, h: c.handler()}
	p.open[name] = pc
	return pc, nil
}

// Close closes the transports the picker opened (not the default's).
func (p *streamPicker) Close() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for name, pc := range p.open {
		if pc.c != p.def {
			_ = pc.c.t.Close()
		}
		delete(p.open, name)
	}
}

// streamNames lists the server's streams for the header's picker, nil
// when this console serves one stream or the server does not answer.
func (c *console) streamNames() []string {
	if c.cfg.streams == nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	names, err := c.cfg.streams(ctx)
	if err != nil {
		c.cfg.logger.Warn("console: cannot list the streams", "err", err)
		return nil
	}
	return names
}
