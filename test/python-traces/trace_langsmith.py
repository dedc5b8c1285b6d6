"""Traces a small LangChain-style app into Graphdock with PyPI's langsmith (@traceable), then
reads it back with the same SDK. Prints the root run id; exits non-zero on a mismatch."""

import os
import sys
import uuid

from langsmith import Client, traceable

project = os.environ["LANGSMITH_PROJECT"]
thread_id = os.environ["THREAD_ID"]
client = Client()


@traceable(run_type="llm", name="fake-llm")
def llm(prompt: str) -> dict:
    return {
        "output": f"echo: {prompt}",
        "usage_metadata": {"input_tokens": 7, "output_tokens": 5, "total_tokens": 12},
    }


@traceable(run_type="tool", name="lookup")
def lookup(q: str) -> str:
    return q.upper()


@traceable(run_type="chain", name="py-app")
def app(question: str) -> str:
    found = lookup(question)
    return llm(found)["output"]


root_id = uuid.uuid4()
app(
    "hello",
    langsmith_extra={
        "run_id": root_id,
        "metadata": {"thread_id": thread_id},
        "project_name": project,
        "client": client,
    },
)
client.flush()

root = client.read_run(str(root_id))
assert root.name == "py-app", root
assert root.outputs == {"output": "echo: HELLO"}, root.outputs
runs = list(client.list_runs(project_name=project, trace_id=str(root_id)))
names = sorted(r.name for r in runs)
assert names == ["fake-llm", "lookup", "py-app"], names
assert root.extra["metadata"]["thread_id"] == thread_id, root.extra
llm_run = next(r for r in runs if r.name == "fake-llm")
assert llm_run.total_tokens == 12, llm_run.total_tokens
assert str(llm_run.trace_id) == str(root_id)
print(root_id)
sys.exit(0)
