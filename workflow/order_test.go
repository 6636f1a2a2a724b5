package workflow

import (
	"slices"
	"testing"
)

func TestOrderKeepsAuthoredOrderBetweenTies(t *testing.T) {
	got, err := order([]Step{{Label: "c", After: []string{"a"}}, {Label: "b"}, {Label: "a"}})
	if err != nil || !slices.Equal(got, []string{"b", "a", "c"}) {
		t.Fatalf("order %v (%v), want b a c: ties keep authored order", got, err)
	}
}
