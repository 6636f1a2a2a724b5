package reliability_test

import (
	"errors"
	"os"
	"path/filepath"
	"sort"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/lasergo/laser/internal/reliability"
)

func TestEffectStoreAppliesAKeyOnce(t *testing.T) {
	s, err := reliability.OpenEffectStore(filepath.Join(t.TempDir(), "effects"))
	if err != nil {
		t.Fatal(err)
	}
	applied, err := s.Apply("cmd-1", []byte("first"))
	if err != nil || !applied {
		t.Fatalf("first Apply = %v, %v; want applied", applied, err)
	}
	applied, err = s.Apply("cmd-1", []byte("second"))
	if err != nil || applied {
		t.Fatalf("second Apply = %v, %v; want the duplicate suppressed", applied, err)
	}
	got, err := s.Read("cmd-1")
	if err != nil || string(got) != "first" {
		t.Errorf("effect holds %q (%v), want the first content", got, err)
	}
}

func TestEffectStoreAppliesOnceUnderConcurrentAttempts(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "effects")
	var wins atomic.Int32
	var wg sync.WaitGroup
	for range 16 {
		// A store per goroutine, as separate processes would open it.
		s, err := reliability.OpenEffectStore(dir)
		if err != nil {
			t.Fatal(err)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			applied, err := s.Apply("race", []byte("x"))
			if err != nil {
				t.Error(err)
			}
			if applied {
				wins.Add(1)
			}
		}()
	}
	wg.Wait()
	if wins.Load() != 1 {
		t.Errorf("%d attempts applied the effect, want exactly 1", wins.Load())
	}
}

func TestEffectStoreListsOnlyEffects(t *testing.T) {
	s, err := reliability.OpenEffectStore(filepath.Join(t.TempDir(), "effects"))
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"b", "a", "c.d_e-f"} {
		if _, err := s.Apply(k, []byte(k)); err != nil {
			t.Fatal(err)
		}
	}
	// A staging file left by a killed process is not an effect.
	if err := os.WriteFile(filepath.Join(s.Dir(), ".staging", "effect-123"), []byte("half"), 0o644); err != nil {
		t.Fatal(err)
	}
	keys, err := s.Keys()
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(keys)
	if len(keys) != 3 || keys[0] != "a" || keys[1] != "b" || keys[2] != "c.d_e-f" {
		t.Errorf("Keys = %v", keys)
	}
	if n, err := s.Count(); err != nil || n != 3 {
		t.Errorf("Count = %d, %v", n, err)
	}
}

func TestEffectStoreRefusesKeysThatAreNotFileNames(t *testing.T) {
	s, err := reliability.OpenEffectStore(filepath.Join(t.TempDir(), "effects"))
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"", ".staging", "..", "a/b", "k\x00", "ü", string(make([]byte, 129))} {
		if _, err := s.Apply(k, nil); !errors.Is(err, reliability.ErrBadKey) {
			t.Errorf("Apply(%q) error = %v, want ErrBadKey", k, err)
		}
	}
}

func TestEventLogTalliesEveryIncarnation(t *testing.T) {
	path := filepath.Join(t.TempDir(), "events.log")
	for range 2 { // two incarnations append to one log
		l, err := reliability.OpenEventLog(path)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range [][2]string{{reliability.EventApplied, "k1"}, {reliability.EventDuplicate, "k1"}} {
			if err := l.Record(e[0], e[1]); err != nil {
				t.Fatal(err)
			}
		}
		if err := l.Close(); err != nil {
			t.Fatal(err)
		}
	}
	c, err := reliability.ReadEvents(path)
	if err != nil {
		t.Fatal(err)
	}
	if c.Total[reliability.EventApplied] != 2 || c.ByKey[reliability.EventDuplicate]["k1"] != 2 {
		t.Errorf("tally %+v", c)
	}
	if empty, err := reliability.ReadEvents(filepath.Join(t.TempDir(), "missing")); err != nil || len(empty.Total) != 0 {
		t.Errorf("a missing log reads as %+v, %v", empty, err)
	}
}

func TestEventLogRefusesLinesItCouldNotReadBack(t *testing.T) {
	l, err := reliability.OpenEventLog(filepath.Join(t.TempDir(), "events.log"))
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	for _, kv := range [][2]string{{"a b", "k"}, {"a", "k\nx"}} {
		if err := l.Record(kv[0], kv[1]); err == nil {
			t.Errorf("Record(%q, %q) succeeded", kv[0], kv[1])
		}
	}
}

func TestReadEventsRejectsAMalformedLine(t *testing.T) {
	path := filepath.Join(t.TempDir(), "events.log")
	if err := os.WriteFile(path, []byte("applied k\nbroken\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := reliability.ReadEvents(path); err == nil {
		t.Error("a malformed line was accepted")
	}
}

func TestPlanIsReproducibleFromItsSeed(t *testing.T) {
	a, err := reliability.NewPlan(42, 500)
	if err != nil {
		t.Fatal(err)
	}
	b, err := reliability.NewPlan(42, 500)
	if err != nil {
		t.Fatal(err)
	}
	for i := range a.Commands {
		if a.Commands[i].Kind != b.Commands[i].Kind || string(a.Commands[i].Record.Payload) != string(b.Commands[i].Record.Payload) {
			t.Fatalf("command %d differs between two plans of one seed", i)
		}
	}
	for _, k := range []reliability.Kind{reliability.Rejected, reliability.Failing, reliability.Undecodable} {
		if a.Count(k) == 0 {
			t.Errorf("a 500-command plan has no %s command", k)
		}
	}
	if a.Poison()+a.Count(reliability.Normal) != 500 {
		t.Error("poison and normal do not add up")
	}
}
