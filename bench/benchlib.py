"""benchlib.py - what bench.py, scale.py and memory.py share: the machine's
CPU model for the record, and waiting for an execution on a jupyter_client
kernel the way the daemon does."""


def cpu_model():
    """The CPU's model name from /proc/cpuinfo, or "" if it says none."""
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return ""


def wait_executed(kc, msg_id, timeout):
    """Wait for the execute_reply and the iopub idle of msg_id, as the
    daemon does; return (reply, text/plain value or None)."""
    while True:
        reply = kc.get_shell_msg(timeout=timeout)
        if reply["parent_header"].get("msg_id") == msg_id:
            break
    value = None
    while True:
        m = kc.get_iopub_msg(timeout=timeout)
        if m["parent_header"].get("msg_id") != msg_id:
            continue
        t = m["msg_type"]
        if t == "execute_result":
            value = m["content"]["data"].get("text/plain")
        elif t == "status" and m["content"]["execution_state"] == "idle":
            break
    return reply, value
