"""backend=local under Harbor's ``allowlist`` network mode: the model endpoint and nothing else.

Two real HTTP servers listen on the host's loopback: the "model" (allowlisted through
``egress_urls``) and another one on a different port. From inside the sandbox the
model answers, while the other loopback port, the host's own addresses and any
outside address are unreachable.
"""

from __future__ import annotations

import json
import shlex
import socket

from harbor.models.task.config import NetworkMode, NetworkPolicy
from support.backends import make_env, needs_bwrap, started, sync
from support.model_server import ModelServer, say

PROBE = """
import json, socket, sys, urllib.request
out = {}
for name, host, port in json.loads(sys.argv[1]):
    s = socket.socket(); s.settimeout(2)
    try:
        s.connect((host, port)); out[name] = "connected"
    except OSError as e:
        out[name] = type(e).__name__
    finally:
        s.close()
try:
    body = json.dumps({"model": "m", "messages": [{"role": "user", "content": "hi"}]}).encode()
    req = urllib.request.Request(sys.argv[2] + "/chat/completions", body, {"Content-Type": "application/json"})
    out["model_reply"] = json.load(urllib.request.urlopen(req, timeout=10))["choices"][0]["message"]["content"]
except Exception as e:
    out["model_reply"] = repr(e)
print(json.dumps(out))
"""


def _host_address() -> str:
    """The host's own non-loopback IPv4 address (where a route to the outside starts)."""
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    try:
        s.connect(("192.0.2.1", 9))  # no packet is sent for a UDP connect
        return s.getsockname()[0]
    except OSError:
        return "10.255.255.1"
    finally:
        s.close()


@needs_bwrap
@sync
async def test_allowlist_reaches_the_model_endpoint_and_nothing_else(tmp_path):
    with ModelServer(lambda r: say("pong")) as model, ModelServer(lambda r: say("leak")) as other:
        policy = NetworkPolicy(network_mode=NetworkMode.ALLOWLIST, allowed_hosts=["127.0.0.1"])
        env = make_env(tmp_path, network_mode=None, egress_urls=[model.base_url])
        env._network_policy = policy  # what Harbor's trial sets for an installed agent under no-network
        async with started(env):
            targets = [
                ("model_port", "127.0.0.1", model.port),
                ("other_loopback_port", "127.0.0.1", other.port),
                ("host_address_model_port", _host_address(), model.port),
                ("outside", "1.1.1.1", 443),
                ("outside_dns", "8.8.8.8", 53),
            ]
            result = await env.exec(f"python3 -c {shlex.quote(PROBE)} {shlex.quote(json.dumps(targets))} {model.base_url}")
            assert result.return_code == 0, result.stderr
            seen = json.loads(result.stdout)
            # A plain-HTTP model endpoint is reached through the trial's metering proxy.
            assert env.provenance.network == f"allowlist: 127.0.0.1:{model.port} (metered)"
    assert seen["model_port"] == "connected"
    assert seen["model_reply"] == "pong"
    assert seen["other_loopback_port"] == "ConnectionRefusedError"
    for name in ("host_address_model_port", "outside", "outside_dns"):
        assert seen[name] in ("OSError", "TimeoutError", "ConnectionRefusedError"), (name, seen[name])
        assert seen[name] != "connected"
    assert other.requests == []
    assert len(model.requests) == 1


@needs_bwrap
@sync
async def test_allowlisted_hostname_resolves_to_the_relay_only(tmp_path):
    env = make_env(tmp_path, network_mode=None)
    env._network_policy = NetworkPolicy(network_mode=NetworkMode.ALLOWLIST, allowed_hosts=["api.anthropic.com"])
    async with started(env):
        hosts = await env.exec("getent hosts api.anthropic.com; getent hosts example.com || echo unresolved")
    assert hosts.stdout.split()[:2] == ["127.0.0.1", "api.anthropic.com"]
    assert hosts.stdout.strip().endswith("unresolved")
    assert env.provenance.network == "allowlist: api.anthropic.com:443, api.anthropic.com:80"
