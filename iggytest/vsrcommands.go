package iggytest

import (
	"crypto/subtle"
	"net"
	"strconv"
)

// serverProtocolVersion is the protocol version a register answers with:
// 0.11.0 packed as Iggy packs it (10 bits per component), what the clients
// of Iggy 0.9 speak.
const serverProtocolVersion = 11 << 10

// serverVersion is the server version a register answers with.
const serverVersion = "iggytest-0.9"

// routeVSR picks the handler of a command that arrived in the VSR framing:
// what only VSR has (register, sessions, sync, the ack level of offset
// calls) is answered here, the rest by route, which tells the handlers
// whose layout Iggy 0.9 changed the framing.
func (s *Server) routeVSR(c *conn, code uint32, p []byte) ([]byte, error) {
	if c.vsrRequest.operation == opNonReplicated {
		// A change travels as its replicated operation, and a login as the
		// register, which opens the session every later request names; the
		// 0.8 logins would authenticate a connection without one.
		if code == CmdLogin || code == CmdLoginWithToken || replicatedCode(code) {
			return nil, fail(StatusInvalidCommand, "command "+strconv.FormatUint(uint64(code), 10)+" is not a non-replicated request over VSR")
		}
	} else if code == CmdLoginRegister {
		return s.loginRegister(c, p)
	}
	if !c.authed && code != CmdPing {
		return nil, fail(StatusUnauthenticated, "register first")
	}
	switch code {
	case CmdLogout:
		c.session = 0
		return s.logout(c, p)
	case CmdClusterMetadata:
		return s.clusterMetadata(p)
	case CmdSyncConsumerGroup:
		return s.syncGroup(c, p)
	case CmdStoreOffset, CmdDeleteOffset:
		// 0.9 appends a u8 ack level: 0 no ack, 1 quorum; one replica
		// here, so both mean the same.
		if len(p) == 0 || p[len(p)-1] > 1 {
			return nil, errMalformed
		}
		if code == CmdStoreOffset {
			return s.storeOffset(c, p[:len(p)-1])
		}
		return s.deleteOffset(c, p[:len(p)-1])
	case cmdCreateUser, cmdDeleteUser, cmdUpdateUser, cmdUpdatePermissions, cmdChangePassword,
		cmdPurgeStream, cmdPurgeTopic, cmdDeleteSegments:
		return nil, fail(StatusFeatureUnavailable, "command not supported by the test server")
	}
	return s.route(c, code, p, framingVSR)
}

// replicatedCode reports whether code is the command of a replicated
// operation or of the register.
func replicatedCode(code uint32) bool {
	if code == CmdLoginRegister || code == CmdLoginRegisterWithToken {
		return true
	}
	for _, c := range opCodes {
		if c == code {
			return true
		}
	}
	return false
}

// loginRegister (VSR register) logs in and opens the connection's session:
// u32 protocol version, u8 SDK name, u8 SDK version, then either u8 user,
// u8 password or u8 personal access token, then a u32-prefixed client
// context. It answers u32 user id, u64 session, u32 server protocol
// version, u8 server version. A refused login is an eviction (invalid
// credentials, invalid token, malformed login), as on Iggy 0.9. The server
// accepts any protocol version.
func (s *Server) loginRegister(c *conn, p []byte) ([]byte, error) {
	r := reader{b: p}
	r.u32() // protocol version
	sdkName, sdkVersion := r.wireName(), r.wireName()
	if r.bad || sdkName == "" || sdkVersion == "" {
		return nil, c.evict(evictMalformedLogin, "the login has no client version prefix")
	}
	tail := r.b
	rejected := false
	if user, pass, ok := parsePasswordLogin(tail); ok {
		userOK := subtle.ConstantTimeCompare([]byte(user), []byte(s.cfg.username))
		passOK := subtle.ConstantTimeCompare([]byte(pass), []byte(s.cfg.password))
		if userOK&passOK == 1 {
			return s.register(c), nil
		}
		rejected = true
	}
	if tok, ok := parseTokenLogin(tail); ok {
		if err := s.checkToken(tok); err != nil {
			if rejected {
				return nil, c.evict(evictInvalidCredentials, "invalid credentials")
			}
			return nil, c.evict(evictInvalidToken, err.Error())
		}
		return s.register(c), nil
	}
	if rejected {
		return nil, c.evict(evictInvalidCredentials, "invalid credentials")
	}
	return nil, c.evict(evictMalformedLogin, "the login is neither a password nor a token login")
}

// register logs c in with a new session and returns the register answer.
func (s *Server) register(c *conn) []byte {
	s.nextSession++
	c.session = s.nextSession
	c.authed = true
	out := putU32(nil, rootUserID)
	out = putU64(out, c.session)
	out = putU32(out, serverProtocolVersion)
	return putName(out, serverVersion)
}

// evict makes the connection answer its request with an eviction for
// reason and close; the returned error is the handler's result.
func (c *conn) evict(reason uint8, detail string) error {
	c.vsrEvict = &errFrame{reason: "register refused: " + detail, evict: reason}
	return fail(StatusInvalidCredentials, detail)
}

// parsePasswordLogin reads u8 user (1..255 bytes), u8 password, u32-prefixed
// context, exactly.
func parsePasswordLogin(b []byte) (user, pass string, ok bool) {
	r := reader{b: b}
	user = r.wireName()
	pass = r.name()
	r.take(int(r.u32()))
	return user, pass, r.done() == nil && user != ""
}

// parseTokenLogin reads u8 token, u32-prefixed context, exactly.
func parseTokenLogin(b []byte) (string, bool) {
	r := reader{b: b}
	tok := r.name()
	r.take(int(r.u32()))
	return tok, r.done() == nil
}

// syncGroup (code 606, VSR only): stream, topic, group. Answers the group's
// u64 generation, then u32 count and the partitions this member owns.
func (s *Server) syncGroup(c *conn, p []byte) ([]byte, error) {
	_, g, err := s.groupRequest(p)
	if err != nil {
		return nil, err
	}
	if _, err := c.membershipLocked(g); err != nil {
		return nil, err
	}
	owned, _ := g.Assigned(c.member())
	out := putU64(nil, g.Generation())
	out = putU32(out, uint32(len(owned)))
	for _, part := range owned {
		out = putU32(out, part)
	}
	return out, nil
}

// clusterMetadata (code 12) in the VSR framing: one node, this server, the
// leader. Name and address strings are u32-prefixed; then u16 TCP, QUIC,
// HTTP and WebSocket ports, u8 role (0 leader), u8 status (0 healthy).
func (s *Server) clusterMetadata(p []byte) ([]byte, error) {
	r := reader{b: p}
	if err := r.done(); err != nil {
		return nil, err
	}
	host, port, err := net.SplitHostPort(s.addr)
	if err != nil {
		return nil, fail(StatusError, "the server address does not parse")
	}
	tcp, err := strconv.ParseUint(port, 10, 16)
	if err != nil {
		return nil, fail(StatusError, "the server port does not parse")
	}
	out := putString32(nil, "iggytest")
	out = putU32(out, 1)
	out = putString32(out, "iggytest-0")
	out = putString32(out, host)
	out = append(out, byte(tcp), byte(tcp>>8), 0, 0, 0, 0, 0, 0)
	return append(out, 0, 0), nil
}

func putString32(b []byte, s string) []byte {
	b = putU32(b, uint32(len(s)))
	return append(b, s...)
}
