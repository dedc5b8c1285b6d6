"""Shared fixtures: a synchronous official client pointed at GRAPHDOCK_URL."""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator

import pytest
from langgraph_sdk import get_sync_client
from langgraph_sdk.client import SyncLangGraphClient


@pytest.fixture(scope="session")
def base_url() -> str:
    url = os.environ.get("GRAPHDOCK_URL")
    if not url:
        pytest.fail("GRAPHDOCK_URL must point at a running Graphdock server")
    return url


@pytest.fixture(scope="session")
def client(base_url: str) -> Iterator[SyncLangGraphClient]:
    # api_key=None: never pick up a LangSmith key from the environment.
    with get_sync_client(url=base_url, api_key=None, timeout=30.0) as sdk:
        yield sdk


@pytest.fixture
def tag() -> str:
    """A value unique to one test, used in metadata so searches see only that test's rows."""
    return f"py-sdk-{uuid.uuid4()}"
