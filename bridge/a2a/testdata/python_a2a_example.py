# Drives the bridges example's help desk (examples/bridges -serve) with the
# Python A2A SDK (a2a-sdk 1.x) speaking the protocol version given, 0.3 (the
# card the example serves, through the SDK's compatibility transport) or
# 1.0 (its own), and prints what it saw as JSON, for clients_test.go to
# check. Arguments: the example's URL, then the version.
import asyncio
import json
import sys
import uuid

from google.protobuf import json_format, struct_pb2

from a2a.client import ClientConfig, create_client
from a2a.types import a2a_pb2 as pb

TERMINAL = {"TASK_STATE_COMPLETED", "TASK_STATE_FAILED", "TASK_STATE_CANCELED", "TASK_STATE_REJECTED"}


def ticket(skill, text):
    md = struct_pb2.Struct()
    md.update({"skill": skill})
    part = pb.Part(data=json_format.ParseDict({"customer": "ada", "text": text}, struct_pb2.Value()))
    return pb.Message(message_id=str(uuid.uuid4()), role=pb.ROLE_USER, parts=[part], metadata=md)


async def collect(client, request):
    return [json_format.MessageToDict(ev) async for ev in client.send_message(request)]


async def connect(url, version, streaming):
    if version == "0.3":
        return await create_client(url, ClientConfig(streaming=streaming))
    card = pb.AgentCard(
        name="helpdesk", description="helpdesk", version="1",
        supported_interfaces=[pb.AgentInterface(url=url, protocol_binding="JSONRPC", protocol_version="1.0")],
        capabilities=pb.AgentCapabilities(streaming=True),
    )
    return await create_client(card, ClientConfig(streaming=streaming))


async def main(url, version):
    out = {}
    blocking = await connect(url, version, False)
    streaming = await connect(url, version, True)
    # A send that returns at once, then the task read back until it ends.
    submitted = await collect(blocking, pb.SendMessageRequest(
        message=ticket("classify", "the site is down"),
        configuration=pb.SendMessageConfiguration(return_immediately=True)))
    out["submitted"] = submitted
    task = submitted[-1]["task"]
    for _ in range(1000):
        got = json_format.MessageToDict(await blocking.get_task(pb.GetTaskRequest(id=task["id"])))
        if got["status"]["state"] in TERMINAL:
            break
        await asyncio.sleep(0.01)
    out["got"] = got
    out["blocking"] = await collect(blocking, pb.SendMessageRequest(message=ticket("classify", "I was charged twice")))
    out["stream"] = await collect(streaming, pb.SendMessageRequest(message=ticket("reply", "the site is down")))
    out["failed"] = await collect(blocking, pb.SendMessageRequest(message=ticket("classify", " ")))
    await blocking.close()
    await streaming.close()
    print(json.dumps(out))


asyncio.run(main(sys.argv[1], sys.argv[2]))
