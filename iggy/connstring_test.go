package iggy

import (
	"errors"
	"strings"
	"testing"
)

func TestParseConnString(t *testing.T) {
	tests := []struct {
		in   string
		want connString
	}{
		{"iggy://iggy:iggy@127.0.0.1:8090/laser", connString{addr: "127.0.0.1:8090", stream: "laser", username: "iggy", password: "iggy"}},
		{"iggy://user@localhost/s", connString{addr: "localhost:8090", stream: "s", username: "user"}},
		{"iggy://u:p%40ss%2Fw@[::1]:9000/s/", connString{addr: "[::1]:9000", stream: "s", username: "u", password: "p@ss/w"}},
		{"iggy+pat://tok-123@10.0.0.1:8090/s", connString{addr: "10.0.0.1:8090", stream: "s", token: "tok-123"}},
		{"iggy://iggy:iggy@127.0.0.1:8091/s?protocol=vsr", connString{addr: "127.0.0.1:8091", stream: "s", username: "iggy", password: "iggy", protocol: protocolVSR}},
		{"iggy://iggy:iggy@127.0.0.1/s?protocol=0.8", connString{addr: "127.0.0.1:8090", stream: "s", username: "iggy", password: "iggy"}},
		{"iggy+pat://tok@h:1/s?protocol=vsr&tls=true&tls_ca_file=%2Fetc%2Fca.pem&tls_domain=iggy.local",
			connString{addr: "h:1", stream: "s", token: "tok", protocol: protocolVSR, tls: true, tlsCA: "/etc/ca.pem", tlsServerName: "iggy.local"}},
		{"iggy://u:p@h/s?protocol=vsr&tls_domain=n", connString{addr: "h:8090", stream: "s", username: "u", password: "p", protocol: protocolVSR, tls: true, tlsServerName: "n"}},
		{"iggy://u:p@h/s?protocol=vsr&tls=false", connString{addr: "h:8090", stream: "s", username: "u", password: "p", protocol: protocolVSR}},
	}
	for _, tc := range tests {
		got, err := parseConnString(tc.in)
		if err != nil {
			t.Errorf("parse %q: %v", tc.in, err)
			continue
		}
		if got != tc.want {
			t.Errorf("parse %q = %+v, want %+v", tc.in, got, tc.want)
		}
	}
}

func TestParseConnStringRejectsBadForms(t *testing.T) {
	for _, in := range []string{
		"http://iggy:iggy@127.0.0.1:8090/s",
		"iggy://127.0.0.1:8090/s",
		"iggy://iggy:iggy@127.0.0.1:8090",
		"iggy://iggy:iggy@127.0.0.1:8090/a/b",
		"iggy://iggy:iggy@/s",
		"iggy://iggy:iggy@127.0.0.1:8090/s?pat=x",
		"iggy://iggy:iggy@127.0.0.1:8090/s?protocol=0.9",
		"iggy://iggy:iggy@127.0.0.1:8090/s?protocol=vsr&protocol=vsr",
		"iggy://iggy:iggy@127.0.0.1:8090/s?tls=true",
		"iggy://iggy:iggy@127.0.0.1:8090/s?protocol=0.8&tls_ca_file=/x",
		"iggy://iggy:iggy@127.0.0.1:8090/s?protocol=vsr&tls=maybe",
		"iggy://iggy:iggy@127.0.0.1:8090/s?protocol=vsr&tls=false&tls_ca_file=/x",
		"iggy://iggy:iggy@127.0.0.1:8090/s?protocol=vsr&tls_ca_file=",
		"iggy://iggy:iggy@127.0.0.1:8090/s#frag",
		"iggy+pat://tok:extra@127.0.0.1:8090/s",
		"iggy+pat://127.0.0.1:8090/s",
		"iggy://iggy:iggy@127.0.0.1:8090/" + strings.Repeat("x", 256),
		"::not a url",
	} {
		if _, err := parseConnString(in); !errors.Is(err, ErrConnString) {
			t.Errorf("parse %q: err = %v, want ErrConnString", in, err)
		}
	}
}

func TestParseConnStringErrorsHideThePassword(t *testing.T) {
	_, err := parseConnString("iggy://iggy:hunter2@127.0.0.1:8090")
	if err == nil || strings.Contains(err.Error(), "hunter2") {
		t.Fatalf("err = %v; want an error without the password", err)
	}
}

func TestBackoffDoublesUpToTheCap(t *testing.T) {
	c := Config{ReconnectBackoff: 100e6, ReconnectBackoffMax: 350e6}.resolve()
	var got []int64
	for n := 1; n <= 4; n++ {
		got = append(got, int64(c.backoff(n)/1e6))
	}
	want := []int64{100, 200, 350, 350}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("backoff ms = %v, want %v", got, want)
		}
	}
}

func TestUnparseableConnStringErrorsHideThePassword(t *testing.T) {
	for _, in := range []string{
		"iggy://iggy:hunter2@127.0.0.1:80x90/laser", // a bad port: url.Parse quotes the whole string
		"iggy://iggy:hunter2@[::1/laser",            // a bad host
		"iggy://iggy:hunter2@127.0.0.1:8090/la\x7fser",
	} {
		_, err := parseConnString(in)
		if !errors.Is(err, ErrConnString) || strings.Contains(err.Error(), "hunter2") {
			t.Errorf("parse %q: err = %v; want ErrConnString without the password", in, err)
		}
		_, err = envConnString(func(k string) string {
			if k == EnvConnectionString {
				return in
			}
			return ""
		})
		if !errors.Is(err, ErrConnString) || strings.Contains(err.Error(), "hunter2") {
			t.Errorf("env %q: err = %v; want ErrConnString without the password", in, err)
		}
	}
}

func TestParseConnStringNamesTheBadParameter(t *testing.T) {
	_, err := parseConnString("iggy://iggy:iggy@127.0.0.1:8090/s?protocol=vsr&tsl=true")
	if err == nil || !strings.Contains(err.Error(), `unknown query parameter "tsl"`) {
		t.Fatalf("err = %v; want one naming the parameter tsl", err)
	}
	_, err = parseConnString("iggy://iggy:iggy@127.0.0.1:8090/s?tls=true")
	if err == nil || !strings.Contains(err.Error(), "TLS needs protocol=vsr") {
		t.Fatalf("err = %v; want one saying TLS needs protocol=vsr", err)
	}
}
