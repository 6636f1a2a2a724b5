package runtime_test

import (
	"bytes"
	"testing"

	"github.com/lasergo/laser/clock"
	"github.com/lasergo/laser/runtime"
	"github.com/lasergo/laser/wire"
)

func TestPlainRecordNamingAnImpossibleAgentIsDeadLetteredAsDecodeFailed(t *testing.T) {
	for _, tc := range []struct{ key, value string }{
		{wire.HeaderAgentID, "shop\x07"},
		{wire.HeaderTarget, agent + "\n"},
		{wire.HeaderTarget, agent + "\u0085"},
	} {
		log := newLog(t, 1, clock.System{})
		sink, dls := deadLetters()
		start(t, log, runtime.ConsumerConfig{
			Agent:   agent,
			Handler: handlerFunc(func(*runtime.Ctx) error { t.Errorf("%s=%q reached the handler", tc.key, tc.value); return nil }),
			Tuning: runtime.Tuning{
				DeadLetterSink: sink,
			},
		})
		headers := wire.Headers{
			{Key: wire.HeaderConversationID, Value: wire.StringValue(conv().String())},
			{Key: tc.key, Value: wire.StringValue(tc.value)},
		}
		raw(t, log, "k", headers, []byte("payload"))
		dl := recv(t, dls, "dead letter")
		if dl.Capsule.Reason != wire.ReasonDecodeFailed || !bytes.Equal(dl.Capsule.Payload, []byte("payload")) || dl.PublishErr != nil {
			t.Fatalf("%s=%q: capsule %+v (publish %v)", tc.key, tc.value, dl.Capsule, dl.PublishErr)
		}
	}
}
