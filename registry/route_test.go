package registry_test

import (
	"testing"

	"github.com/lasergo/laser/registry"
)

// TestValidateRefusesRoutesThatCanNeverResolve: the zero Route, To an
// invalid agent id and a capability route without a skill are refused
// before anything is sent; every well-formed route passes.
func TestValidateRefusesRoutesThatCanNeverResolve(t *testing.T) {
	for name, r := range map[string]registry.Route{
		"zero":              {},
		"to empty":          registry.To(""),
		"capable, no skill": registry.ToCapable("", registry.Policy{}),
		"all, no skill":     registry.AllCapable(""),
	} {
		if err := r.Validate(); err == nil {
			t.Errorf("%s: Validate accepted %s", name, r)
		}
	}
	for _, r := range []registry.Route{registry.To("editor"), registry.Broadcast(), registry.ToCapable("review", registry.Policy{}), registry.AllCapable("review")} {
		if err := r.Validate(); err != nil {
			t.Errorf("%s: %v", r, err)
		}
	}
}
