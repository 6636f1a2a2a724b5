// Package interop holds laser-go's cross-SDK suite: tests (TestCrossSDK…)
// that run the reference's own Python SDK (laser-sdk on PyPI) and laser-go
// agents on one log over Iggy's VSR protocol, and the Go agents they use.
//
// The Python side is testdata/peer.py, run with the interpreter named by
// LASER_PYTHON (default python3). Without Python or laser_sdk the suite
// skips, and fails when CI is set. It runs on the in-process test server,
// or on the real server named by LASER_IGGY_VSR_ADDR. docs/interop.md says
// how a Go agent joins a fleet of reference agents.
package interop
