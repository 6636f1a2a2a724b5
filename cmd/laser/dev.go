package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"

	"github.com/lasergo/laser/iggytest"
)

// runDev serves the in-process Iggy-protocol test server until interrupted.
func runDev(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("dev", "laser dev [flags]", stdout)
	addr := fs.String("addr", "127.0.0.1:8090", "loopback address to listen on")
	user := fs.String("user", "iggy", "root user name")
	password := fs.String("password", "iggy", "root password")
	verbose := fs.Bool("v", false, "log every connection")
	public := fs.Bool("public", false, "allow a non-loopback address (the server has well-known credentials and no persistence)")
	if err := parse(fs, args); err != nil {
		return err
	}
	if fs.NArg() != 0 {
		return usagef("dev takes no arguments (see --help)")
	}
	if !*public {
		if err := requireLoopback(*addr); err != nil {
			return err
		}
	}
	level := slog.LevelWarn
	if *verbose {
		level = slog.LevelDebug
	}
	logger := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: level}))
	srv, err := iggytest.Listen(*addr, iggytest.WithCredentials(*user, *password), iggytest.WithLogger(logger))
	if err != nil {
		return fmt.Errorf("listen on %s: %w", *addr, err)
	}
	defer srv.Close()
	shown := "<password>"
	if *password == "iggy" {
		shown = *password // the well-known development default
	}
	fmt.Fprintf(stdout, `laser dev: an in-memory Iggy-protocol server for development is listening on %s
  It keeps every message in memory and loses it all on exit. It is a test tool, not a production broker.
  Connect with: LASER_IGGY_ADDR=iggy://%s:%s@%s/laser
  Stop with Ctrl-C.
`, srv.Addr(), *user, shown, srv.Addr())
	<-ctx.Done()
	fmt.Fprintln(stdout, "laser dev: stopped")
	return nil
}

// requireLoopback refuses an address that is reachable from other machines:
// a development server with default credentials belongs on loopback.
func requireLoopback(addr string) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return usagef("dev --addr %q: %v", addr, err)
	}
	if host == "localhost" {
		return nil
	}
	if ip := net.ParseIP(host); ip != nil && ip.IsLoopback() {
		return nil
	}
	return usagef("dev --addr %q is not a loopback address; laser dev is a development server with well-known credentials (pass --public to listen there anyway)", addr)
}
