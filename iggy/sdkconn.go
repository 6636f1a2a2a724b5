package iggy

import (
	"net"
	"reflect"
	"sync"
	"unsafe"

	"github.com/apache/iggy/foreign/go/client"
	"github.com/apache/iggy/foreign/go/client/tcp"
	iggcon "github.com/apache/iggy/foreign/go/contracts"
)

// sdkTCP is the SDK's TCP client behind c: c itself, or the one an
// IggyClient wraps; nil for any other client.
func sdkTCP(c iggyClient) *tcp.IggyTcpClient {
	if ic, ok := c.(*client.IggyClient); ok {
		c = ic.Client
	}
	tc, _ := c.(*tcp.IggyTcpClient)
	return tc
}

// sdkSocket digs the TCP socket out of an SDK v0.8.0 client, or returns nil
// when the client is not the layout this was written against.
//
// Why: the SDK sets no I/O deadlines and its Close waits for the request in
// flight, so a call to a stuck server can only be abandoned, and its
// goroutine and server-side session (with the group membership) would live
// until TCP gives up. Closing the socket ends both at once. The field is
// read once, right after the constructor returned it, before any other
// goroutine uses the client; nothing writes it afterwards.
func sdkSocket(c iggyClient) net.Conn {
	tc := sdkTCP(c)
	if tc == nil {
		return nil
	}
	f := reflect.ValueOf(tc).Elem().FieldByName("conn")
	if !f.IsValid() || f.Type() != reflect.TypeFor[net.Conn]() || !f.CanAddr() {
		return nil
	}
	return *(*net.Conn)(unsafe.Pointer(f.UnsafeAddr()))
}

// sdkMutex digs out the mutex an SDK v0.8.0 TCP client holds for each
// request and response, or returns nil when the layout is not the one this
// was written against.
//
// Why: the subscription polls over the client's socket with its own codec
// (see rawpoll.go), and the link's heartbeat pings through the SDK on the same
// socket every five seconds; holding the SDK's own mutex keeps the two
// exchanges from interleaving.
func sdkMutex(c iggyClient) *sync.Mutex {
	tc := sdkTCP(c)
	if tc == nil {
		return nil
	}
	// The SDK decompresses polled payloads only when told to; the codec
	// does not, so it steps aside for such a client.
	if c := tc.MessageCompression; c != "" && c != iggcon.MESSAGE_COMPRESSION_NONE {
		return nil
	}
	f := reflect.ValueOf(tc).Elem().FieldByName("mtx")
	if !f.IsValid() || f.Type() != reflect.TypeFor[sync.Mutex]() || !f.CanAddr() {
		return nil
	}
	return (*sync.Mutex)(unsafe.Pointer(f.UnsafeAddr()))
}
