// Package laser is the root of laser-go, a framework for reliable, typed
// agents that talk through a persistent log: Apache Iggy in production, an
// embedded in-process log in development. It holds no code; start here:
//
//   - README.md: install (until a release is tagged, a replace to a clone),
//     the five-minute tour, the annotations, errors and dead letters.
//   - Package runtime: the reliable consumer, agents, the handler context
//     (runtime.Ctx), request/reply and streams. Package embedlog is the
//     embedded log, package iggy the Apache Iggy transport.
//   - Command lasergen (cmd/lasergen, run by go generate): turns
//     //laser:agent, //laser:handle and //laser:event annotations into
//     typed handlers and clients; package gen documents the directives.
//   - Package lasertest: unit-test one handler without a log.
//   - Packages conversation and memory: read a conversation back, keep
//     agent memory on the log. Packages registry, fanout, humaninput and
//     workflow: coordination between agents.
//   - Packages wire and sign: the AGDX wire format and envelope signatures.
//   - Command laser (cmd/laser): the operator tool (dead letters, tail,
//     approvals, a development server).
//
// The guides in the repository's docs/ folder cover each capability in
// depth: agents.md, lasergen.md, guarantees.md, streaming-guide.md,
// conversation.md, coordination.md, operations.md, performance.md and more.
package laser
