"""Feedback with PyPI's langsmith on a run traced into Graphdock: create_feedback (with and without
the trace id, which batches it with the traces), a presigned token used without a key, then
list_feedback. Prints the run id; exits non-zero on a mismatch."""

import os
import sys
import urllib.request
import uuid

from langsmith import Client, traceable

project = os.environ["LANGSMITH_PROJECT"]
client = Client()


@traceable(run_type="chain", name="rated")
def rated(question: str) -> str:
    return question.upper()


run_id = uuid.uuid4()
rated("rate me", langsmith_extra={"run_id": run_id, "project_name": project, "client": client})
client.flush()

client.create_feedback(run_id, "direct", score=1, comment="by id")
client.create_feedback(run_id, "batched", score=0.5, trace_id=run_id)
client.flush()

token = client.create_presigned_feedback_token(run_id, "thumbs")
assert token.url.endswith(f"/feedback/tokens/{token.id}"), token.url
with urllib.request.urlopen(f"{token.url}?score=1&comment=nice") as response:
    assert response.status == 200, response.status

found = {f.key: f for f in client.list_feedback(run_ids=[run_id])}
assert sorted(found) == ["batched", "direct", "thumbs"], sorted(found)
assert found["direct"].score == 1 and found["direct"].comment == "by id", found["direct"]
assert found["batched"].score == 0.5, found["batched"]
assert found["thumbs"].comment == "nice", found["thumbs"]
print(run_id)
sys.exit(0)
