package vsr

import (
	"encoding/binary"
	"fmt"
	"net"
	"strconv"
)

// Node is one node of a cluster, as cluster metadata describes it.
type Node struct {
	Name    string
	IP      string
	TCPPort uint16
	Leader  bool
	Healthy bool
}

// Addr is the node's TCP address.
func (n Node) Addr() string { return net.JoinHostPort(n.IP, strconv.Itoa(int(n.TCPPort))) }

// maxNodes bounds the node count a metadata reply may declare.
const maxNodes = 64

// DecodeClusterMetadata reads a cluster metadata reply: the u32-prefixed
// cluster name, a u32 node count, then per node its u32-prefixed name and
// IP, its TCP, QUIC, HTTP and WebSocket ports (u16 each), its role (0
// leader) and its status (0 healthy).
func DecodeClusterMetadata(p []byte) (name string, nodes []Node, err error) {
	r := reader{b: p}
	name = string(r.prefixed())
	count := r.u32()
	if r.err == nil && count > maxNodes {
		return "", nil, fmt.Errorf("%w: cluster metadata declares %d nodes, at most %d", ErrMalformed, count, maxNodes)
	}
	for i := uint32(0); i < count && r.err == nil; i++ {
		var n Node
		n.Name = string(r.prefixed())
		n.IP = string(r.prefixed())
		ports := r.take(8)
		roleStatus := r.take(2)
		if r.err != nil {
			break
		}
		n.TCPPort = binary.LittleEndian.Uint16(ports)
		n.Leader = roleStatus[0] == 0
		n.Healthy = roleStatus[1] == 0
		nodes = append(nodes, n)
	}
	if r.err != nil {
		return "", nil, fmt.Errorf("%w: cluster metadata: %w", ErrMalformed, r.err)
	}
	return name, nodes, nil
}

// reader reads fields off a byte slice, remembering the first shortfall.
type reader struct {
	b   []byte
	err error
}

func (r *reader) take(n int) []byte {
	if r.err != nil {
		return nil
	}
	if n < 0 || n > len(r.b) {
		r.err = fmt.Errorf("%d bytes left, %d wanted", len(r.b), n)
		return nil
	}
	v := r.b[:n:n]
	r.b = r.b[n:]
	return v
}

func (r *reader) u32() uint32 {
	if v := r.take(4); v != nil {
		return binary.LittleEndian.Uint32(v)
	}
	return 0
}

func (r *reader) prefixed() []byte {
	n := r.u32()
	if n > uint32(len(r.b)) {
		if r.err == nil {
			r.err = fmt.Errorf("a %d-byte field with %d bytes left", n, len(r.b))
		}
		return nil
	}
	return r.take(int(n))
}
