package iggy

import (
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"net/url"
	"strconv"
	"strings"

	iggcon "github.com/apache/iggy/foreign/go/contracts"
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

	protocol protocol
	// tls asks for TLS (VSR only); tlsCA is a PEM file of the CAs to trust
	// instead of the system's, tlsServerName the name the server's
	// certificate must carry instead of the host.
	tls           bool
	tlsCA         string
	tlsServerName string
}

// protocol is the framing a connection speaks.
type protocol uint8

const (
	// protocol08 is Iggy 0.8's framing, spoken through the official SDK.
	protocol08 protocol = iota
	// protocolVSR is Iggy 0.9+'s VSR framing, spoken by vsrClient.
	protocolVSR
)

func (p protocol) String() string {
	if p == protocolVSR {
		return "vsr"
	}
	return "0.8"
}

// parseConnString reads either form:
//
//	iggy://user:password@host:port/stream      (user and password login)
//	iggy+pat://token@host:port/stream          (personal access token login)
//
// followed by optional query parameters, each at most once:
//
//	protocol=0.8|vsr          the framing: Iggy 0.8's (the default) or VSR (Iggy 0.9+)
//	tls=true|false            TLS (VSR only); default false
//	tls_ca_file=/path/ca.pem  trust these CAs instead of the system's (implies tls)
//	tls_domain=name           the name the certificate must carry, default the host (implies tls)
//
// The TLS parameters carry the names the Iggy Rust client (and so the
// reference's SDKs) reads, so one connection string serves both.
// The port defaults to 8090. User, password and token are URL-decoded, so
// reserved characters in them must be percent-encoded. Any other query
// parameter, or a fragment, is an error.
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
	// The login frame gives each a one-byte length.
	if len(cs.username) > 255 || len(cs.password) > 255 || len(cs.token) > 255 {
		return connString{}, fmt.Errorf("%w: %q: user, password and token are at most 255 bytes each", ErrConnString, redact(u))
	}
	if u.Host == "" {
		return connString{}, fmt.Errorf("%w: %q names no host", ErrConnString, redact(u))
	}
	host, port := u.Hostname(), u.Port()
	if port == "" {
		port = DefaultPort
	}
	if n, err := strconv.ParseUint(port, 10, 16); err != nil || n == 0 {
		return connString{}, fmt.Errorf("%w: %q: port %s is not a TCP port (1..65535)", ErrConnString, redact(u), port)
	}
	cs.addr = net.JoinHostPort(host, port)
	cs.stream = strings.Trim(u.Path, "/")
	if cs.stream == "" || strings.Contains(cs.stream, "/") || len(cs.stream) > 255 {
		return connString{}, fmt.Errorf("%w: %q must name one stream of 1..255 bytes as its path", ErrConnString, redact(u))
	}
	if u.Fragment != "" {
		return connString{}, fmt.Errorf("%w: %q has a fragment, which the transport does not read", ErrConnString, redact(u))
	}
	if err := cs.parseQuery(u.RawQuery); err != nil {
		return connString{}, fmt.Errorf("%w: %q: %w", ErrConnString, redact(u), err)
	}
	return cs, nil
}

// parseQuery reads the connection string's query parameters into cs.
func (cs *connString) parseQuery(raw string) error {
	q, err := url.ParseQuery(raw)
	if err != nil {
		return err
	}
	tlsOff := false // tls=false given
	for key, vals := range q {
		if len(vals) != 1 {
			return fmt.Errorf("query parameter %s given %d times", key, len(vals))
		}
		v := vals[0]
		switch key {
		case "protocol":
			switch v {
			case "0.8":
				cs.protocol = protocol08
			case "vsr":
				cs.protocol = protocolVSR
			default:
				return fmt.Errorf("protocol=%s, want 0.8 or vsr", v)
			}
		case "tls":
			b, err := strconv.ParseBool(v)
			if err != nil {
				return fmt.Errorf("tls=%s, want true or false", v)
			}
			tlsOff = !b
		case "tls_ca_file":
			if v == "" {
				return errors.New("tls_ca_file is empty, want the path of a PEM file")
			}
			cs.tlsCA = v
		case "tls_domain":
			if v == "" {
				return errors.New("tls_domain is empty")
			}
			cs.tlsServerName = v
		default:
			return fmt.Errorf("unknown query parameter %q; the transport reads protocol, tls, tls_ca_file and tls_domain", key)
		}
	}
	implied := cs.tlsCA != "" || cs.tlsServerName != ""
	if tlsOff && implied {
		return errors.New("tls=false with tls_ca_file or tls_domain")
	}
	cs.tls = !tlsOff && (implied || q.Get("tls") != "")
	if cs.tls && cs.protocol != protocolVSR {
		return errors.New("TLS needs protocol=vsr: the 0.8 transport (the Iggy SDK v0.8.0) connects in plaintext only")
	}
	return nil
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

// Iggy's login command codes.
const (
	cmdLoginUser      = 38
	cmdLoginWithToken = 44
)

// loginFrame is the request that logs cs in, as the SDK v0.8.0 writes it:
// u8-prefixed user and password, then the u32-prefixed client version and
// an empty context; or the u8-prefixed personal access token.
func (cs connString) loginFrame() []byte {
	var body []byte
	code := uint32(cmdLoginUser)
	if cs.token != "" {
		code = cmdLoginWithToken
		body = append(append(body, byte(len(cs.token))), cs.token...)
	} else {
		body = append(append(body, byte(len(cs.username))), cs.username...)
		body = append(append(body, byte(len(cs.password))), cs.password...)
		body = binary.LittleEndian.AppendUint32(body, uint32(len(iggcon.Version)))
		body = append(body, iggcon.Version...)
		body = binary.LittleEndian.AppendUint32(body, 0)
	}
	frame := binary.LittleEndian.AppendUint32(nil, uint32(len(body)+4))
	frame = binary.LittleEndian.AppendUint32(frame, code)
	return append(frame, body...)
}
