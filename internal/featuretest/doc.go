// Package featuretest is laser-go's own conformance suite for its features:
// it runs the rules of the registry, fan-out, workflows, human input, and
// conversations with memory over every log laser-go ships, so each rule
// holds on the embedded log, on Iggy over the in-process test server, and
// on a real Iggy server.
//
// It is driven from one place: each feature has one entry ([Registry],
// [Fanout], [Workflow], [HumanInput], [Conversation]) taking a maker of
// fresh transports, and each feature package's tests call its entry once
// per transport ([EmbeddedLog], [TestServer], [RealServer]). [Transports]
// lists the same logs for tests that loop over them, and [RealServerAddr]
// is the one place a test is skipped when LASER_IGGY_ADDR is unset.
//
// It is internal because it tests laser-go itself; the kits for users'
// tests are lasertest, runtime/transporttest and iggytest.
package featuretest
