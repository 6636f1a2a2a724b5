//go:build unix

package proccpu_test

import (
	"testing"

	"github.com/lasergo/laser/internal/proccpu"
)

// TestUsedGrowsWithWork checks the reading moves when the process burns CPU.
func TestUsedGrowsWithWork(t *testing.T) {
	before := proccpu.Used()
	if before <= 0 {
		t.Fatalf("Used() = %v before any work, want a positive CPU time", before)
	}
	x := 0
	for after := before; after == before; after = proccpu.Used() {
		for i := range 1_000_000 {
			x += i
		}
	}
	_ = x
}
