"""Drives the reference's Python SDK (laser_sdk) against an Iggy server over
the VSR framing, for TestVSRServesTheReferencePythonSDK.

Usage: vsr_python_sdk.py HOST:PORT TOKEN STREAM TOPIC GROUP COUNT

It logs in with a password, ensures STREAM and TOPIC (one partition),
publishes COUNT records with headers, polls them back as a single consumer,
reads them as a member of consumer group GROUP, stores and reads the group's
offset, then logs in again with the personal access token TOKEN. It prints
one JSON object with what it saw; any failure raises and exits non-zero.
"""

import asyncio
import json
import sys

import laser_sdk


async def read(consumer, count):
    out = []
    while len(out) < count:
        msg = await consumer.next_within(5000)
        if msg is None:
            raise RuntimeError(f"polled {len(out)} of {count} records before the wait ran out")
        out.append(msg)
    return out


def describe(msg):
    return {
        "offset": msg.position.offset,
        "partition": msg.partition_id,
        "payload": msg.payload.decode(),
        "headers": {k: (v.decode() if isinstance(v, bytes) else v) for k, v in msg.headers.items()},
    }


async def main():
    addr, token, stream_name, topic_name, group_name, count = sys.argv[1:7]
    count = int(count)
    laser = await laser_sdk.Laser.connect(f"iggy://iggy:iggy@{addr}", connect_timeout_ms=5000)
    stream = laser.stream(stream_name)
    await stream.ensure()
    topic = stream.topic(topic_name)
    await topic.ensure(1)

    for i in range(count):
        await topic.send(f"record-{i}".encode(), headers={"seq": str(i), "origin": "python"})

    single = topic.consumer("py-reader", partition=0, polling="first", auto_commit="disabled")
    await single.init()
    polled = [describe(m) for m in await read(single, count)]
    await single.shutdown()

    group = topic.consumer_group(group_name)
    member = group.consumer(polling="first", auto_commit="disabled")
    await member.init()
    grouped = [describe(m) for m in await read(member, count)]
    stored_at = count - 2
    await member.store_offset(stored_at, partition=0)
    stored = await member.stored_offset(0)
    await member.shutdown()
    await laser.close()

    by_token = await laser_sdk.Laser.connect(f"iggy://{token}@{addr}", connect_timeout_ms=5000)
    await by_token.stream(stream_name).ensure()
    await by_token.close()

    print(json.dumps({
        "polled": polled,
        "group": grouped,
        "stored_offset": stored.stored_offset,
        "token_login": True,
    }))


asyncio.run(main())
