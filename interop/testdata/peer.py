"""A reference (Python laser-sdk) agent driven by laser-go's cross-SDK tests.

It connects to the server named by argv[1] (user:password@host:port) on the
stream argv[2], prints {"event": "ready"} and then reads one JSON command a
line on stdin, answering each with one JSON line on stdout carrying the
command's "id" ("ok": true with the result, or "ok": false with "error").
What its agents see is reported as lines with an "event" key. The test owns
the process: it ends when stdin closes.
"""

import asyncio
import json
import sys
import traceback

import laser_sdk as ls

DLQ = "agent.dlq"


def emit(obj):
    sys.stdout.write(json.dumps(obj, sort_keys=True) + "\n")
    sys.stdout.flush()


def text(b):
    return bytes(b).decode("utf-8", "replace")


def plain(value):
    """A JSON-shaped copy of a decoded CBOR value: bytes become hex."""
    if isinstance(value, (bytes, bytearray)):
        return {"hex": bytes(value).hex()}
    if isinstance(value, dict):
        return {str(k): plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value]
    return value


CROCKFORD = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"


def id_hex(value):
    """An AGDX id (16 bytes, or its 26-character ULID text) as 32 hex digits."""
    if isinstance(value, (bytes, bytearray)):
        return bytes(value).hex()
    n = 0
    for ch in str(value).upper():
        n = n * 32 + CROCKFORD.index(ch)
    return n.to_bytes(16, "big").hex()


def id_text(value):
    """An AGDX id (16 bytes, or already text) as its 26-character ULID text."""
    if not isinstance(value, (bytes, bytearray)):
        return str(value)
    n = int.from_bytes(bytes(value), "big")
    return "".join(CROCKFORD[(n >> (5 * i)) & 31] for i in reversed(range(26)))


def key_of(seed_hex):
    return ls.SigningKey(bytes.fromhex(seed_hex))


def registry_of(enroll):
    """A KeyRegistry enrolling {principal: verifying key hex}."""
    keys = ls.KeyRegistry()
    for principal, key in enroll.items():
        keys.enroll(principal, bytes.fromhex(key))
    return keys


def envelope_summary(env):
    if env is None:
        return None
    out = {}
    for k in ("kind", "operation", "source", "target", "correlation", "record", "content_type"):
        if k in env and env[k] is not None:
            v = env[k]
            out[k] = v if isinstance(v, (str, int)) else plain(v)
    return out


class DirStore:
    """A blob store laid out as laser-go's blob.Dir: a body is the file
    named by the lowercase hex of its SHA-256, which is its reference."""

    def __init__(self, root):
        self.root = root

    async def put(self, payload):
        import hashlib, os
        payload = bytes(payload)
        ref = hashlib.sha256(payload).hexdigest()
        with open(os.path.join(self.root, ref), "wb") as f:
            f.write(payload)
        return ref

    async def get(self, reference):
        import os
        with open(os.path.join(self.root, reference), "rb") as f:
            return f.read()


class Peer:
    def __init__(self, laser):
        self.laser = laser
        self.agents = {}

    async def serve(self, cmd):
        agent = cmd["agent"]
        behaviour = cmd.get("behaviour", "upper")
        respond = cmd.get("respond")

        async def handle(ctx, message):
            body = text(message.body())
            env = message.envelope
            emit({
                "event": "handled",
                "agent": agent,
                "body": body,
                "envelope": envelope_summary(env),
                "verified": message.verified_principal,
                "conversation": message.provenance.conversation_id,
            })
            if behaviour == "poison" and body == "poison":
                raise ValueError("poison record refused by the reference agent")
            if behaviour == "upper":
                answer = json.loads(body)
                answer["text"] = answer.get("text", "").upper()
                await ctx.respond(json.dumps(answer).encode())
            elif behaviour == "stream":
                corr = env["correlation"] if env else message.provenance.correlation_id
                producer = ctx.laser().agdx(respond, agent, message.provenance.conversation_id)
                writer = producer.stream(id_text(corr), "chat")
                target = env.get("source") if env else None
                if target:
                    writer = writer.with_target(target)
                for word in json.loads(body)["words"]:
                    await writer.write(word.encode())
                await writer.finish()

        def on_dead_letter(message, capsule, publish_error):
            emit({
                "event": "dead_letter",
                "agent": agent,
                "capsule": plain(capsule),
                "publish_error": None if publish_error is None else str(publish_error),
            })

        kwargs = dict(respond_on=respond, dead_letter=on_dead_letter)
        if "retry_max_attempts" in cmd:
            kwargs["retry_max_attempts"] = cmd["retry_max_attempts"]
            kwargs["retry_base_delay_ms"] = 1
        if cmd.get("signing_seed"):
            kwargs["signing_key"] = key_of(cmd["signing_seed"])
        if cmd.get("verify"):
            kwargs["verifier"] = registry_of(cmd["verify"])
        if cmd.get("capabilities"):
            kwargs["capabilities"] = cmd["capabilities"]
        handle_ = self.laser.spawn_agent(agent, cmd["listen"], handle, **kwargs)
        await handle_.ready()
        self.agents[agent] = handle_
        return {}

    async def contract(self, cmd):
        result = await self.laser.contract(
            None,
            cmd["body"].encode(),
            source=cmd["source"],
            agent=cmd["agent"],
            fixed_inbox=cmd["inbox"],
            reply_on=cmd["reply_on"],
            deadline_ms=cmd.get("deadline_ms", 20000),
        )
        state = type(result).__name__
        out = {"state": state}
        if isinstance(result, (ls.Contract.Completed, ls.Contract.Failed)):
            reply = result._0
            out["body"] = text(reply.body())
            out["envelope"] = envelope_summary(reply.envelope)
        return out

    async def publish(self, cmd):
        key = key_of(cmd["signing_seed"]) if cmd.get("signing_seed") else None
        producer = self.laser.agdx(cmd["topic"], cmd["source"], cmd["conversation"], signing_key=key)
        kind = cmd.get("kind", "command")
        opts = {}
        if cmd.get("operation"):
            opts["operation"] = cmd["operation"]
        if cmd.get("target"):
            opts["target"] = cmd["target"]
        if cmd.get("content_type"):
            opts["content_type"] = cmd["content_type"]
        body = cmd["body"].encode()
        corr = ls.mint_ulid()
        if kind == "command":
            record = await producer.command(corr, body, **opts)
        else:
            record = await producer.emit(body, **opts)
        return {"record": record if isinstance(record, str) else str(record), "correlation": corr}

    async def read_chunks(self, cmd):
        """Assemble the chunk stream answering correlation on topic."""
        topic = cmd["topic"]
        corr = id_hex(cmd["correlation"])
        assembler = ls.ChunkAssembler()
        words = []
        done = None
        cursor = self.laser.topic(topic).replay()  # each pass resumes where the last ended
        while done is None:
            async for m in cursor:
                try:
                    env = ls.Cbor.decode(bytes(m.payload))
                except Exception:  # a plain record on the topic
                    continue
                if not isinstance(env, dict) or env.get("kind") not in ("chunk", "error"):
                    continue
                if env.get("correlation") is None or id_hex(env["correlation"]) != corr:
                    continue
                for ev in assembler.feed(bytes(m.payload)):
                    if ev["kind"] == "body":
                        words.append(text(ev["payload"]))
                    else:
                        done = ev["kind"]
            if done is None:
                await asyncio.sleep(0.05)
        return {"text": "".join(words), "terminal": done}

    async def read_dlq(self, cmd):
        capsules = []
        async for m in self.laser.topic(DLQ).replay():
            capsule = ls.Cbor.decode(bytes(m.payload))
            payload = bytes(capsule.get("payload", b""))
            original = None
            try:
                original = ls.Cbor.decode(payload)
            except Exception:  # a plain (non-AGDX) poison record
                original = None
            capsules.append({
                "capsule": plain(capsule),
                "original": envelope_summary(original) if isinstance(original, dict) else None,
                "original_body": text(original["body"]) if isinstance(original, dict) and isinstance(original.get("body"), (bytes, bytearray)) else None,
                "headers": m.headers,
                "partition": m.id.partition_id,
            })
        return {"capsules": capsules}

    async def read_headers(self, cmd):
        """The typed headers and envelope of every record on a topic."""
        out = []
        async for m in self.laser.topic(cmd["topic"]).replay():
            try:
                env = ls.Cbor.decode(bytes(m.payload))
            except Exception:  # a plain record
                env = None
            out.append({
                "partition": m.id.partition_id,
                "headers": {k: plain(v) for k, v in m.headers.items()},
                "envelope": envelope_summary(env) if isinstance(env, dict) else None,
                "body": text(m.payload) if not isinstance(env, dict) else None,
            })
        return {"records": out}

    async def governed_emit(self, cmd):
        """Emit events through a governed handle whose governor observes
        each (so every decision is recorded on agent.audit), optionally
        signing them, and return the records."""
        class Observer:
            async def decide(self, action):
                return ls.ActionDecision.observe().with_reason(cmd.get("reason", "observed"))

        key = key_of(cmd["signing_seed"]) if cmd.get("signing_seed") else None
        governed = self.laser.with_governor(Observer(), cmd.get("mode", "enforce"))
        producer = governed.agdx(cmd["topic"], cmd["source"], cmd["conversation"], signing_key=key)
        records = []
        for body in cmd["bodies"]:
            records.append(str(await producer.emit(body.encode())))
        return {"records": records}

    async def decode_evidence(self, cmd):
        """Decode evidence bodies (hex) with the reference's PolicyEvidence."""
        out = []
        for body in cmd["bodies"]:
            ev = ls.PolicyEvidence.decode(bytes.fromhex(body))
            out.append({k: getattr(ev, k) for k in (
                "decision_id", "decision", "mode", "kind", "stream", "topic", "source", "target",
                "conversation", "reason", "receipt_digest", "previous_digest", "outcome", "at_micros")})
        return {"evidence": out}

    async def blob_emit(self, cmd):
        """Emit a body claim-checked through a DirStore over cmd["dir"]."""
        producer = self.laser.agdx(cmd["topic"], cmd["source"], cmd["conversation"])
        record = await producer.emit(cmd["body"].encode(), claim_check=(DirStore(cmd["dir"]), cmd["threshold"]))
        return {"record": str(record)}

    async def blob_resolve(self, cmd):
        """Resolve the claim-checked bodies on a topic with the reference's
        resolve_body through a DirStore over cmd["dir"]."""
        store = DirStore(cmd["dir"])
        out = []
        async for m in self.laser.topic(cmd["topic"]).replay():
            try:
                env = ls.Cbor.decode(bytes(m.payload))
            except Exception:
                continue
            if not isinstance(env, dict) or not isinstance(env.get("body"), (bytes, bytearray)):
                continue
            entry = {"record": envelope_summary(env).get("record")}
            try:
                entry["body"] = text(bytes(await ls.resolve_body(store, bytes(env["body"]))))
            except Exception as exc:  # not a capsule, or refused
                entry["error"] = f"{type(exc).__name__}: {exc}"
            out.append(entry)
        return {"records": out}

    def _memory(self, cmd):
        mems = getattr(self, "_memories", None)
        if mems is None:
            mems = self._memories = {}
        ns = cmd.get("namespace")  # none: LogMemory on its default topic and namespace
        if ns not in mems:  # one handle per namespace, so folded recall is incremental
            mems[ns] = self.laser.memory(ns) if ns else ls.LogMemory(self.laser)
        return mems[ns]

    def _scope(self, cmd):
        return {k: cmd[k] for k in ("agent", "conversation") if cmd.get(k)}

    async def memory_remember(self, cmd):
        mid = await self._memory(cmd).remember(cmd["body"], **self._scope(cmd))
        return {"memory_id": str(mid)}

    async def memory_forget(self, cmd):
        await self._memory(cmd).forget(cmd["memory_id"], **self._scope(cmd))
        return {}

    async def memory_improve(self, cmd):
        fid = await self._memory(cmd).improve(cmd["memory_id"], cmd["weight"], **self._scope(cmd))
        return {"feedback_id": str(fid)}

    async def memory_recall(self, cmd):
        items = await self._memory(cmd).recall(folded=True, limit=cmd.get("limit", 50), **self._scope(cmd))
        out = []
        for item in items:
            out.append({"memory_id": str(item.id), "body": text(item.payload)})
        return {"items": out}

    async def assemble(self, cmd):
        msgs = await self.laser.assemble_context(cmd["conversation"], topics=cmd["topics"], last_n=cmd.get("last_n", 50))
        out = []
        for m in msgs:
            env = m.envelope
            out.append({
                "topic": m.topic,
                "partition": m.id.partition_id,
                "offset": m.id.offset,
                "record": envelope_summary(env).get("record") if env else None,
                "source": m.provenance.agent,
                "body": text(env["body"]) if env and isinstance(env.get("body"), (bytes, bytearray)) else text(m.payload),
            })
        return {"messages": out}

    async def registry(self, cmd):
        reg = self.laser.agent_registry()
        await reg.refresh()
        found = reg.lookup(cmd["agent"])
        resolved = [c.agent for c in reg.resolve(cmd["skill"])] if cmd.get("skill") else []
        return {
            "card": plain(found.card) if found else None,
            "resolved": resolved,
            "agents": [c.agent for c in reg.agents()],
        }

    def _intent_policy(self, policy):
        if policy == "all":
            return ls.IntentPolicy.all()
        if policy == "any":
            return ls.IntentPolicy.any()
        return ls.IntentPolicy.at_least(int(policy["at_least"]))

    async def intent_propose(self, cmd):
        """Build an Intent with the reference's constructor and publish it
        on cmd["topic"] as a typed record (plain JSON)."""
        intent = ls.Intent(cmd["conversation"], cmd["proposer"], cmd["body"].encode(), cmd["voters"],
                           self._intent_policy(cmd["policy"]), cmd["policy_version"], cmd["deadline_micros"],
                           mandatory_voters=cmd.get("mandatory"))
        await self.laser.topic(cmd["topic"]).publish(intent).send()
        return {"intent": intent.__laser_json__()}

    async def _intent_records(self, topic):
        """Every intent and vote on topic, decoded by the reference: AGDX
        events (a JSON body) and typed records (a JSON payload). An intent
        the reference refuses is reported with its error."""
        intents, votes, refused = [], [], []
        async for m in self.laser.topic(topic).replay():
            payload = bytes(m.payload)
            source = None
            try:
                env = ls.Cbor.decode(payload)
            except Exception:  # a typed record
                env = None
            if isinstance(env, dict):
                source = env.get("source")
                payload = bytes(env.get("body") or b"")
            try:
                value = json.loads(payload)
            except Exception:
                continue
            if not isinstance(value, dict):
                continue
            if "eligible_voters" in value:
                try:
                    intents.append(ls.Intent.__laser_from_json__(value))
                except Exception as exc:
                    refused.append({"intent_id": value.get("intent_id"), "error": str(exc)})
            elif "choice" in value:
                vote = ls.Vote.__laser_from_json__(value)
                votes.append((source, vote))
        return intents, votes, refused

    async def intent_read(self, cmd):
        intents, votes, refused = await self._intent_records(cmd["topic"])
        return {"intents": [i.__laser_json__() for i in intents],
                "votes": [dict(v.__laser_json__(), source=s) for s, v in votes],
                "refused": refused}

    async def intent_vote(self, cmd):
        """Cast a vote with Vote.cast on the intent read off the topic, change
        fields when cmd["tamper"] says so, and publish it as an AGDX event
        from the voter (operation vote, JSON body)."""
        intents, _, _ = await self._intent_records(cmd["topic"])
        intent = next(i for i in intents if i.intent_id == cmd["intent_id"])
        vote = ls.Vote.cast(intent, cmd["voter"], cmd["choice"])
        body = vote.__laser_json__()
        body.update(cmd.get("tamper") or {})
        producer = self.laser.agdx(cmd["topic"], cmd["voter"], intent.conversation)
        await producer.emit(json.dumps(body).encode(), operation="vote", content_type="json")
        return {"vote": body}

    async def intent_decide(self, cmd):
        """decide over the intent and the votes on the topic, each vote
        counted only from its own voter's AGDX source (a typed record has none)."""
        intents, votes, _ = await self._intent_records(cmd["topic"])
        intent = next(i for i in intents if i.intent_id == cmd["intent_id"])
        mine = [v for s, v in votes if v.intent_id == intent.intent_id and (s is None or s == v.voter)]
        d = ls.decide(intent, mine, cmd["now_micros"])
        if d is None:
            return {"decision": None}
        return {"decision": {"outcome": d.outcome, "reason": d.reason,
                             "votes_considered": [list(p) for p in d.votes_considered],
                             "authorizes": d.authorizes(intent)}}

    async def run(self, cmd):
        fn = getattr(self, cmd["do"])
        return await fn(cmd)


async def main():
    conn, stream = sys.argv[1], sys.argv[2]
    laser = await ls.Laser.connect(conn, stream=stream, ops_stream=stream, dlq_topic=DLQ)
    peer = Peer(laser)
    emit({"event": "ready", "sdk": getattr(ls, "__version__", "")})
    loop = asyncio.get_running_loop()
    pending = set()
    while True:
        line = await loop.run_in_executor(None, sys.stdin.readline)
        if not line:
            break
        cmd = json.loads(line)

        async def one(cmd=cmd):
            try:
                result = await peer.run(cmd)
                emit({"id": cmd["id"], "ok": True, **(result or {})})
            except Exception as exc:  # reported to the test, which fails with it
                emit({"id": cmd["id"], "ok": False, "error": f"{type(exc).__name__}: {exc}", "trace": traceback.format_exc()})

        task = asyncio.create_task(one())
        pending.add(task)
        task.add_done_callback(pending.discard)
    for h in peer.agents.values():
        h.abort()


if __name__ == "__main__":
    asyncio.run(main())
