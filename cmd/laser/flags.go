package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"strings"
	"time"

	ierror "github.com/apache/iggy/foreign/go/errors"
	"github.com/spf13/cobra"

	"github.com/lasergo/laser/iggy"
)

// serverFlags are the flags of every command that talks to a server.
type serverFlags struct {
	addr    addrValue
	timeout time.Duration
}

// addrValue is --addr: a connection string that prints without its password
// or token, so --help (whose default comes from LASER_IGGY_ADDR) and error
// messages never show them.
type addrValue struct {
	s string
	a *app
}

func (v *addrValue) String() string { return redactAddr(v.s) }
func (v *addrValue) Type() string   { return "string" }
func (v *addrValue) Set(s string) error {
	v.s = s
	v.a.secrets = append(v.a.secrets, addrSecrets(s)...)
	return nil
}

func (a *app) serverFlags(cmd *cobra.Command) *serverFlags {
	env := os.Getenv("LASER_IGGY_ADDR")
	a.secrets = append(a.secrets, addrSecrets(env)...)
	sf := &serverFlags{addr: addrValue{s: env, a: a}}
	cmd.Flags().Var(&sf.addr, "addr", "server connection string, iggy://user:password@host:port/stream (default $LASER_IGGY_ADDR)")
	cmd.Flags().DurationVar(&sf.timeout, "timeout", 5*time.Second, "bound on connecting and on each server call")
	return sf
}

// addrSecrets returns the secrets of a connection string, longest first:
// the password (or token) of a well-formed one; for one without "://",
// whose user part nothing can tell apart, everything before the last "@",
// and its tail after the last "/" and after the last ":" (so a parser's
// rendering of the same text shows none of it).
func addrSecrets(s string) []string {
	scheme, rest, ok := strings.Cut(s, "://")
	if !ok {
		at := strings.LastIndexByte(s, '@')
		if at <= 0 {
			return nil
		}
		secret := s[:at]
		out := []string{secret}
		if i := strings.LastIndexByte(secret, '/'); i >= 0 && i+1 < len(secret) {
			out = append(out, secret[i+1:])
		}
		if i := strings.LastIndexByte(secret, ':'); i >= 0 && i+1 < len(secret) {
			out = append(out, secret[i+1:])
		}
		return out
	}
	at := strings.LastIndexByte(rest, '@')
	if at < 0 {
		return nil
	}
	userinfo := rest[:at]
	if _, pass, ok := strings.Cut(userinfo, ":"); ok && pass != "" {
		return []string{pass}
	}
	if strings.HasPrefix(scheme, "iggy+pat") && userinfo != "" {
		return []string{userinfo} // the token
	}
	return nil
}

// redactAddr returns a connection string with its password or token
// replaced by xxxxx, or, when it does not parse as a URL with "://" (so
// which part is secret is unknown), only its length.
func redactAddr(s string) string {
	if s == "" {
		return s
	}
	scheme, rest, ok := strings.Cut(s, "://")
	if _, err := url.Parse(s); !ok || err != nil {
		return fmt.Sprintf("<unparsable address, %d chars>", len(s))
	}
	at := strings.LastIndexByte(rest, '@')
	if at < 0 {
		return s
	}
	userinfo := rest[:at]
	if user, _, ok := strings.Cut(userinfo, ":"); ok {
		userinfo = user + ":xxxxx"
	} else if strings.HasPrefix(scheme, "iggy+pat") {
		userinfo = "xxxxx"
	}
	return scheme + "://" + userinfo + rest[at:]
}

// dial connects to the server the flags name. Its errors are in our words:
// the SDK's texts name the wrong ids or say only "error".
func (s *serverFlags) dial(ctx context.Context) (*iggy.Transport, error) {
	if s.addr.s == "" {
		return nil, usagef("no server named: pass --addr iggy://user:password@host:port/stream or set LASER_IGGY_ADDR")
	}
	t, err := iggy.Dial(ctx, s.addr.s, iggy.Config{DialTimeout: s.timeout, CallTimeout: s.timeout})
	if err != nil {
		return nil, dialError(s.addr.String(), err)
	}
	return t, nil
}

// dialError explains why a server could not be used.
func dialError(addr string, err error) error {
	var netErr net.Error
	var opErr *net.OpError
	switch {
	case errors.Is(err, iggy.ErrConnString):
		reason := strings.TrimPrefix(strings.TrimPrefix(err.Error(), iggy.ErrConnString.Error()), ": ")
		return usagef("--addr %s is not a connection string (%s): want iggy://user:password@host:port/stream or iggy+pat://token@host:port/stream", addr, reason)
	case errors.As(err, &opErr) && opErr.Op == "dial":
		return &connectError{err: fmt.Errorf("cannot reach %s: nothing accepts connections there (is the server running? laser dev starts one)", addr)}
	case errors.As(err, &netErr) && netErr.Timeout(), errors.Is(err, context.DeadlineExceeded):
		return &connectError{err: fmt.Errorf("cannot reach %s: no answer within --timeout", addr)}
	case refusedLogin(err):
		return &connectError{err: fmt.Errorf("%s refused the credentials: check the user and password (or token)", addr)}
	}
	return &connectError{err: fmt.Errorf("cannot use %s: it did not answer as an Iggy server in the framing the address asks for (Iggy 0.8 by default, 0.9+ with ?protocol=vsr) (%s)", addr, sdkText(err))}
}

// refusedLogin reports an SDK error saying the login was refused.
func refusedLogin(err error) bool {
	var ie ierror.IggyError
	if !errors.As(err, &ie) {
		return false
	}
	switch ie.Code() {
	case ierror.UnauthenticatedCode, ierror.UnauthorizedCode, ierror.InvalidCredentialsCode, ierror.InvalidPersonalAccessTokenCode, ierror.PersonalAccessTokenExpiredCode:
		return true
	}
	return false
}

// sdkText is an SDK error's text when it says something, else a hint.
func sdkText(err error) string {
	if msg := strings.TrimSpace(err.Error()); msg != "" && msg != "error" && !strings.HasSuffix(msg, ": error") {
		return msg
	}
	return "an unexplained protocol error; is this the server's TCP port?"
}
