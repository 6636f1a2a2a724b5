package iggy

import (
	"net"
	"time"

	"github.com/lasergo/laser/iggy/internal/vsr"
)

// Sentinels this package keeps unexported, named for its external tests.
var (
	ErrLeft = errLeft
)

// BenchClient is what the benchmarks' bare loops call: the SDK's client
// serves it on the 0.8 framing, DialBareVSR's on VSR.
type BenchClient = iggyClient

// DialBareVSR returns a VSR client to addr logged in as user, with no
// transport around it: the benchmarks' bare loop on the VSR framing.
func DialBareVSR(addr, user, password string) (BenchClient, error) {
	conn, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		return nil, err
	}
	c := newVSRClient(conn, addr, 30*time.Second, vsr.ClientID{Lo: uint64(time.Now().UnixNano()), Hi: 1})
	if _, err := c.LoginUser(user, password); err != nil {
		_ = c.Close()
		return nil, err
	}
	return c, nil
}
