package wire_test

import (
	"encoding/hex"
	"math"
)

func float64FromBits(b uint64) float64 { return math.Float64frombits(b) }

func hexDecode(s string) ([]byte, error) { return hex.DecodeString(s) }
