package iggy

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"strings"
)

// DefaultPort is Iggy's TCP port, used when a connection string names none.
const DefaultPort = "8090"

// ErrConnString reports a connection string that does not parse.
var ErrConnString = errors.New("iggy: invalid connection string")

// connString is a parsed connection string.
type connString struct {
	addr     string // host:port
	stream   string
	username string
	password string
	token    string // personal access token; set instead of username/password
}

// parseConnString reads either form:
//
//	iggy://user:password@host:port/stream      (user and password login)
//	iggy+pat://token@host:port/stream          (personal access token login)
//
// The port defaults to 8090. User, password and token are URL-decoded, so
// reserved characters in them must be percent-encoded.
func parseConnString(s string) (connString, error) {
	u, err := parseURL(s)
	if err != nil {
		return connString{}, fmt.Errorf("%w: %w", ErrConnString, err)
	}
	var cs connString
	switch u.Scheme {
	case "iggy":
		if u.User == nil || u.User.Username() == "" {
			return connString{}, fmt.Errorf("%w: %q names no user; want iggy://user:password@host:port/stream", ErrConnString, redact(u))
		}
		cs.username = u.User.Username()
		cs.password, _ = u.User.Password()
	case "iggy+pat":
		if u.User == nil || u.User.Username() == "" {
			return connString{}, fmt.Errorf("%w: %q names no token; want iggy+pat://token@host:port/stream", ErrConnString, redact(u))
		}
		if _, hasPass := u.User.Password(); hasPass {
			return connString{}, fmt.Errorf("%w: a personal access token has no password part; want iggy+pat://token@host:port/stream", ErrConnString)
		}
		cs.token = u.User.Username()
	default:
		return connString{}, fmt.Errorf("%w: scheme %q, want iggy or iggy+pat", ErrConnString, u.Scheme)
	}
	if u.Host == "" {
		return connString{}, fmt.Errorf("%w: %q names no host", ErrConnString, redact(u))
	}
	host, port := u.Hostname(), u.Port()
	if port == "" {
		port = DefaultPort
	}
	cs.addr = net.JoinHostPort(host, port)
	cs.stream = strings.Trim(u.Path, "/")
	if cs.stream == "" || strings.Contains(cs.stream, "/") || len(cs.stream) > 255 {
		return connString{}, fmt.Errorf("%w: %q must name one stream of 1..255 bytes as its path", ErrConnString, redact(u))
	}
	if u.RawQuery != "" || u.Fragment != "" {
		return connString{}, fmt.Errorf("%w: %q has a query or fragment, which the transport does not read", ErrConnString, redact(u))
	}
	return cs, nil
}

// parseURL parses s, leaving s out of the error: url.Parse quotes its whole
// input, password included.
func parseURL(s string) (*url.URL, error) {
	u, err := url.Parse(s)
	if urlErr, ok := errors.AsType[*url.Error](err); ok {
		return nil, urlErr.Err
	}
	return u, err
}

// redact renders u without its secrets, for error messages.
func redact(u *url.URL) string {
	c := *u
	if c.User != nil {
		c.User = url.User("xxxxx")
	}
	return c.String()
}
