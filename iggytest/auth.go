package iggytest

import (
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"math"
)

// rootUserID is the id of the server's only user, as on a fresh Iggy server.
const rootUserID uint32 = 0

// token is a personal access token of the root user.
type token struct {
	name   string
	expiry uint64 // as the client sent it, in µs; 0 and MaxUint64 are "never"
	// expiresAt is when a login with the token stops working (server clock,
	// Unix µs); 0 is never.
	expiresAt uint64
}

// ping (code 1) needs no login.
func (s *Server) ping(p []byte) ([]byte, error) {
	r := reader{b: p}
	return nil, r.done()
}

// login (code 38): u8 user, u8 password, then u32-prefixed version and
// context. Answers the user id.
func (s *Server) login(c *conn, p []byte) ([]byte, error) {
	r := reader{b: p}
	user := r.name()
	pass := r.name()
	if len(r.b) > 0 {
		r.take(int(r.u32())) // client version
		r.take(int(r.u32())) // client context
	}
	if err := r.done(); err != nil {
		return nil, err
	}
	// Both compared in full, in constant time, so the answer's timing says
	// nothing of how much of either was right.
	userOK := subtle.ConstantTimeCompare([]byte(user), []byte(s.cfg.username))
	passOK := subtle.ConstantTimeCompare([]byte(pass), []byte(s.cfg.password))
	if userOK&passOK != 1 {
		return nil, fail(StatusInvalidCredentials, "invalid credentials")
	}
	c.authed = true
	return putU32(nil, rootUserID), nil
}

// loginWithToken (code 44): u8-prefixed token. An unknown token is
// ResourceNotFound (20), as in Iggy 0.8.
func (s *Server) loginWithToken(c *conn, p []byte) ([]byte, error) {
	r := reader{b: p}
	tok := r.name()
	if err := r.done(); err != nil {
		return nil, err
	}
	if err := s.checkToken(tok); err != nil {
		return nil, err
	}
	c.authed = true
	return putU32(nil, rootUserID), nil
}

// checkToken accepts a known, unexpired personal access token.
func (s *Server) checkToken(tok string) error {
	t, ok := s.tokens[tok]
	if !ok || tok == "" {
		return fail(StatusResourceNotFound, "unknown personal access token")
	}
	if t.expiresAt != 0 && s.now() >= t.expiresAt {
		return fail(StatusTokenExpired, "personal access token expired")
	}
	return nil
}

// logout (code 39) ends the login; the connection and its group
// memberships stay.
func (s *Server) logout(c *conn, p []byte) ([]byte, error) {
	r := reader{b: p}
	if err := r.done(); err != nil {
		return nil, err
	}
	c.authed = false
	return nil, nil
}

// createToken (code 42): u8 name, u64 expiry. Answers the u8-prefixed token.
func (s *Server) createToken(p []byte) ([]byte, error) {
	r := reader{b: p}
	name := r.name()
	expiry := r.u64()
	if err := r.done(); err != nil {
		return nil, err
	}
	if name == "" {
		return nil, fail(StatusInvalidTokenName, "empty token name")
	}
	for _, t := range s.tokens {
		if t.name == name {
			return nil, fail(StatusTokenAlreadyExists, "token name taken")
		}
	}
	var raw [32]byte
	_, _ = rand.Read(raw[:]) // crypto/rand.Read never fails on supported platforms
	tok := base64.RawURLEncoding.EncodeToString(raw[:])
	t := &token{name: name, expiry: expiry}
	// An expiry past the end of the clock's range saturates to never
	// rather than wrapping to a time long gone.
	if now := s.now(); expiry != 0 && expiry != math.MaxUint64 && expiry <= math.MaxUint64-now {
		t.expiresAt = now + expiry
	}
	s.tokens[tok] = t
	return putName(nil, tok), nil
}

// getTokens (code 41): per token u8 name, u64 expiry.
func (s *Server) getTokens(p []byte) ([]byte, error) {
	r := reader{b: p}
	if err := r.done(); err != nil {
		return nil, err
	}
	var out []byte
	for _, t := range s.tokens {
		out = putName(out, t.name)
		out = putU64(out, t.expiry)
	}
	return out, nil
}

// deleteToken (code 43): u8 name.
func (s *Server) deleteToken(p []byte) ([]byte, error) {
	r := reader{b: p}
	name := r.name()
	if err := r.done(); err != nil {
		return nil, err
	}
	for k, t := range s.tokens {
		if t.name == name {
			delete(s.tokens, k)
			return nil, nil
		}
	}
	return nil, fail(StatusResourceNotFound, "unknown token name")
}
