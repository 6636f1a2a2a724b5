package lasertest_test

import (
	"errors"
	"testing"

	"github.com/lasergo/laser/lasertest"
	"github.com/lasergo/laser/runtime"
	"github.com/lasergo/laser/wire"
)

// spell streams the letters of its input, failing on a '!'.
func spell(_ *runtime.Ctx, in string, out *runtime.Stream[string]) error {
	for _, r := range in {
		if r == '!' {
			return runtime.Failf(wire.ErrorToolFailure, "no letter for !")
		}
		if err := out.Send(string(r)); err != nil {
			return err
		}
	}
	return nil
}

func TestRunStreamReturnsTheItemsInOrderAndEndsTheStream(t *testing.T) {
	items, sent, err := lasertest.RunStream(t.Context(), lasertest.Handler{Agent: "speller"}, spell, "abc")
	if err != nil {
		t.Fatal(err)
	}
	if len(items) != 3 || items[0] != "a" || items[1] != "b" || items[2] != "c" {
		t.Fatalf("items %q, want a b c", items)
	}
	last := sent[len(sent)-1].Message.Envelope
	if len(sent) != 4 || last.Kind != wire.KindChunk || !last.Last {
		t.Fatalf("%d records, the last %s (last=%v); want three chunks and the terminal one", len(sent), last.Kind, last.Last)
	}
}

func TestRunStreamEndsAFailfStreamWithItsAnswerAndCommits(t *testing.T) {
	items, sent, err := lasertest.RunStream(t.Context(), lasertest.Handler{Agent: "speller"}, spell, "ab!c")
	if err != nil {
		t.Fatalf("err %v, want nil: a Failf is the handler's answer, committed", err)
	}
	if len(items) != 2 {
		t.Fatalf("items %q, want the two sent before the failure", items)
	}
	_, aerr := lasertest.Answer[string](sent)
	var remote *runtime.Error
	if !(errors.As(aerr, &remote) && remote.Remote()) || remote.Wire != wire.ErrorToolFailure {
		t.Fatalf("the stream ended with %v, want the tool-failure error", aerr)
	}
}

func TestRunStreamEndsARejectedStreamWithAnAGDXErrorAndRejects(t *testing.T) {
	refuse := func(_ *runtime.Ctx, in string, out *runtime.Stream[string]) error {
		return runtime.Reject(errors.New("no prompt"))
	}
	_, sent, err := lasertest.RunStream(t.Context(), lasertest.Handler{Agent: "speller"}, refuse, "")
	if runtime.CodeOf(err) != runtime.CodeRejected {
		t.Fatalf("err %v, want the rejection a consumer would park", err)
	}
	if _, aerr := lasertest.Answer[string](sent); runtime.CodeOf(aerr) != runtime.CodeRejected {
		t.Fatalf("the stream ended with %v, want an invalid-request error", aerr)
	}
}
