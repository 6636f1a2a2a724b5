package iggy

import (
	"context"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"os"
	"slices"
	"strings"

	"github.com/lasergo/laser/iggy/internal/vsr"
)

// maxRedirects bounds how many times one connect follows the cluster to
// its leader.
const maxRedirects = 3

// tlsConfig builds the TLS configuration of cs and cfg, or nil for
// plaintext: Config.TLS when set, else one trusting the system's roots;
// tls_ca_file replaces the roots, tls_domain sets the name. A CA file that
// cannot be read or holds no certificate is an error.
func tlsConfig(cs connString, base *tls.Config) (*tls.Config, error) {
	if base == nil && !cs.tls {
		return nil, nil
	}
	if cs.protocol != protocolVSR {
		return nil, fmt.Errorf("%w: Config.TLS needs protocol=vsr: the 0.8 transport (the Iggy SDK v0.8.0) connects in plaintext only", ErrConnString)
	}
	c := &tls.Config{MinVersion: tls.VersionTLS12}
	if base != nil {
		c = base.Clone()
	}
	if cs.tlsServerName != "" {
		c.ServerName = cs.tlsServerName
	}
	if cs.tlsCA != "" {
		pem, err := os.ReadFile(cs.tlsCA)
		if err != nil {
			return nil, fmt.Errorf("%w: tls_ca_file: %w", ErrConnString, err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("%w: tls_ca_file %s holds no PEM certificate", ErrConnString, cs.tlsCA)
		}
		c.RootCAs = pool
	}
	return c, nil
}

// connectVSR builds a logged-in VSR link, on the cluster's leader: after
// the login it asks for the cluster's nodes and, when another node leads,
// connects there instead, at most maxRedirects times and never back to an
// address already tried.
func (t *Transport) connectVSR(ctx context.Context, op string) (*link, error) {
	addr := t.cs.addr
	tried := []string{addr}
	for {
		l, leader, err := t.linkVSR(ctx, op, addr)
		if err != nil {
			return nil, err
		}
		if leader == "" {
			go t.heartbeat(l)
			return l, nil
		}
		l.close()
		if slices.Contains(tried, leader) {
			return nil, wrap(op, classLost, fmt.Errorf("connecting to Iggy at %s: a redirect loop: %s leads to %s, tried already", t.cs.addr, addr, leader))
		}
		if len(tried) > maxRedirects {
			return nil, wrap(op, classLost, fmt.Errorf("connecting to Iggy at %s: still not on the leader after %d redirects (%s)", t.cs.addr, maxRedirects, strings.Join(append(tried, leader), " -> ")))
		}
		t.cfg.logger.Info("iggy: following the cluster to its leader", "from", addr, "leader", leader)
		tried = append(tried, leader)
		addr = leader
	}
}

// linkVSR dials addr (with TLS when configured), logs in and returns the
// link, and the leader's address when another node leads the cluster.
func (t *Transport) linkVSR(ctx context.Context, op, addr string) (*link, string, error) {
	d := net.Dialer{Timeout: t.cfg.dialTimeout}
	conn, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return nil, "", wrap(op, classLost, fmt.Errorf("cannot reach Iggy at %s: %w", addr, err))
	}
	if tc, ok := conn.(*net.TCPConn); ok {
		_ = tc.SetNoDelay(true)
	}
	if t.tls != nil {
		c := t.tls.Clone()
		if c.ServerName == "" {
			// The certificate names the host the connection string dialled;
			// cluster metadata names nodes by IP, so a redirect keeps that name.
			c.ServerName, _, _ = net.SplitHostPort(t.cs.addr)
		}
		tc := tls.Client(conn, c)
		hctx, cancel := context.WithTimeout(ctx, t.cfg.dialTimeout)
		err := tc.HandshakeContext(hctx)
		cancel()
		if err != nil {
			_ = conn.Close()
			// A certificate that does not verify fails the same way on the
			// next attempt.
			class := classLost
			if _, ok := errors.AsType[*tls.CertificateVerificationError](err); ok {
				class = classPermanent
			}
			return nil, "", wrap(op, class, fmt.Errorf("TLS handshake with Iggy at %s (server name %q): %w", addr, c.ServerName, err))
		}
		conn = tc
	}
	var id [16]byte
	for id == [16]byte{} {
		_, _ = rand.Read(id[:]) // crypto/rand.Read never fails on supported platforms
	}
	c := newVSRClient(conn, addr, t.cfg.callTimeout, vsr.ClientID{Lo: binary.LittleEndian.Uint64(id[:8]), Hi: binary.LittleEndian.Uint64(id[8:])})
	l := &link{client: c, vsr: c, closed: make(chan struct{})}
	var leader string
	class, _, err := t.bounded(ctx, l, func(iggyClient) error {
		var err error
		if t.cs.token != "" {
			_, err = c.LoginWithPersonalAccessToken(t.cs.token)
		} else {
			_, err = c.LoginUser(t.cs.username, t.cs.password)
		}
		if err != nil {
			return err
		}
		leader, err = t.leaderOf(c, addr, conn.RemoteAddr().String())
		return err
	})
	if err != nil {
		return nil, "", loginFailed(op, addr, l, class, err)
	}
	t.cfg.logger.Debug("iggy: logged in", "addr", addr, "protocol", "vsr", "tls", t.tls != nil, "token", t.cs.token != "")
	return l, leader, nil
}

// leaderOf asks the server dialled as addr, whose socket's remote end is
// remote, for the cluster's nodes and returns the leader's address when it
// is another node's; "" when the leader is this node (its address, as
// cluster metadata names it, equals addr or remote: metadata names nodes
// by IP, a connection string often by host name), the cluster is one node,
// no healthy node leads, or the server refuses to say (the connection then
// stays where it is, as the Iggy SDK's does). A reply that breaks the
// protocol is an error.
func (t *Transport) leaderOf(c *vsrClient, addr, remote string) (string, error) {
	nodes, err := c.clusterNodes()
	if _, refused := errors.AsType[*serverError](err); refused {
		t.cfg.logger.Debug("iggy: no cluster metadata; staying on this node", "addr", addr, "err", err)
		return "", nil
	}
	if err != nil || len(nodes) <= 1 {
		return "", err
	}
	for _, n := range nodes {
		if n.Leader && n.Healthy {
			if a := n.Addr(); a == addr || a == remote {
				return "", nil
			}
			return n.Addr(), nil
		}
	}
	return "", nil
}
