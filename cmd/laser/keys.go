package main

import (
	"bufio"
	"encoding/hex"
	"fmt"
	"os"
	"strings"

	"github.com/lasergo/laser/sign"
)

// loadKeys reads an enrolled-keys file: one key a line, "PRINCIPAL KIND
// HEXPUBLICKEY" (KIND agent or operator), blank lines and lines starting
// with # ignored. It returns the registry the keys are enrolled in.
func loadKeys(path string) (*sign.Registry, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	reg := sign.NewRegistry()
	sc := bufio.NewScanner(f)
	for line := 1; sc.Scan(); line++ {
		text := strings.TrimSpace(sc.Text())
		if text == "" || strings.HasPrefix(text, "#") {
			continue
		}
		fields := strings.Fields(text)
		if len(fields) != 3 {
			return nil, usagef("%s:%d: want PRINCIPAL KIND HEXPUBLICKEY, got %d fields", path, line, len(fields))
		}
		pub, err := hex.DecodeString(fields[2])
		if err != nil {
			return nil, usagef("%s:%d: public key: %v", path, line, err)
		}
		if err := reg.EnrollRecord(sign.KeyRecord{Principal: fields[0], Kind: sign.KeyKind(fields[1]), Public: pub}); err != nil {
			return nil, usagef("%s:%d: %v", path, line, err)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	return reg, nil
}
