# Drives the A2A bridge with the Python A2A SDK speaking A2A 1.0 (its own
# protocol: SendMessage, GetTask, ... over proto JSON) and prints what it saw
# as JSON, for clients_test.go to check.
import asyncio
import json
import sys
import uuid

from google.protobuf import json_format, struct_pb2

from a2a.client import ClientConfig, create_client
from a2a.types import a2a_pb2 as pb


def message(skill, data):
    md = struct_pb2.Struct()
    md.update({"skill": skill})
    part = pb.Part(data=json_format.ParseDict(data, struct_pb2.Value()))
    return pb.Message(message_id=str(uuid.uuid4()), role=pb.ROLE_USER, parts=[part], metadata=md)


async def collect(client, request):
    return [json_format.MessageToDict(ev) for ev in [e async for e in client.send_message(request)]]


async def main(url):
    card = pb.AgentCard(
        name="desk", description="desk", version="1",
        supported_interfaces=[pb.AgentInterface(url=url, protocol_binding="JSONRPC", protocol_version="1.0")],
        capabilities=pb.AgentCapabilities(streaming=True),
    )
    out = {}
    blocking = await create_client(card, ClientConfig(streaming=False))
    streaming = await create_client(card, ClientConfig(streaming=True))
    out["blocking"] = await collect(blocking, pb.SendMessageRequest(message=message("quote", {"sku": "ink", "qty": 2})))
    out["stream"] = await collect(streaming, pb.SendMessageRequest(message=message("quote", {"sku": "ink", "qty": 2})))
    out["failed"] = await collect(blocking, pb.SendMessageRequest(message=message("quote", {"sku": "ink", "qty": 0})))
    try:
        await collect(blocking, pb.SendMessageRequest(message=message("refund", {})))
        out["unknown_skill"] = ""
    except Exception as e:
        out["unknown_skill"] = str(e)
    submitted = await collect(blocking, pb.SendMessageRequest(
        message=message("order", {"sku": "ink", "qty": 1}),
        configuration=pb.SendMessageConfiguration(return_immediately=True)))
    task = submitted[-1]["task"]
    md = struct_pb2.Struct()
    md.update({"cancelToken": task.get("metadata", {}).get("cancelToken", "")})
    out["canceled"] = json_format.MessageToDict(await blocking.cancel_task(pb.CancelTaskRequest(id=task["id"], metadata=md)))
    out["got"] = json_format.MessageToDict(await blocking.get_task(pb.GetTaskRequest(id=task["id"])))
    await blocking.close()
    await streaming.close()
    print(json.dumps(out))


asyncio.run(main(sys.argv[1]))
