"""The simulated platform served over real HTTP on 127.0.0.1, with its samples, for its own tests."""

import httpx
import pytest

from simulator.server import PlatformServer
from simulator.state import PlatformState
from tests.helpers.simulator_client import API_KEY, NO_TLS


@pytest.fixture
def state() -> PlatformState:
    platform = PlatformState()
    platform.load_samples()
    return platform


@pytest.fixture
def server(state):
    with PlatformServer(state, api_key=API_KEY) as running:
        yield running


@pytest.fixture
def api(server):
    headers = {"Authorization": f"Bearer {API_KEY}"}
    with httpx.Client(base_url=f"{server.url}/v0/envs/default", headers=headers, timeout=5, **NO_TLS) as client:
        yield client


@pytest.fixture
def control(server):
    with httpx.Client(base_url=f"{server.url}/_control", timeout=5, **NO_TLS) as client:
        yield client
