"""``python`` resolves in the local sandbox as it does in python:3.12-slim."""

from __future__ import annotations

from support.backends import make_env, needs_bwrap, started, sync


@needs_bwrap
@sync
async def test_python_and_usr_local_bin_python_run_in_the_sandbox(tmp_path):
    async with started(make_env(tmp_path)) as env:
        out = await env.exec("command -v python; python -c 'import sys; print(sys.version_info[0])'; "
                             "/usr/local/bin/python -c 'print(2)'; ls /usr/local/bin | grep -c . ; "
                             "touch /usr/local/bin/x 2>/dev/null && echo writable || echo read-only")
    lines = out.stdout.split()
    assert out.return_code == 0, out.stderr
    assert lines[0] == "/usr/local/bin/python" and lines[1] == "3" and lines[2] == "2"
    assert int(lines[3]) >= 2  # the host's own /usr/local/bin entries stay visible too
    assert lines[4] == "read-only"
