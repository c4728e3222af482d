#!/usr/bin/python3
# Usage: record.py [DIR]; needs ipykernel and jupyter_client. Each file holds
# the key and the raw frames (base64) of one message, as test_jupyter.c reads them.
# Record raw multipart frames of real ipykernel replies for tests/unit/data.
import base64, json, os, sys, time
import zmq
from jupyter_client import KernelManager
from jupyter_client.session import Session

out = sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(os.path.abspath(__file__))
km = KernelManager(kernel_name="python3")
km.kernel_cmd = None
km.start_kernel(extra_arguments=[], env={"PATH": "/usr/bin:/bin", "HOME": "/tmp", "LANG": "C.UTF-8"})
key = km.session.key
ctx = zmq.Context()
shell = ctx.socket(zmq.DEALER); shell.connect(km._make_url("shell"))
iopub = ctx.socket(zmq.SUB); iopub.setsockopt(zmq.SUBSCRIBE, b""); iopub.connect(km._make_url("iopub"))
sess = Session(key=key, signature_scheme="hmac-sha256")

def save(name, channel, frames):
    with open(os.path.join(out, name + ".json"), "w") as f:
        json.dump({"key": key.decode(), "channel": channel,
                   "frames": [base64.b64encode(fr).decode() for fr in frames]}, f, indent=1)
        f.write("\n")

# kernel_info until iopub is live
got_info = None
while True:
    sess.send(shell, "kernel_info_request", {})
    if shell.poll(5000):
        fr = shell.recv_multipart()
        got_info = got_info or fr
    if iopub.poll(300):
        iopub.recv_multipart()
        break
save("kernel_info_reply", "shell", got_info)
time.sleep(0.5)
while iopub.poll(100):
    iopub.recv_multipart()

def run(code):
    m = sess.send(shell, "execute_request", {"code": code, "silent": False, "store_history": True,
                                            "user_expressions": {}, "allow_stdin": False,
                                            "stop_on_error": True})
    msgs = []
    while True:
        fr = iopub.recv_multipart()
        i = fr.index(b"<IDS|MSG>")
        h = json.loads(fr[i + 2]); p = json.loads(fr[i + 3]); c = json.loads(fr[i + 5])
        if p.get("msg_id") != m["header"]["msg_id"]:
            continue
        msgs.append((h["msg_type"], fr))
        if h["msg_type"] == "status" and c["execution_state"] == "idle":
            break
    reply = shell.recv_multipart()
    return msgs, reply

msgs, rep = run("print('hello, world')")
save("stream", "iopub", [f for t, f in msgs if t == "stream"][0])
save("status_idle", "iopub", msgs[-1][1])
save("execute_reply_ok", "shell", rep)
msgs, rep = run("1+1")
save("execute_result", "iopub", [f for t, f in msgs if t == "execute_result"][0])
msgs, rep = run("1/0")
save("error", "iopub", [f for t, f in msgs if t == "error"][0])
save("execute_reply_error", "shell", rep)
msgs, rep = run("from IPython.display import display, HTML\ndisplay(HTML('<b>hi</b>'))")
save("display_data", "iopub", [f for t, f in msgs if t == "display_data"][0])
km.shutdown_kernel(now=True)
