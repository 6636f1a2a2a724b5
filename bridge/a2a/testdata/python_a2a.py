# Drives the A2A bridge with the Python A2A SDK (a2a-sdk 1.x, speaking to
# the bridge's 0.3 card through its compatibility transport) and prints what
# it saw as JSON, for clients_test.go to check.
import asyncio
import json
import sys
import uuid

from google.protobuf import json_format, struct_pb2

from a2a.client import ClientConfig, create_client
from a2a.types import a2a_pb2 as pb


def message(skill, data=None, text=None):
    part = pb.Part(text=text) if text is not None else pb.Part(data=json_format.ParseDict(data, struct_pb2.Value()))
    md = struct_pb2.Struct()
    md.update({"skill": skill})
    return pb.Message(message_id=str(uuid.uuid4()), role=pb.ROLE_USER, parts=[part], metadata=md)


def as_dict(m):
    return json_format.MessageToDict(m)


async def collect(client, request):
    events = []
    async for ev in client.send_message(request):
        events.append(as_dict(ev))
    return events


async def error_of(coro):
    try:
        await coro
    except Exception as e:  # the SDK's errors carry the server's message
        return str(e)
    return ""


async def main(url):
    out = {}
    blocking = await create_client(url, ClientConfig(streaming=False))
    streaming = await create_client(url, ClientConfig(streaming=True))
    out["blocking"] = await collect(blocking, pb.SendMessageRequest(message=message("quote", {"sku": "ink", "qty": 2})))
    out["stream"] = await collect(streaming, pb.SendMessageRequest(message=message("quote", {"sku": "ink", "qty": 2})))
    out["failed"] = await collect(blocking, pb.SendMessageRequest(message=message("quote", {"sku": "ink", "qty": 0})))
    out["unknown_skill"] = await error_of(collect(blocking, pb.SendMessageRequest(message=message("refund", {}))))
    out["oversized"] = await error_of(collect(blocking, pb.SendMessageRequest(message=message("quote", text="x" * (2 << 20)))))
    submitted = await collect(blocking, pb.SendMessageRequest(
        message=message("order", {"sku": "ink", "qty": 1}),
        configuration=pb.SendMessageConfiguration(return_immediately=True)))
    out["submitted"] = submitted
    task = submitted[-1]["task"]
    out["cancel_without_token"] = await error_of(blocking.cancel_task(pb.CancelTaskRequest(id=task["id"])))
    md = struct_pb2.Struct()
    md.update({"cancelToken": task.get("metadata", {}).get("cancelToken", "")})
    out["canceled"] = as_dict(await blocking.cancel_task(pb.CancelTaskRequest(id=task["id"], metadata=md)))
    out["got"] = as_dict(await blocking.get_task(pb.GetTaskRequest(id=task["id"])))
    await blocking.close()
    await streaming.close()
    print(json.dumps(out))


asyncio.run(main(sys.argv[1]))
