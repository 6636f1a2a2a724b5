package redistest

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"
)

// slots is how many hash slots a Redis Cluster has.
const slots = 16384

// Cluster is a Redis Cluster of masters without replicas, owned by one
// test: each node a redis-server on free loopback ports (its client port
// and its cluster bus port), the slots split evenly between them.
type Cluster struct {
	Nodes []*Server
}

// StartCluster runs a cluster of n masters for t, waits until every node
// reports it healthy, and stops it when t ends. It skips t when
// redis-server is not installed (fails it when CI is set).
func StartCluster(t testing.TB, n int) *Cluster {
	t.Helper()
	if n < 1 {
		t.Fatalf("a cluster of %d nodes", n)
	}
	path := binary(t)
	c := &Cluster{}
	buses := make([]string, n)
	for i := range n {
		s := &Server{t: t, path: path, dir: t.TempDir(), port: freePort(t)}
		// The bus port is given, not the client port + 10000, which may be
		// taken or past 65535.
		buses[i] = strconv.Itoa(freePort(t))
		s.args = []string{"--cluster-enabled", "yes", "--cluster-port", buses[i],
			"--cluster-config-file", "nodes.conf", "--cluster-node-timeout", "5000"}
		s.start()
		t.Cleanup(s.Stop)
		c.Nodes = append(c.Nodes, s)
		lo, hi := i*slots/n, (i+1)*slots/n-1
		if _, err := command(s.Addr(), "CLUSTER", "ADDSLOTSRANGE", strconv.Itoa(lo), strconv.Itoa(hi)); err != nil {
			t.Fatalf("cluster node %s: %v", s.Addr(), err)
		}
	}
	for i, s := range c.Nodes[1:] {
		if _, err := command(c.Nodes[0].Addr(), "CLUSTER", "MEET", "127.0.0.1", strconv.Itoa(s.port), buses[i+1]); err != nil {
			t.Fatalf("cluster meet %s: %v", s.Addr(), err)
		}
	}
	deadline := time.Now().Add(30 * time.Second)
	for _, s := range c.Nodes {
		for {
			info, err := command(s.Addr(), "CLUSTER", "INFO")
			if err == nil && strings.Contains(info, "cluster_state:ok") && strings.Contains(info, "cluster_known_nodes:"+strconv.Itoa(n)+"\r\n") {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("cluster node %s not ready within 30 s: %q, %v", s.Addr(), info, err)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	return c
}

// Addrs returns host:port of every node.
func (c *Cluster) Addrs() []string {
	addrs := make([]string, len(c.Nodes))
	for i, s := range c.Nodes {
		addrs[i] = s.Addr()
	}
	return addrs
}

// command sends one command in RESP and returns its reply when it is a
// status or a bulk string; an error reply is an error.
func command(addr string, args ...string) (string, error) {
	c, err := net.DialTimeout("tcp", addr, time.Second)
	if err != nil {
		return "", err
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(5 * time.Second))
	var req strings.Builder
	fmt.Fprintf(&req, "*%d\r\n", len(args))
	for _, a := range args {
		fmt.Fprintf(&req, "$%d\r\n%s\r\n", len(a), a)
	}
	if _, err := io.WriteString(c, req.String()); err != nil {
		return "", err
	}
	r := bufio.NewReader(c)
	line, err := r.ReadString('\n')
	if err != nil {
		return "", err
	}
	line = strings.TrimRight(line, "\r\n")
	switch {
	case strings.HasPrefix(line, "+"):
		return line[1:], nil
	case strings.HasPrefix(line, "-"):
		return "", fmt.Errorf("%s answered %q", strings.Join(args, " "), line[1:])
	case strings.HasPrefix(line, "$"):
		n, err := strconv.Atoi(line[1:])
		if err != nil || n < 0 {
			return "", fmt.Errorf("%s answered %q", strings.Join(args, " "), line)
		}
		body := make([]byte, n+2)
		if _, err := io.ReadFull(r, body); err != nil {
			return "", err
		}
		return string(body[:n]), nil
	default:
		return "", fmt.Errorf("%s answered %q", strings.Join(args, " "), line)
	}
}
