"""One ingest generator of bench/traces/run.ts in Python: PyPI's langsmith RunTree and Client
(its background batching, as /info advertises) send traces of the same shape as the JS sender's
(a chain root, an llm, a tool and two chain steps, ~0.4 KB inputs and outputs). Warms up, prints
`ready`, sends when a line arrives on stdin, then prints its result as JSON (CPU of the whole
process, its sending thread included)."""

import json
import sys
import time

from langsmith import Client, RunTree

endpoint, key, traces = sys.argv[1], sys.argv[2], int(sys.argv[3])
durations = []


def timed(response, *args, **kwargs):
    if response.request.url.endswith(("/runs/batch", "/runs/multipart")):
        durations.append(response.elapsed.total_seconds() * 1000)


client = Client(api_url=endpoint, api_key=key)
client.session.hooks["response"].append(timed)
big = {"messages": [{"role": "user", "content": "x" * 400}]}
CHILDREN = [("model", "llm"), ("tool", "tool"), ("step1", "chain"), ("step2", "chain")]


def send(count):
    for t in range(count):
        root = RunTree(
            name="app",
            run_type="chain",
            inputs=big,
            ls_client=client,
            project_name="bench",
            extra={"metadata": {"thread_id": f"t{t % 100}"}},
        )
        root.post()
        for name, run_type in CHILDREN:
            child = root.create_child(name=name, run_type=run_type, inputs=big)
            child.post()
            outputs = (
                {"usage_metadata": {"input_tokens": 10, "output_tokens": 5, "total_tokens": 15}, **big}
                if run_type == "llm"
                else big
            )
            child.end(outputs=outputs)
            child.patch()
        root.end(outputs=big)
        root.patch()
    client.flush()


send(100)
durations.clear()
print("ready", flush=True)
sys.stdin.readline()
cpu0, wall0 = time.process_time(), time.perf_counter()
send(traces)
seconds = time.perf_counter() - wall0
cpu_ms = (time.process_time() - cpu0) * 1000
ordered = sorted(durations)
q = lambda p: round(ordered[min(len(ordered) - 1, int(p * len(ordered)))]) if ordered else 0
print(
    json.dumps(
        {
            "runs": traces * 5,
            "seconds": round(seconds, 2),
            "runsPerSecond": round(traces * 5 / seconds),
            "batches": len(durations),
            "flushP50Ms": q(0.5),
            "flushP99Ms": q(0.99),
            "cpuMs": cpu_ms,
        }
    ),
    flush=True,
)
