package vsr

import (
	"encoding/binary"
	"fmt"
)

// ProtocolVersion is the protocol version this client speaks, packed as
// major<<20 | minor<<10 | patch: 0.11.0, the one Iggy server 0.9 reads.
const ProtocolVersion uint32 = 11 << 10

// ClientName and ClientVersion name this client in the register.
const (
	ClientName    = "laser-go"
	ClientVersion = "0.9.0"
)

// RegisterBody is the body of a register (login) request: the protocol
// version, the client's name and version, then either the u8-prefixed user
// and password or the u8-prefixed personal access token, and an empty
// context. User, password and token are 255 bytes at most; the user and
// token not empty.
func RegisterBody(user, password, token string) ([]byte, error) {
	b := binary.LittleEndian.AppendUint32(nil, ProtocolVersion)
	b = appendName(b, ClientName)
	b = appendName(b, ClientVersion)
	if token != "" {
		if len(token) > 255 {
			return nil, fmt.Errorf("vsr: a personal access token of %d bytes, want at most 255", len(token))
		}
		b = appendName(b, token)
	} else {
		if user == "" || len(user) > 255 || len(password) > 255 {
			return nil, fmt.Errorf("vsr: a user of %d and a password of %d bytes, want 1..255 and 0..255", len(user), len(password))
		}
		b = appendName(b, user)
		b = appendName(b, password)
	}
	return binary.LittleEndian.AppendUint32(b, 0), nil
}

func appendName(b []byte, s string) []byte {
	return append(append(b, byte(len(s))), s...)
}

// Registered is what a register reply says.
type Registered struct {
	UserID        uint32
	Session       uint64
	ServerVersion string
}

// DecodeRegistered reads a register reply's payload: u32 user id, u64
// session, u32 protocol version, u8-prefixed server version.
func DecodeRegistered(p []byte) (Registered, error) {
	if len(p) < 17 || len(p) < 17+int(p[16]) {
		return Registered{}, fmt.Errorf("%w: a register reply of %d bytes", ErrMalformed, len(p))
	}
	r := Registered{
		UserID:        binary.LittleEndian.Uint32(p[0:4]),
		Session:       binary.LittleEndian.Uint64(p[4:12]),
		ServerVersion: string(p[17 : 17+int(p[16])]),
	}
	if r.Session == 0 {
		return Registered{}, fmt.Errorf("%w: the register reply names session 0", ErrMalformed)
	}
	return r, nil
}
