package main

import (
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/url"
	"strconv"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/lasergo/laser/iggy"
	"github.com/lasergo/laser/iggytest"
	"github.com/lasergo/laser/runtime"
)

// devCommand serves the in-process Iggy-protocol test server until interrupted.
func (a *app) devCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "dev",
		Short: "run an in-memory Iggy-protocol server for development",
		Long: `Run an in-memory Iggy-protocol server for development on a loopback address.
One port speaks both of Iggy's framings: 0.8's and VSR (0.9+), which the
reference's SDKs (laser-sdk in Rust, Python, TypeScript) speak; each connection's
first bytes say which. It keeps every message in memory and loses it all on
exit: a test tool, not a production broker.`,
		Args: noArgs,
	}
	addr := cmd.Flags().String("addr", "127.0.0.1:8090", "loopback address to listen on")
	user := cmd.Flags().String("user", "iggy", "root user name")
	password := cmd.Flags().String("password", "iggy", "root password")
	verbose := cmd.Flags().BoolP("verbose", "v", false, "log every connection")
	public := cmd.Flags().Bool("public", false, "allow a non-loopback address (the server has well-known credentials and no persistence)")
	consoleAddr := cmd.Flags().String("console", "127.0.0.1:8088", "loopback address of the web console (empty: none)")
	write := cmd.Flags().Bool("write", false, "allow redriving (capsules unverified: a development server) and answering from the console")
	cmd.RunE = func(cmd *cobra.Command, _ []string) error {
		if *password != "iggy" {
			a.secrets = append(a.secrets, *password)
		}
		if !*public {
			if err := requireLoopback("dev --addr", *addr, "laser dev is a development server with well-known credentials"); err != nil {
				return err
			}
		}
		level := slog.LevelWarn
		if *verbose {
			level = slog.LevelDebug
		}
		logger := slog.New(slog.NewTextHandler(a.stderr, &slog.HandlerOptions{Level: level}))
		srv, err := iggytest.Listen(*addr, iggytest.Config{Username: *user, Password: *password, Logger: logger})
		if err != nil {
			return listenError(*addr, err)
		}
		defer srv.Close()
		shown := "xxxxx"
		if *password == "iggy" {
			shown = *password // the well-known development default
		}
		connect := fmt.Sprintf("iggy://%s:%s@%s/laser", *user, shown, srv.Addr())
		connectVSR := connect + "?protocol=vsr"
		reference := fmt.Sprintf("iggy://%s:%s@%s", *user, shown, srv.Addr())
		if a.json {
			if err := a.printJSON(map[string]string{"addr": srv.Addr(), "connect": connect, "connect_vsr": connectVSR, "connect_reference": reference}); err != nil {
				return err
			}
		} else {
			fmt.Fprintf(a.stdout, `laser dev: an in-memory Iggy-protocol server for development is listening on %s
  It keeps every message in memory and loses it all on exit. It is a test tool, not a production broker.
  It speaks Iggy 0.8's framing and VSR (Iggy 0.9+) on the same port.
  Connect with: LASER_IGGY_ADDR=%s
  Over VSR:     LASER_IGGY_ADDR=%s
  The reference's SDKs (VSR): LASER_CONNECTION_STRING=%s LASER_STREAM=laser
  Stop with Ctrl-C.
`, srv.Addr(), connect, connectVSR, reference)
		}
		if *consoleAddr != "" {
			t, err := iggy.Dial(cmd.Context(), "iggy://"+url.UserPassword(*user, *password).String()+"@"+srv.Addr()+"/laser", iggy.Config{})
			if err != nil {
				return fmt.Errorf("the console cannot reach the dev server: %w", err)
			}
			defer t.Close()
			if err := t.EnsureTopics(cmd.Context(), 1, runtime.BootstrapTopics...); err != nil {
				return fmt.Errorf("the console cannot create the well-known topics: %w", err)
			}
			errs := make(chan error, 1)
			go func() {
				errs <- a.serveConsole(cmd.Context(), t, consoleOptions{listen: *consoleAddr, listenFlag: "dev --console", write: *write, addr: redactAddr(connect), unverified: true, streams: devStreams(srv.Addr(), *user, *password)})
			}()
			select {
			case err := <-errs:
				return err
			case <-cmd.Context().Done():
			}
			<-errs
		} else {
			<-cmd.Context().Done()
		}
		if !a.json {
			fmt.Fprintln(a.stdout, "laser dev: stopped")
		}
		return nil
	}
	return cmd
}

// listenError explains a port that cannot be listened on; a busy one gets
// the flag that picks another.
func listenError(addr string, err error) error {
	if errors.Is(err, syscall.EADDRINUSE) {
		next := "127.0.0.1:8091"
		if host, port, splitErr := net.SplitHostPort(addr); splitErr == nil {
			if n, convErr := strconv.Atoi(port); convErr == nil && n > 0 && n < 65535 {
				next = net.JoinHostPort(host, strconv.Itoa(n+1))
			}
		}
		return fmt.Errorf("cannot listen on %s: the port is in use (another laser dev or Iggy server?); stop it, or pick another port with --addr %s", addr, next)
	}
	return fmt.Errorf("cannot listen on %s: %w", addr, err)
}

// requireLoopback refuses an address that is reachable from other machines:
// flag names the command and flag that gave addr, why what it serves must
// stay local.
func requireLoopback(flag, addr, why string) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return usagef("%s %q: %v", flag, addr, err)
	}
	if host == "localhost" {
		return nil
	}
	if ip := net.ParseIP(host); ip != nil && ip.IsLoopback() {
		return nil
	}
	return usagef("%s %q is not a loopback address; %s (pass --public to listen there anyway)", flag, addr, why)
}
