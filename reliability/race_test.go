//go:build race

package reliability_test

// raceEnabled says the test binary runs under the race detector, so the
// processes it builds are built with it too (sharing the compiled packages).
const raceEnabled = true
