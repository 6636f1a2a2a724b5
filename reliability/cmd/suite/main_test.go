package main

import "testing"

func TestDeadlineRaceIsTheCoordinatorsDeadlineOnly(t *testing.T) {
	race := "fuzz: elapsed: 21s, execs: 513428 (0/sec), new interesting: 63 (total: 78)\n--- FAIL: FuzzDecodeProvenance (21.07s)\n    context deadline exceeded\nFAIL\nexit status 1\n"
	if !deadlineRace([]byte(race)) {
		t.Error("the coordinator's deadline failure is not recognised")
	}
	for name, out := range map[string]string{
		"a finding":                "--- FAIL: FuzzX (3.10s)\n    --- FAIL: FuzzX (0.00s)\n        x_test.go:9: boom\n\n    Failing input written to testdata/fuzz/FuzzX/abc\n    To re-run:\n    go test -run=FuzzX/abc\nFAIL\n",
		"a finding that times out": "--- FAIL: FuzzX (3.10s)\n    context deadline exceeded\n    Failing input written to testdata/fuzz/FuzzX/abc\nFAIL\n",
		"a panic":                  "--- FAIL: FuzzX (0.20s)\n    panic: index out of range\nFAIL\n",
	} {
		if deadlineRace([]byte(out)) {
			t.Errorf("%s is taken for the deadline race", name)
		}
	}
}
