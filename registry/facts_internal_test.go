package registry

import (
	"fmt"
	"testing"
)

// Past 2 x MaxFacts agents the fold forgets released agents first: a
// forgotten release can only let an older quarantine apply again, while a
// forgotten quarantine would set a bad agent free.
func TestBoundFactsForgetsReleasedAgentsBeforeQuarantinedOnes(t *testing.T) {
	r := New(nil, Config{MaxFacts: 2})
	for i := range 5 {
		r.quarantine[fmt.Sprint("released-", i)] = factState{order: foldOrder{issued: uint64(100 + i)}}
	}
	r.quarantine["bad-old"] = factState{order: foldOrder{issued: 1}, quarantined: true}
	r.quarantine["bad-new"] = factState{order: foldOrder{issued: 2}, quarantined: true}
	r.boundFacts()
	if len(r.quarantine) != 2 || !r.quarantine["bad-old"].quarantined || !r.quarantine["bad-new"].quarantined {
		t.Fatalf("kept %v, want both quarantined agents", r.quarantine)
	}
}
