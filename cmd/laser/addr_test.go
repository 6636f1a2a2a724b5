package main

import (
	"strconv"
	"strings"
	"testing"
)

// malformedAddrs are connection strings without a well-formed "iggy://"
// whose secret the old redaction missed.
var malformedAddrs = map[string]string{
	"no scheme":       "admin:hunter2@127.0.0.1:8090/x",
	"scheme colon":    "iggy:/admin:hunter2@127.0.0.1:8090/x",
	"scheme no colon": "iggy//admin:hunter2@127.0.0.1:8090/x",
	"opaque":          "iggy:admin:hunter2@127.0.0.1:8090/x",
}

// TestMalformedAddressesNeverPrintTheirPassword: an --addr without "://"
// never shows its password, in text or JSON errors.
func TestMalformedAddressesNeverPrintTheirPassword(t *testing.T) {
	for name, addr := range malformedAddrs {
		for _, args := range [][]string{
			{"dlq", "list", "--addr", addr},
			{"dlq", "list", "--addr", addr, "--json"},
			{"tail", "--addr", addr, "t"},
		} {
			code, out, errOut := laser(t, args...)
			if strings.Contains(out+errOut, "hunter2") {
				t.Errorf("%s: laser %s (exit %d) printed the password:\n%s%s", name, strings.Join(args, " "), code, out, errOut)
			}
			if code != exitUsage || !strings.Contains(errOut, "unparsable address") {
				t.Errorf("%s: laser %s: exit %d, stderr %q; want a usage error naming an unparsable address", name, strings.Join(args, " "), code, errOut)
			}
		}
	}
}

// TestMalformedDefaultAddressIsHiddenInHelp: --help shows a malformed
// LASER_IGGY_ADDR as its length only.
func TestMalformedDefaultAddressIsHiddenInHelp(t *testing.T) {
	for name, addr := range malformedAddrs {
		t.Setenv("LASER_IGGY_ADDR", addr)
		_, out, errOut := laser(t, "dlq", "list", "--help")
		if strings.Contains(out+errOut, "hunter2") {
			t.Errorf("%s: help printed the password:\n%s%s", name, out, errOut)
		}
		if want := "<unparsable address, " + strconv.Itoa(len(addr)) + " chars>"; !strings.Contains(out, want) {
			t.Errorf("%s: help does not show %s:\n%s", name, want, out)
		}
	}
}

// TestAddrSecretWithoutSchemeIsEverythingBeforeTheLastAt: with no "://",
// what precedes the last "@" is the secret.
func TestAddrSecretWithoutSchemeIsEverythingBeforeTheLastAt(t *testing.T) {
	for in, want := range map[string]string{
		"admin:hunter2@127.0.0.1:8090/x":   "admin:hunter2",
		"iggy//a@b:hunter2@127.0.0.1:1/x":  "iggy//a@b:hunter2",
		"127.0.0.1:8090/x":                 "",
		"iggy://admin:hunter2@127.0.0.1/x": "hunter2",
	} {
		secrets := addrSecrets(in)
		if want == "" {
			if len(secrets) != 0 {
				t.Errorf("addrSecrets(%q) = %q, want none", in, secrets)
			}
			continue
		}
		if len(secrets) == 0 || secrets[0] != want {
			t.Errorf("addrSecrets(%q) = %q, want %q first", in, secrets, want)
		}
	}
}

func TestAnAddressWithAPortOutOfRangeOrNoStreamIsBadUsage(t *testing.T) {
	for addr, want := range map[string]string{
		"iggy://iggy:secret@127.0.0.1:99999/laser": "port 99999 is not a number from 1 to 65535",
		"iggy://iggy:secret@127.0.0.1:0/laser":     "port 0 is not a number from 1 to 65535",
		"iggy://iggy:secret@127.0.0.1:8090":        "names no stream",
		"iggy+pat://token@127.0.0.1:8090/":         "names no stream",
	} {
		code, _, errOut := laser(t, "dlq", "list", "--timeout", "1s", "--addr", addr)
		if code != exitUsage || !strings.Contains(errOut, want) || strings.Contains(errOut, "secret") || strings.Contains(errOut, "token@") {
			t.Errorf("--addr %s: exit %d, stderr %q; want %d saying %q, the secret hidden", addr, code, errOut, exitUsage, want)
		}
	}
}
