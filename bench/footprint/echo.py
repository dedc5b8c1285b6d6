# The echo graph of examples/graphs/echo.ts for the Python servers: replies with the text of the
# last message. No model, no network.
from langchain_core.messages import AIMessage
from langgraph.graph import END, START, MessagesState, StateGraph


def _text(content):
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(str(p.get("text", "")) for p in content if isinstance(p, dict))
    return str(content)


def echo(state: MessagesState):
    last = state["messages"][-1] if state["messages"] else None
    return {"messages": [AIMessage(content=f"echo: {_text(last.content) if last else ''}")]}


graph = StateGraph(MessagesState).add_node("echo", echo).add_edge(START, "echo").add_edge("echo", END).compile()
