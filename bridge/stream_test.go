package bridge_test

import (
	"testing"
	"time"

	"github.com/lasergo/laser/bridge"
	"github.com/lasergo/laser/internal/bridgetest"
	"github.com/lasergo/laser/runtime"
	"github.com/lasergo/laser/wire"
)

func TestStreamWriterWritesOneChannelFromSequenceZero(t *testing.T) {
	bridgetest.EachTransport(t, func(t *testing.T, client *runtime.Client) {
		conv := client.IDs().NewID()
		deadline := time.UnixMicro(1_900_000_000_000_000)
		w, err := bridge.OpenStream(client, bridge.StreamSpec{Topic: runtime.TopicLLMIO, From: "assistant", Conversation: conv,
			Correlation: conv, Purpose: wire.OperationReasoning, Deadline: deadline, Hops: []string{"agui-gateway"}})
		if err != nil {
			t.Fatal(err)
		}
		for _, piece := range []string{"a", "b"} {
			if err := w.Send(t.Context(), []byte(piece)); err != nil {
				t.Fatal(err)
			}
		}
		if err := w.Close(t.Context(), "length"); err != nil {
			t.Fatal(err)
		}
		envs := bridgetest.Envelopes(t, client, conv, runtime.TopicLLMIO)
		if len(envs) != 3 {
			t.Fatalf("read %d records, want 3", len(envs))
		}
		for i, e := range envs {
			if e.Kind != wire.KindChunk || *e.Sequence != uint64(i) || *e.Channel != w.Channel() || *e.Correlation != conv {
				t.Fatalf("record %d: kind %s seq %d channel %v corr %v", i, e.Kind, *e.Sequence, e.Channel, e.Correlation)
			}
			hops, _ := bridge.Hops(e.Metadata)
			if len(hops) != 1 || hops[0] != "agui-gateway" {
				t.Fatalf("record %d: hops %v", i, hops)
			}
			if opening := i == 0; (e.Operation != nil) != opening || (e.DeadlineMicros != nil) != opening {
				t.Fatalf("record %d: operation %v deadline %v (only the opening chunk carries them)", i, e.Operation, e.DeadlineMicros)
			}
		}
		if *envs[0].Operation != wire.OperationReasoning || *envs[0].DeadlineMicros != uint64(deadline.UnixMicro()) {
			t.Fatalf("opening chunk: operation %q deadline %d", *envs[0].Operation, *envs[0].DeadlineMicros)
		}
		last := envs[2]
		if !last.Last || last.FinishReason == nil || *last.FinishReason != "length" || len(last.Body) != 0 {
			t.Fatalf("terminal chunk: last %v finish %v body %q", last.Last, last.FinishReason, last.Body)
		}
	})
}

func TestStreamWriterFailEndsTheStreamWithAnError(t *testing.T) {
	bridgetest.EachTransport(t, func(t *testing.T, client *runtime.Client) {
		conv := client.IDs().NewID()
		w, err := bridge.OpenStream(client, bridge.StreamSpec{Topic: runtime.TopicLLMIO, From: "assistant", Conversation: conv, Correlation: conv})
		if err != nil {
			t.Fatal(err)
		}
		if err := w.Send(t.Context(), []byte("partial")); err != nil {
			t.Fatal(err)
		}
		if err := w.Fail(t.Context(), wire.ErrorToolFailure, "model went away"); err != nil {
			t.Fatal(err)
		}
		if err := w.Send(t.Context(), []byte("late")); err == nil {
			t.Fatal("a send after Fail was accepted")
		}
		if err := w.Close(t.Context(), ""); err != nil {
			t.Fatalf("Close after Fail: %v, want a no-op", err)
		}
		envs := bridgetest.Envelopes(t, client, conv, runtime.TopicLLMIO)
		if len(envs) != 2 || envs[1].Kind != wire.KindError || *envs[1].Channel != w.Channel() || *envs[1].Sequence != 1 {
			t.Fatalf("records %d, the second %+v", len(envs), envs[len(envs)-1])
		}
		eb, err := wire.DecodeErrorBody(envs[1].Body)
		if err != nil || eb.Code != wire.ErrorToolFailure || *eb.Message != "model went away" {
			t.Fatalf("error body %+v, %v", eb, err)
		}
	})
}

func TestStreamWriterRefusesBadInput(t *testing.T) {
	client := bridgetest.MemClient(t)
	conv := client.IDs().NewID()
	if _, err := bridge.OpenStream(client, bridge.StreamSpec{Topic: runtime.TopicLLMIO, From: "assistant", Purpose: "story"}); err == nil {
		t.Fatal("a purpose outside chat|reasoning|tool_args was accepted")
	}
	if _, err := bridge.OpenStream(client, bridge.StreamSpec{Topic: runtime.TopicLLMIO, From: ""}); err == nil {
		t.Fatal("a bad agent id was accepted")
	}
	w, err := bridge.OpenStream(client, bridge.StreamSpec{Topic: runtime.TopicLLMIO, From: "assistant", Conversation: conv, Correlation: conv})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Send(t.Context(), nil); err == nil {
		t.Fatal("an empty chunk was accepted")
	}
	if err := w.Send(t.Context(), make([]byte, wire.MaxChunkBodyBytes+1)); err == nil {
		t.Fatal("an oversized chunk was accepted")
	}
	if n := len(bridgetest.Envelopes(t, client, conv, runtime.TopicLLMIO)); n != 0 {
		t.Fatalf("%d records were published for refused chunks", n)
	}
}
