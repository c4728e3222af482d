#!/usr/bin/python3
"""ipc_corpus.py - write the seed corpus of fuzz_ipc (tests/fuzz/corpus/ipc).

One valid frame of every message type, a few frames each decoder must
refuse, and a stream of several frames. Rerun it when IPC_VERSION or a
payload changes (it reads the version from common/ipc.h):

    tests/fuzz/ipc_corpus.py
"""
import json
import os
import re
import struct

here = os.path.dirname(os.path.abspath(__file__))
with open(os.path.join(here, "..", "..", "common", "ipc.h")) as f:
    VERSION = int(re.search(r"#define IPC_VERSION (\d+)", f.read()).group(1))
TYPES = {"START": 1, "EXECUTE": 2, "INTERRUPT": 3, "RESTART_KERNEL": 4, "SHUTDOWN": 5,
         "READY": 32, "OUTPUT": 33, "RESULT": 34, "KERNEL_DIED": 35, "LOG": 36,
         "START_FAILED": 37, "STREAMING": 38, "FILE_LIST": 7, "FILE_OPEN": 8, "FILE_WRITE": 9, "FILES": 39,
         "FILE": 40, "WAITING": 41, "RESUMED": 42,
         "INPUT_REPLY": 10, "INPUT_REQUEST": 43}


def frame(type_name, payload=None, version=None, req=1, raw=None):
    body = raw if raw is not None else (
        b"" if payload is None else json.dumps(payload, separators=(",", ":")).encode())
    return struct.pack(">HHIII", version or VERSION, TYPES[type_name], 0, req, len(body)) + body


START = {"argv": ["/env/bin/python", "-m", "ipykernel_launcher", "-f", "{connection_file}"],
         "env": {"PATH": "/env/bin:/usr/bin", "HOME": "/home/x"}, "cwd": "/state/sessions/ab",
         "runtime_dir": "/run/k-ab", "allow_mime": ["text/plain", "image/png"],
         "interrupt_mode": "signal", "startup_timeout_s": 60, "network_mode": "seccomp",
         "uid": 61000, "gid": 61000,
         "limits": {"memory_mb": 256, "pids": 64, "cpu": 0.5, "nofile": 256, "fsize_mb": 5},
         "cgroup": {"name": "k-ab", "memory": {"version": 2, "parent": "/sys/fs/cgroup/k"}}}
RESULT = {"success": False, "stdout": "1\n", "stderr": "",
          "rich_outputs": [{"mime_type": "image/png", "data": "iVBORw0KGgo="},
                           {"mime_type": "application/json", "data": {"a": [1, 2.5, None]}}],
          "error": {"type": "ZeroDivisionError", "message": "division by zero",
                    "traceback": "Traceback"},
          "execution_time": 0.01, "kernel_restarted": True, "dropped_mime": ["text/html"]}
ART = {"name": "plots/a.png", "size_bytes": 42, "mime_type": "image/png",
       "modified_at": "2026-12-01T13:00:00Z"}
seeds = {
    "start": frame("START", START),
    "execute": frame("EXECUTE", {"code": "print('hi\\u0000')", "timeout_s": 30, "silent": True,
                                 "output_limit": 50000, "rich_limit": 5242880,
                                 "allow_mime": ["text/plain", "image/png"],
                                 "inline_limit": 1048576, "binary_files": True,
                                 "stdin": True}),
    "interrupt": frame("INTERRUPT"),
    "restart-kernel": frame("RESTART_KERNEL", {}),
    "shutdown": frame("SHUTDOWN"),
    "resumed": frame("RESUMED", {"kernel_pid": 4242, "state_lost": False}),
    "resumed-no-kernel": frame("RESUMED", {"kernel_pid": 0, "state_lost": True}),
    "ready": frame("READY", {"kernel_pid": 4242, "language": "python", "restarted": False,
                          "language_version": "3.11.2"}),
    "output": frame("OUTPUT", {"name": "stdout", "text": "hi\n"}),
    "result": frame("RESULT", RESULT),
    "result-ok": frame("RESULT", dict(RESULT, success=True, rich_outputs=[], error=None)),
    "kernel-died": frame("KERNEL_DIED", {"pid": 4242, "signal": 9, "message": "killed",
                                         "memory_limit_exceeded": True}),
    "log": frame("LOG", {"priority": 4, "message": "a warning"}),
    "start-failed": frame("START_FAILED", {"message": "no user namespaces"}),
    "result-artifacts": frame("RESULT", dict(RESULT, artifacts=[ART], artifacts_truncated=True)),
    # rich outputs by file (inline_limit): the file alone, and beside its data
    "result-by-file": frame("RESULT", dict(RESULT, rich_outputs=[
        {"mime_type": "image/png", "file": "rich/3-0a1b2c3d-rich1.png", "size_bytes": 8,
         "sha256": "ab" * 32},
        {"mime_type": "image/png", "data": "iVBORw0KGgo=", "file": "rich/3-0a1b2c3d-rich2.png",
         "size_bytes": 8, "sha256": "cd" * 32}])),
    "result-rich-neither": frame("RESULT",
                                 dict(RESULT, rich_outputs=[{"mime_type": "image/png"}])),
    "result-rich-traversal": frame("RESULT", dict(RESULT, rich_outputs=[
        {"mime_type": "image/png", "file": "../x.png", "size_bytes": 1, "sha256": "ab" * 32}])),
    "input-request": frame("INPUT_REQUEST", {"prompt": "Name? "}),
    "input-reply": frame("INPUT_REPLY", {"value": "Ada"}),
    "input-reply-eof": frame("INPUT_REPLY", {"eof": True}),
    "input-reply-both": frame("INPUT_REPLY", {"value": "x", "cancel": True}),
    "result-stdin-wait": frame("RESULT", dict(RESULT, stdin_wait_s=1.5)),
    "file-list": frame("FILE_LIST"),
    "file-open": frame("FILE_OPEN", {"path": "plots/a.png"}),
    "files": frame("FILES", {"files": [ART, dict(ART, name="b.csv")], "truncated": True}),
    "file": frame("FILE", {"file": ART}),
    "file-error": frame("FILE", {"error": "a.png: refused: a.png is a symbolic link"}),
    "file-open-traversal": frame("FILE_OPEN", {"path": "../../etc/shadow"}),
    "file-write": frame("FILE_WRITE", {"path": "data/in.csv", "data": "YSxiCjEsMgo=",
                                       "mode": 420}),
    "file-write-traversal": frame("FILE_WRITE", {"path": "../x", "data": "", "mode": 420}),
    "file-write-setuid": frame("FILE_WRITE", {"path": "x", "data": "", "mode": 2541}),
    "file-both": frame("FILE", {"error": "x", "file": ART}),
    # refused: wrong version, missing field, out of bounds, junk, trailing bytes
    "bad-version": frame("READY", {"kernel_pid": 5, "language": "p", "restarted": False},
                         version=1),
    "ready-empty": frame("READY"),
    "ready-pid-string": frame("READY", {"kernel_pid": "5", "language": "p",
                                        "restarted": False}),
    "ready-pid-one": frame("READY", {"kernel_pid": 1, "language": "p", "restarted": False}),
    "ready-junk": frame("READY", {"kernel_pid": 5, "language": "p", "restarted": False,
                                  "extra": [1]}),
    "log-trailing": frame("LOG", raw=b'{"priority":1,"message":"x"} junk'),
    "shutdown-member": frame("SHUTDOWN", {"now": True}),
    "stream": frame("READY", {"kernel_pid": 77, "language": "python", "restarted": False})
    + frame("OUTPUT", {"name": "stderr", "text": "warn\n"}, req=2)
    + frame("RESULT", dict(RESULT, error=None), req=2) + frame("LOG", {"priority": 7,
                                                                       "message": "m"}),
}
out = os.path.join(here, "corpus", "ipc")
os.makedirs(out, exist_ok=True)
for name, data in seeds.items():
    with open(os.path.join(out, name), "wb") as f:
        f.write(data)
