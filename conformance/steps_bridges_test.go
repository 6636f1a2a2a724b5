package conformance

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	a2aproto "github.com/a2aproject/a2a-go/a2a"
	"github.com/cucumber/godog"

	"github.com/lasergo/laser/bridge"
	"github.com/lasergo/laser/bridge/a2a"
	"github.com/lasergo/laser/bridge/agui"
	"github.com/lasergo/laser/runtime"
	"github.com/lasergo/laser/wire"
)

// bridgesWorld is one scenario's state for bridges.feature.
type bridgesWorld struct {
	client    *runtime.Client
	conv      wire.ID
	hops      []string
	loopErr   error
	taskState a2aproto.TaskState
	state     any
	aguiTypes []string
}

// bridgesSteps runs bridges.feature: the loop guard, A2A task replay, AG-UI
// state folding and chat rendering.
func bridgesSteps(sc *godog.ScenarioContext, tr transport, t *testing.T) {
	var w *bridgesWorld
	sc.Before(func(ctx context.Context, _ *godog.Scenario) (context.Context, error) {
		w = &bridgesWorld{}
		return ctx, nil
	})
	sc.Step(`^a running data platform$`, func() error {
		w.client = runtime.NewClient(tr.New(t), runtime.ClientConfig{})
		t.Cleanup(func() { _ = w.client.Close() })
		return nil
	})
	sc.Step(`^a fresh stream bootstrapped with (\d+) partitions$`, func(ctx context.Context, n int) error {
		return w.client.Bootstrap(ctx, uint32(n))
	})
	sc.Step(`^a new conversation$`, func() error {
		w.conv = w.client.IDs().NewID()
		return nil
	})

	sc.Step(`^bridge "([^"]+)" enters after hops "([^"]+)"$`, func(id, hops string) error {
		var err error
		w.hops, err = bridge.Enter(id, strings.Split(hops, ","))
		return err
	})
	sc.Step(`^the bridge hops are "([^"]+)"$`, func(hops string) error {
		if want := strings.Split(hops, ","); !slices.Equal(w.hops, want) {
			return fmt.Errorf("hops %v, want %v", w.hops, want)
		}
		return nil
	})
	sc.Step(`^bridge "([^"]+)" enters the same route$`, func(id string) error {
		_, w.loopErr = bridge.Enter(id, w.hops)
		return nil
	})
	sc.Step(`^the bridge route is rejected as a loop$`, func() error {
		if !errors.Is(w.loopErr, bridge.ErrLoop) {
			return fmt.Errorf("entering again: %v, want a bridge loop", w.loopErr)
		}
		return nil
	})

	sc.Step(`^I submit and cancel an A2A task$`, func(ctx context.Context) error {
		b, err := a2a.New(w.client, a2a.Config{ID: "a2a-gateway"})
		if err != nil {
			return err
		}
		task, err := b.Submit(ctx, &a2aproto.MessageSendParams{Message: a2aproto.NewMessage(a2aproto.MessageRoleUser, a2aproto.TextPart{Text: "cancel me"})})
		if err != nil {
			return err
		}
		token, _ := task.Metadata[a2a.MetaCancelToken].(string)
		if _, err := b.Cancel(ctx, task.ID, token); err != nil {
			return err
		}
		replayed, err := b.Task(ctx, task.ID)
		if err != nil {
			return err
		}
		w.taskState = replayed.Status.State
		return nil
	})
	sc.Step(`^the replayed A2A task state is "([^"]+)"$`, func(want string) error {
		if !strings.EqualFold(string(w.taskState), want) {
			return fmt.Errorf("replayed state %q, want %q", w.taskState, want)
		}
		return nil
	})

	sc.Step(`^I publish an AG-UI count snapshot of (\d+) and replace it with (\d+)$`, func(ctx context.Context, first, second int) error {
		if err := agui.PublishSnapshot(ctx, w.client, runtime.TopicAudit, "agui-gateway", w.conv, map[string]any{"count": first}); err != nil {
			return err
		}
		if err := agui.PublishDelta(ctx, w.client, runtime.TopicAudit, "agui-gateway", w.conv, []agui.PatchOp{{Op: "replace", Path: "/count", Value: second}}); err != nil {
			return err
		}
		state, ok, err := agui.State(ctx, w.client.Transport(), w.conv, runtime.TopicAudit)
		if err != nil {
			return err
		}
		if !ok {
			return errors.New("no state snapshot was read back")
		}
		w.state = state
		return nil
	})
	sc.Step(`^the reconstructed AG-UI count is (\d+)$`, func(want int) error {
		m, ok := w.state.(map[string]any)
		if !ok || len(m) != 1 || m["count"] != float64(want) {
			return fmt.Errorf("state %v, want {count: %d}", w.state, want)
		}
		return nil
	})

	sc.Step(`^I stream chat chunks "([^"]+)" and "([^"]+)"$`, func(ctx context.Context, first, second string) error {
		s, err := bridge.OpenStream(w.client, bridge.StreamSpec{Topic: runtime.TopicLLMIO, From: "assistant", Conversation: w.conv, Correlation: w.conv})
		if err != nil {
			return err
		}
		for _, piece := range []string{first, second} {
			if err := s.Send(ctx, []byte(piece)); err != nil {
				return err
			}
		}
		if err := s.Close(ctx, runtime.FinishStop); err != nil {
			return err
		}
		events, err := agui.Events(ctx, w.client.Transport(), w.conv, runtime.TopicLLMIO)
		if err != nil {
			return err
		}
		for _, e := range events {
			w.aguiTypes = append(w.aguiTypes, string(e.Type))
		}
		return nil
	})
	sc.Step(`^AG-UI renders the chat lifecycle in order$`, func() error {
		want := []string{"TEXT_MESSAGE_START", "TEXT_MESSAGE_CONTENT", "TEXT_MESSAGE_CONTENT", "TEXT_MESSAGE_END"}
		if !slices.Equal(w.aguiTypes, want) {
			return fmt.Errorf("AG-UI events %v, want %v", w.aguiTypes, want)
		}
		return nil
	})
}
