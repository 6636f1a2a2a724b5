package workflow_test

import (
	"bytes"
	"os"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/fxamacker/cbor/v2"
	"github.com/lasergo/laser/iggytest"
	"github.com/lasergo/laser/internal/featuretest"
	"github.com/lasergo/laser/registry"
	"github.com/lasergo/laser/runtime"
	"github.com/lasergo/laser/wire"
	"github.com/lasergo/laser/workflow"
)

// The crash child reads its world from these variables.
const (
	envCrashAddr = "LASER_WORKFLOW_CRASH_ADDR"
	envCrashRun  = "LASER_WORKFLOW_CRASH_RUN"
	envCrashTops = "LASER_WORKFLOW_CRASH_TOPICS"
)

// crashSteps is the workflow both the killed and the resumed process run.
func crashSteps() []workflow.Step {
	return []workflow.Step{
		{Label: "draft", Route: registry.To("drafter")},
		{Label: "edit", After: []string{"draft"}, Route: registry.To("editor")},
		{Label: "publish", After: []string{"edit"}, Route: registry.To("publisher")},
	}
}

// TestCrashChild is the workflow process of TestCrashResumesEachStepOnce;
// it runs only when that test spawns it.
func TestCrashChild(t *testing.T) {
	addr := os.Getenv(envCrashAddr)
	if addr == "" {
		t.Skip("spawned by TestCrashResumesEachStepOnce")
	}
	run, err := wire.ParseID(os.Getenv(envCrashRun))
	if err != nil {
		t.Fatal(err)
	}
	topics := strings.Split(os.Getenv(envCrashTops), ",")
	client := runtime.NewClient(featuretest.Dial(t, addr), runtime.ClientConfig{})
	defer client.Close()
	wf := &workflow.Workflow{Name: "planner", Steps: crashSteps(), RunID: run, Inbox: topics[0], ReplyTopic: topics[1], Journal: topics[2]}
	out, err := wf.Run(t.Context(), client)
	if err != nil {
		t.Fatal(err)
	}
	os.Stdout.WriteString("published " + string(out.Outputs["publish"]) + "\n")
}

// TestCrashResumesEachStepOnce SIGKILLs the workflow process while its
// second step is in flight, starts it again with the same run id, and
// checks that every step completed exactly once: the journaled first step
// is not dispatched again, the killed step completes on the resumed run.
func TestCrashResumesEachStepOnce(t *testing.T) {
	// On a real server (LASER_IGGY_ADDR) the test gets a fresh stream of
	// its own; the test server is its own anyway.
	var addr string
	if os.Getenv(featuretest.RealServerEnv) != "" {
		addr = featuretest.RealServerAddr(t)
	} else {
		addr = "iggy://iggy:iggy@" + iggytest.Start(t, iggytest.Config{}).Addr() + "/workflow_crash"
	}
	w := featuretest.NewWorkflowWorld(featuretest.NewWorld(t, featuretest.Dial(t, addr)))
	var (
		once    sync.Once
		inEdit  = make(chan struct{})
		killed  = make(chan struct{})
		edits   int
		editsMu sync.Mutex
	)
	w.Worker("drafter", "", nil)
	w.Worker("publisher", "", nil)
	w.Worker("editor", "", func(body string) (string, bool) {
		editsMu.Lock()
		edits++
		first := edits == 1
		editsMu.Unlock()
		if first {
			once.Do(func() { close(inEdit) })
			<-killed // the asker is gone: this answer would reach no one
			return "", false
		}
		return "editor(" + body + ")", true
	})
	run := w.Client.IDs().NewID()
	spawn := func() (*exec.Cmd, *bytes.Buffer) {
		cmd := exec.Command(os.Args[0], "-test.run=^TestCrashChild$", "-test.v")
		cmd.Env = append(os.Environ(), envCrashAddr+"="+addr, envCrashRun+"="+run.String(),
			envCrashTops+"="+strings.Join([]string{w.Inbox, w.Replies, w.Journal}, ","))
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		return cmd, &out
	}

	first, _ := spawn()
	select {
	case <-inEdit:
	case <-time.After(time.Minute):
		_ = first.Process.Kill()
		t.Fatal("the workflow process never dispatched its second step")
	}
	_ = first.Process.Signal(syscall.SIGKILL)
	_ = first.Wait()
	close(killed)

	second, out := spawn()
	if err := second.Wait(); err != nil {
		t.Fatalf("resumed run: %v\n%s", err, out)
	}
	if !strings.Contains(out.String(), "published publisher(editor(drafter(draft)))") {
		t.Fatalf("resumed run did not finish the workflow:\n%s", out)
	}
	if got := w.Handled("drafter"); len(got) != 1 {
		t.Fatalf("the journaled step was dispatched %d times, want once", len(got))
	}
	if got := w.Handled("publisher"); len(got) != 1 {
		t.Fatalf("the last step was dispatched %d times, want once", len(got))
	}
	// The journal records each step completed exactly once.
	if got := journalLabels(t, w); !slices.Equal(got, []string{"draft", "edit", "publish"}) {
		t.Fatalf("journal records %v, want each step once", got)
	}
}

func journalLabels(t *testing.T, w *featuretest.WorkflowWorld) []string {
	t.Helper()
	parts, err := w.Tr.Partitions(w.Ctx, w.Journal)
	if err != nil {
		t.Fatal(err)
	}
	var labels []string
	for p := uint32(0); p < parts; p++ {
		recs, err := w.Tr.ReadRange(w.Ctx, w.Journal, p, 0, 100)
		if err != nil {
			t.Fatal(err)
		}
		for i := range recs {
			m, err := runtime.DecodeRecord(w.Journal, &recs[i], 0)
			if err != nil || m.Operation() != workflow.OperationStepCompleted {
				continue
			}
			var e struct {
				Label string `cbor:"label"`
			}
			if err := cbor.Unmarshal(m.Body(), &e); err != nil {
				t.Fatal(err)
			}
			labels = append(labels, e.Label)
		}
	}
	slices.Sort(labels)
	return labels
}
