// Package conformance runs the reference laser-sdk's cross-SDK Gherkin
// scenarios against laser-go's public API.
//
// The scenarios are the specification: an SDK is conformant when it passes
// them. They are not copied into this repository; the runner reads them at
// test time from the folder named by LASER_BDD_DIR (`make conformance` sets
// it to ../shared/reference-bdd). Without the variable the runner skips, so a
// clone with nothing beside it still passes `make test`.
//
// Each feature's steps live in a file of their own (steps_<feature>_test.go)
// and keep their state per scenario; the table in conformance_test.go says
// which feature is implemented, which waits for an issue, and which is out of
// laser-go's scope. The Background steps most features share (a running
// platform, a fresh stream, a new conversation, reading it back) are
// registered by platformSteps (steps_platform_test.go) on the feature's own
// per-scenario state.
package conformance
