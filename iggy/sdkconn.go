package iggy

import (
	"net"
	"reflect"
	"unsafe"

	"github.com/apache/iggy/foreign/go/client"
	"github.com/apache/iggy/foreign/go/client/tcp"
	iggcon "github.com/apache/iggy/foreign/go/contracts"
)

// sdkSocket digs the TCP socket out of an SDK v0.8.0 client, or returns nil
// when the client is not the layout this was written against.
//
// Why: the SDK sets no I/O deadlines and its Close waits for the request in
// flight, so a call to a stuck server can only be abandoned, and its
// goroutine and server-side session (with the group membership) would live
// until TCP gives up. Closing the socket ends both at once. The field is
// read once, right after the constructor returned it, before any other
// goroutine uses the client; nothing writes it afterwards.
func sdkSocket(c iggcon.Client) net.Conn {
	ic, ok := c.(*client.IggyClient)
	if !ok {
		return nil
	}
	tc, ok := ic.Client.(*tcp.IggyTcpClient)
	if !ok || tc == nil {
		return nil
	}
	f := reflect.ValueOf(tc).Elem().FieldByName("conn")
	if !f.IsValid() || f.Type() != reflect.TypeFor[net.Conn]() || !f.CanAddr() {
		return nil
	}
	return *(*net.Conn)(unsafe.Pointer(f.UnsafeAddr()))
}
