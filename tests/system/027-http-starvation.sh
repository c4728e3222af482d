#!/bin/sh
# 027-http-starvation: a handful of clients cannot shut everyone out.
# civetweb serves one connection per thread; before this, 70
# slowloris connections, 66 GET streams of one session or 66 long calls of
# one session took all 64 threads, and /health and every other session went
# unanswered. Here, with the thread count sized from pool.max_sessions (20)
# and everything else at its default, at the same time:
#   - 200 slowloris connections (160 from 127.0.0.2, and one from each of
#     127.0.0.10 to 127.0.0.49), each reconnecting when the daemon drops it;
#   - 100 GET streams of one session, reopened as soon as they end;
#   - 100 concurrent time.sleep(30) calls of that session;
# (streams and calls come from ten addresses each, so that their session's
# limits, not the per-address one, answer them), all from a process of
# their own, so that the checks do not wait for the attackers' Python;
# and throughout, /health answers 200 within 1 s, another session computes
# 1+1 within 2 s, and the control socket answers. Extra calls are refused at
# once with a JSON-RPC error, a newer stream ends the older one, and the
# address that holds its share of connections gets the next ones closed.
. "$(dirname "$0")/lib.sh"
slow_suite

require_py ipykernel
require_binaries
"$PY" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.49", 0))' 2>/dev/null ||
	skip "cannot bind 127.0.0.49 (the loopback network is not 127.0.0.0/8 here)"
setup_tmp
PORT=$(free_port)
CFG_EXTRA='shutdown_grace_s: 1'
write_config
config_set pool.max_sessions 20
start_daemon
wait_ready

run_py "$PORT" "$TMPD/run" <<'EOF2'
import multiprocessing, socket, sys, threading, time
from mcp import check, ok
from calls import control
from rawhttp import (Conn, connect, request, rpc, call, mcp_headers, new_session, value_of,
                     compute, health)

port, rundir = int(sys.argv[1]), sys.argv[2]
ATTACK_S = 15
stop = threading.Event()
lock = threading.Lock()
stats = {"slow_refused_fast": 0, "slow_dropped": 0, "streams_opened": 0,
         "streams_ended": 0, "calls": []}
STREAM_SRCS = ["127.0.0.%d" % (70 + i % 10) for i in range(100)]
CALL_SRCS = ["127.0.0.%d" % (60 + i % 10) for i in range(100)]

victim = new_session(port, "127.0.0.60")
checker = new_session(port)
v, _, r = compute(port, checker, "1+1")
check(v == "2", "the checking session computes before the attack", repr(r))

# --- 200 slowloris connections ----------------------------------------------
SLOW_SRCS = ["127.0.0.2"] * 160 + ["127.0.0.%d" % i for i in range(10, 50)]

def slowloris():
    socks = [None] * len(SLOW_SRCS)
    born = [0.0] * len(SLOW_SRCS)
    retry = [0.0] * len(SLOW_SRCS)
    while not stop.is_set():
        now = time.monotonic()
        for i, src in enumerate(SLOW_SRCS):
            s = socks[i]
            if s is None:
                if now < retry[i]:
                    continue
                try:
                    s = connect(port, src, 2)
                    s.setblocking(False)
                    s.send(b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\n")
                    socks[i], born[i] = s, now
                except OSError:
                    retry[i] = now + 1
                continue
            try:
                if s.recv(1, socket.MSG_PEEK) == b"":
                    raise ConnectionResetError()
            except BlockingIOError:
                try:
                    s.send(b"X-Slow: 1\r\n")
                    continue
                except OSError:
                    pass
            except OSError:
                pass
            with lock:
                stats["slow_refused_fast" if now - born[i] < 3 else "slow_dropped"] += 1
            s.close()
            socks[i] = None
            retry[i] = now + 1  # at most one reconnect a second per slot
        stop.wait(1)
    for s in socks:
        if s:
            s.close()

# --- 100 GET streams of the victim session ----------------------------------
def stream(i):
    stop.wait(i / 100.0)  # all open within the first second
    while not stop.is_set():
        try:
            c = Conn(port, STREAM_SRCS[i], 5)
            c.send(request("GET", headers=dict(mcp_headers(victim),
                                               Accept="text/event-stream")))
            r = c.read_reply(head_only=True)
            if r.status == 200:
                with lock:
                    stats["streams_opened"] += 1
                c.sock.settimeout(1)
                while not stop.is_set():
                    try:
                        if not c.sock.recv(4096):
                            with lock:
                                stats["streams_ended"] += 1
                            break
                    except socket.timeout:
                        pass
            c.close()
        except OSError:
            pass
        stop.wait(1)

# --- 100 concurrent sleep(30) calls of the victim session -------------------
def sleeper(i):
    c = None
    try:
        c = Conn(port, CALL_SRCS[i], 60)
        t = time.monotonic()
        c.send(request("POST", body=call("import time\ntime.sleep(30)", rid=i),
                       headers=mcp_headers(victim)))
        # Refused ones are answered at once; admitted ones run until we stop.
        c.sock.settimeout(ATTACK_S + 5)
        r = c.read_reply()
        res = (r.status, time.monotonic() - t, r.json())
    except socket.timeout:
        res = ("running", None, None)
    except OSError as e:
        res = ("error", None, repr(e))
    finally:
        if c:
            c.close()
    with lock:
        stats["calls"].append(res)

def attack(q, go_on):
    threads = [threading.Thread(target=slowloris)]
    threads += [threading.Thread(target=stream, args=(i,)) for i in range(100)]
    threads += [threading.Thread(target=sleeper, args=(i,)) for i in range(100)]
    for t in threads:
        t.daemon = True
        t.start()
    go_on.wait()
    with lock:
        q.put(dict(stats, calls=list(stats["calls"])))
    stop.set()
    for t in threads:
        t.join(30)

mp = multiprocessing.get_context("fork")
q, go_on = mp.Queue(), mp.Event()
attacker = mp.Process(target=attack, args=(q, go_on), daemon=True)
attacker.start()

# --- meanwhile: /health, another session, the control socket ----------------
worst_health = worst_call = worst_control = 0.0
rounds = 0
end = time.monotonic() + ATTACK_S
while time.monotonic() < end:
    st, dt = health(port, timeout=5)
    check(st == 200 and dt < 1.0, "/health during the attack: %s in %.2f s (round %d)"
          % (st, dt, rounds))
    worst_health = max(worst_health, dt)
    v, dt, r = compute(port, checker, "1+1", timeout=10)
    check(v == "2" and dt < 2.0, "1+1 in another session during the attack: %r in %.2f s "
          "(round %d)" % (v, dt, rounds), repr(r))
    worst_call = max(worst_call, dt)
    t = time.monotonic()
    cs = control(rundir)
    worst_control = max(worst_control, time.monotonic() - t)
    check(isinstance(cs, dict), "the control socket answers during the attack", cs)
    rounds += 1
    time.sleep(0.3)
ok("%d rounds under attack: /health at worst %.2f s, 1+1 at worst %.2f s, control "
   "socket at worst %.2f s" % (rounds, worst_health, worst_call, worst_control))
check(rounds >= 10, "at least 10 rounds of checks ran during the attack")

go_on.set()
s = q.get(timeout=30)
calls = s["calls"]
refused = [c for c in calls if c[0] == 429]
check(len(refused) >= 90, "calls beyond http.max_concurrent_calls_per_session are "
      "refused: %d of 100 (%s)" % (len(refused), sorted(set(str(c[0]) for c in calls))))
msg = (refused[0][2] or {}).get("error", {}).get("message", "")
check("max_concurrent_calls_per_session" in msg, "the refusal names the limit", refused[0])
check(max(c[1] for c in refused) < 5, "refusals come at once, not after a wait",
      [round(c[1], 2) for c in refused])
running = [c for c in calls if c[0] == "running"]
ok("%d of the session's 100 calls refused at once (%s)" % (len(refused), msg))
check(s["streams_ended"] >= 50, "newer GET streams end older ones: %d of %d streams ended"
      % (s["streams_ended"], s["streams_opened"]))
ok("%d GET streams opened, %d ended by a newer one" % (s["streams_opened"], s["streams_ended"]))
check(s["slow_refused_fast"] >= 50, "connections beyond 127.0.0.2's share are closed "
      "at once: %d" % s["slow_refused_fast"])
ok("slowloris: %d connections refused at once, %d dropped later (header timeout)"
   % (s["slow_refused_fast"], s["slow_dropped"]))

attacker.join(60)
st, dt = health(port)
check(st == 200, "/health after the attack")
v, dt, r = compute(port, checker, "2+2")
check(v == "4", "the other session after the attack", repr(r))
ok("the daemon serves normally after the attack")
EOF2
ok "200 slowloris connections, 100 streams and 100 long calls starve no one"
