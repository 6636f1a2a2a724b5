package generator

import (
	"strings"
	"testing"
)

func TestTheKeyHelpNamesEveryKeyOfEveryDirectiveAndEveryShape(t *testing.T) {
	for _, p := range []*Problem{ErrUnknownKey, ErrMissingKey} {
		for name, s := range directiveSchemas {
			for _, k := range s.keys {
				if !strings.Contains(p.Help, k+"=") {
					t.Errorf("%s help omits %s= of //laser:%s", p.Title, k, name)
				}
			}
		}
		for _, s := range Shapes {
			if !strings.Contains(p.Help, s.Signature) {
				t.Errorf("%s help omits the shape %s", p.Title, s.Signature)
			}
		}
	}
}

func TestTheShapeHelpAndCountsComeFromTheList(t *testing.T) {
	if got := paramCounts("handle"); got != "2 or 3" {
		t.Errorf("handle methods take %s parameters, want 2 or 3", got)
	}
	if got := thirdParams("handle"); got != "history conversation.History or out *runtime.Stream[Item]" {
		t.Errorf("a handle method's third parameter: %s", got)
	}
	if got := thirdParams("event"); got != "history conversation.History" {
		t.Errorf("an event method's third parameter: %s", got)
	}
	if !strings.Contains(ErrHandleShape.Help, "*runtime.Stream[Item]") || !strings.Contains(ErrHandleShape.Help, "conversation.History") {
		t.Errorf("handle shape help omits streaming or history: %s", ErrHandleShape.Help)
	}
	if !strings.Contains(DirectivesDoc(), "context=<policy>") || !strings.Contains(DirectivesDoc(), "*runtime.Stream[Item]") {
		t.Error("the package documentation omits context= or streaming")
	}
}
