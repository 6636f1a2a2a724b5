package iggytest_test

import (
	"fmt"

	"github.com/apache/iggy/foreign/go/client"
	"github.com/apache/iggy/foreign/go/client/tcp"

	"github.com/lasergo/laser/iggytest"
)

// ExampleListen points the official Iggy SDK at an in-process server. In a
// test, iggytest.Start(t, iggytest.Config{}) does the same on a free port and closes the
// server when the test ends.
func ExampleListen() {
	srv, err := iggytest.Listen("127.0.0.1:0", iggytest.Config{})
	if err != nil {
		panic(err)
	}
	defer srv.Close()

	c, err := client.NewIggyClient(client.WithTcp(tcp.WithServerAddress(srv.Addr())))
	if err != nil {
		panic(err)
	}
	defer c.Close()
	if _, err := c.LoginUser("iggy", "iggy"); err != nil {
		panic(err)
	}
	st, err := c.CreateStream("orders")
	if err != nil {
		panic(err)
	}
	fmt.Println(st.Id, st.Name, srv.Requests(iggytest.CmdCreateStream))
	// Output: 0 orders 1
}
