//go:build !race

package reliability_test

// raceEnabled says the test binary runs under the race detector.
const raceEnabled = false
