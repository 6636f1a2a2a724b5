package main

import (
	"context"
	"encoding/binary"
	"io"
	"net"
	"strings"
	"testing"
	"time"
)

// TestDevServesVSROnTheSamePort registers over Iggy's VSR framing on the
// port laser dev prints, and checks it prints the VSR connection strings.
func TestDevServesVSROnTheSamePort(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	var out, errOut syncBuffer
	done := make(chan int, 1)
	go func() { done <- run(ctx, []string{"dev", "--addr", "127.0.0.1:0", "--console", ""}, &out, &errOut) }()
	waitCtx, waitCancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer waitCancel()
	vsrLine, err := out.line(waitCtx, "  Over VSR:     LASER_IGGY_ADDR=")
	if err != nil {
		t.Fatalf("dev printed no VSR connection string: %v\n%s", err, out.String())
	}
	if !strings.HasSuffix(vsrLine, "/laser?protocol=vsr") {
		t.Errorf("VSR connection string = %q, want it to end in /laser?protocol=vsr", vsrLine)
	}
	addr := strings.TrimSuffix(strings.TrimPrefix(vsrLine, "iggy://iggy:iggy@"), "/laser?protocol=vsr")

	var d net.Dialer
	nc, err := d.DialContext(waitCtx, "tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	_ = nc.SetDeadline(time.Now().Add(10 * time.Second))
	// A register request: the 256-byte header (size, Request, a client id,
	// operation Register), then version, SDK name and version, user,
	// password and an empty context.
	body := binary.LittleEndian.AppendUint32(nil, 11<<10)
	for _, s := range []string{"test", "1", "iggy", "iggy"} {
		body = append(append(body, byte(len(s))), s...)
	}
	body = binary.LittleEndian.AppendUint32(body, 0)
	h := make([]byte, 256)
	binary.LittleEndian.PutUint32(h[48:], uint32(256+len(body)))
	h[60], h[128], h[176] = 5, 1, 1
	if _, err := nc.Write(append(h, body...)); err != nil {
		t.Fatal(err)
	}
	reply := make([]byte, 256)
	if _, err := io.ReadFull(nc, reply); err != nil {
		t.Fatalf("no reply to a VSR register: %v", err)
	}
	if reply[60] != 8 || binary.LittleEndian.Uint32(reply[216:]) != 0 {
		t.Fatalf("register answered command %d status %d, want a Reply (8) with status 0", reply[60], binary.LittleEndian.Uint32(reply[216:]))
	}
	cancel()
	if code := <-done; code != exitOK {
		t.Fatalf("exit %d: %s", code, errOut.String())
	}
}
