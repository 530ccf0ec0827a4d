#!/usr/bin/env python3
# bench/synthrun.py OUT [--users N] [--steps N] [--secs S] [--warmup S] [--watch S]
#                       [--clients N] [--seed N]
# A run folder of the built-in driver made up, as `provision run` leaves one (docs/load.md,
# docs/json.md): manifest.json, load.json, and per step watch.csv, watch-dc.csv and every
# client's load.jsonl (a line of figures a second, with latency histograms that add up to
# load.json's counts). The load rises with the users until the last steps overload. For
# bench/report.sh (how long the report of a big run takes, how large it is); nothing in it
# is measured.
import argparse, json, math, os, random

NAMES = ["upload", "browse", "open_read", "copy_in", "edit_save", "open_close", "rewrite",
         "delete_new", "list_new", "rename", "mkdir", "read_folder"]
WEIGHTS = [15, 150, 40, 7, 15, 50, 15, 5, 15, 7, 7, 5]
LIMITS = [2, 1, 2, 3, 3, 1, 2, 1, 1, 1, 2, 5]
BASE_MS = [40, 25, 30, 60, 70, 6, 35, 8, 10, 9, 30, 120]
RATE = 331
TOP = 24 * 7 + 1


def bucket(s):
    if not s >= 1e-4:
        return 0
    b = math.floor(24 * math.log10(s / 1e-4)) + 1
    return TOP if b >= TOP else b


def low(b):
    return 0 if b == 0 else 1e-4 * 10 ** ((min(b, TOP) - 1) / 24)


def quantile(hist, count, mx, q):
    if not count:
        return None
    rank = max(1, math.ceil(q * count))
    seen = 0
    for b in range(TOP):
        seen += hist.get(b, 0)
        if seen >= rank:
            break
    else:
        return mx
    v = 1e-4 if b == 0 else math.sqrt(low(b) * low(b + 1))
    return min(v, mx)


def poisson(rng, lam):
    if lam < 30:
        l, k, p = math.exp(-lam), 0, 1.0
        while True:
            p *= rng.random()
            if p <= l:
                return k
            k += 1
    return max(0, int(round(rng.gauss(lam, math.sqrt(lam)))))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("--users", type=int, default=2000)
    ap.add_argument("--steps", type=int, default=10)
    ap.add_argument("--secs", type=int, default=300)
    ap.add_argument("--warmup", type=int, default=0)
    ap.add_argument("--watch", type=int, default=2)
    ap.add_argument("--clients", type=int, default=2)
    ap.add_argument("--seed", type=int, default=1)
    a = ap.parse_args()
    rng = random.Random(a.seed)
    os.makedirs(a.out, exist_ok=True)
    clients = ["cli%d" % (i + 1) for i in range(a.clients)]
    wsum = sum(WEIGHTS)
    t0 = 1_800_000_000.0
    steps_m, steps_l = [], []
    answer = None
    for si in range(a.steps):
        users = a.users * (si + 1) // a.steps
        per = [users // a.clients + (1 if c < users % a.clients else 0) for c in range(a.clients)]
        load = users / a.users  # 0..1
        slow = 1 + 6 * max(0.0, load - 0.75) ** 2 * 16  # the last steps slow down
        start = t0 + si * (a.secs + a.warmup + 5)
        end = start + a.secs + a.warmup
        d = os.path.join(a.out, "step-%02d" % (si + 1))
        os.makedirs(d, exist_ok=True)
        merged = [dict(started=0, completed=0, errors=0, late=0, over_limit=0, overloaded=0,
                       hist={}, max=0.0) for _ in NAMES]
        nint = a.secs + a.warmup
        ops = {"create": 0, "close": 0, "read": 0, "write": 0, "query_info": 0,
               "query_directory": 0, "set_info": 0, "ioctl": 0}
        for c, name in enumerate(clients):
            os.makedirs(os.path.join(d, name), exist_ok=True)
            lines = ['ready {"users":%d,"connected":%d,"failed":0,"error":null}' % (per[c], per[c])]
            for i in range(1, nint + 1):
                kinds = {}
                for k, kn in enumerate(NAMES):
                    lam = per[c] * RATE / 3600 * WEIGHTS[k] / wsum
                    started = poisson(rng, lam)
                    if not started:
                        continue
                    lat = [rng.lognormvariate(math.log(BASE_MS[k] / 1000 * slow), 0.6)
                           for _ in range(started)]
                    late = sum(1 for _ in range(started) if rng.random() < (slow - 1) / 200)
                    over = sum(1 for x in lat if x > LIMITS[k])
                    h = {}
                    for x in lat:
                        b = bucket(x)
                        h[b] = h.get(b, 0) + 1
                    mx = max(lat)
                    kinds[kn] = {"started": started, "errors": 0,
                                 "late": late, "over_limit": over, "unserved": 0,
                                 "overloaded": min(started, late + over), "max": mx,
                                 "hist": [[b, h[b]] for b in sorted(h)],
                                 "ops": {"create": 2 * started, "close": 2 * started,
                                         "read": started, "query_info": started}}
                    if i > a.warmup:
                        m = merged[k]
                        for key in ("started", "errors", "late", "over_limit", "overloaded"):
                            m[key] += kinds[kn][key]
                        m["completed"] += started
                        for b, n in h.items():
                            m["hist"][b] = m["hist"].get(b, 0) + n
                        m["max"] = max(m["max"], mx)
                        ops["create"] += 2 * started
                        ops["close"] += 2 * started
                        ops["read"] += started
                        ops["query_info"] += started
                # the driver's own cost (format 3): its loop, its host, its lag
                lag = [rng.expovariate(1 / (0.001 + 0.004 * load)) for _ in range(20)]
                lh = {}
                for x in lag:
                    lh[bucket(x)] = lh.get(bucket(x), 0) + 1
                cpu = 2 + 30 * load
                lines.append(json.dumps({"load": 3, "i": i, "secs": 1.0, "users": per[c],
                                         "failed": 0, "threads": 2, "cpu": cpu,
                                         "cpu_top": cpu / 1.5, "host_cpu": 3 + 35 * load,
                                         "lag": {"max": max(lag),
                                                 "hist": [[b, lh[b]] for b in sorted(lh)]},
                                         "kinds": kinds}, separators=(",", ":")))
            with open(os.path.join(d, name, "load.jsonl"), "w") as f:
                f.write("\n".join(lines) + "\n")
        # the watches: a row every --watch seconds
        cols = ["cpu", "usr", "sys", "iowait", "smbd", "winbindd", "samba", "self", "mem_used",
                "mem_avail", "dirty", "rd", "wr", "inflight", "net_rx", "net_tx"]
        for fname, scale in (("watch.csv", 1.0), ("watch-dc.csv", 0.15)):
            rows = ["seconds,phase," + ",".join(cols) + ",rx_eth0,tx_eth0"]
            for t in range(a.watch, nint + 1, a.watch):
                cpu = min(100, scale * (8 + 90 * load * load) + rng.gauss(0, 2))
                v = [cpu, cpu * 0.6, cpu * 0.35, scale * 3 * load, scale * 160 * load,
                     scale * 4 * load, 150 * load if scale < 1 else 0.2, 0.05,
                     900 + 400 * load, 23000 - 400 * load, 40 * load, 200 * load, 3000 * load,
                     4 * load * slow, 3000 * load, 9000 * load]
                v = [max(0.0, x) for x in v]
                rows.append("%.1f,%s," % (t, "warmup" if t <= a.warmup else "measure") +
                            ",".join("%.1f" % x for x in v) + ",%.1f,%.1f" % (v[14], v[15]))
            with open(os.path.join(d, fname), "w") as f:
                f.write("\n".join(rows) + "\n")
        # the step's figures, as load.json has them
        allk = dict(started=0, completed=0, errors=0, late=0, over_limit=0, overloaded=0,
                    unserved=0, hist={}, max=0.0)
        for m in merged:
            for key in ("started", "completed", "errors", "late", "over_limit", "overloaded"):
                allk[key] += m[key]
            for b, n in m["hist"].items():
                allk["hist"][b] = allk["hist"].get(b, 0) + n
            allk["max"] = max(allk["max"], m["max"])

        def summ(m):
            ms = lambda v: None if v is None else v * 1000
            return {"started": m["started"], "completed": m["completed"], "errors": m["errors"],
                    "late": m["late"], "over_limit": m["over_limit"], "unserved": 0,
                    "overloaded": m["overloaded"],
                    "overload_pct": 100 * m["overloaded"] / m["started"] if m["started"] else 0,
                    "latency": {"n": m["completed"],
                                "median_ms": ms(quantile(m["hist"], m["completed"], m["max"], .5)),
                                "p95_ms": ms(quantile(m["hist"], m["completed"], m["max"], .95)),
                                "max_ms": ms(m["max"] if m["completed"] else None)}}

        secs = float(a.secs)
        rate = allk["completed"] / secs
        ovl = 100 * allk["overloaded"] / allk["started"] if allk["started"] else 0
        carried = allk["started"] > 0 and ovl <= 1
        if carried:
            answer = (users, si + 1)
        steps_l.append({"users": users, "seconds": secs, "connected": users, "not_connected": 0,
                        "clients_lost": 0, "scen_per_s": rate, "expected_per_s": users * RATE / 3600,
                        "server_cpu_pct": 8 + 90 * load * load,
                        "dc_cpu_pct": 0.15 * (8 + 90 * load * load), "dc_samba_pct": 20 * load,
                        "carried": carried, "client_bound": False,
                        "driver_cores": len(clients) * (2 + 30 * load) / 100,
                        "lag_ms_p95": 1 + 5 * load,
                        "all": summ(allk), "kinds": {n: summ(m) for n, m in zip(NAMES, merged)},
                        "clients": [{"name": n, "threads": 2, "cpu_driver": 2 + 30 * load,
                                     "cpu_top_loop": (2 + 30 * load) / 1.5,
                                     "cpu_host": 3 + 35 * load, "lag_ms_p95": 1 + 5 * load,
                                     "lag_ms_max": 3 + 10 * load, "bound": False}
                                    for n in clients],
                        "logon": {"ok": users, "failed": 0, "retries": 0,
                                  "latency": {"n": users, "median_ms": 40 * slow,
                                              "p95_ms": 90 * slow, "max_ms": 120 * slow,
                                              "median_ms_bucket": None,
                                              "p95_ms_bucket": None}},
                        "ops": ops})
        iso = lambda t: __import__("time").strftime("%Y-%m-%dT%H:%M:%S", __import__("time").gmtime(t)) + ".000Z"
        steps_m.append({"step": si + 1, "users": users, "start": iso(start), "end": iso(end),
                        "seconds": end - start, "ended": "duration",
                        "hosts": [{"name": n, "role": "client", "users": per[c], "state": "done",
                                   "exit": 0, "error": None, "files": 1, "bytes": 1000}
                                  for c, n in enumerate(clients)],
                        "watch": {"samples": a.secs // a.watch}, "drain": None})
    line = ("the server carried %d users without overload" % answer[0]) if answer else \
        "the server carried no step without overload"
    config = {"rate": RATE, "late": 1, "overload": 1, "interval": 1, "seed": 1,
              "scenarios": {n: {"weight": w, "limit": l} for n, w, l in zip(NAMES, WEIGHTS, LIMITS)}}
    # the step over the answer: the fewest users over it that did not count
    over_step = min(((st["users"], i + 1) for i, st in enumerate(steps_l)
                     if not st["carried"] and (not answer or st["users"] > answer[0])),
                    default=None)
    ref = lambda x: {"step": x[1], "users": x[0], "client_bound": False} if x else None
    with open(os.path.join(a.out, "load.json"), "w") as f:
        json.dump({"version": 2, "title": "synthetic", "config": config, "steps": steps_l,
                   "answer": {"users": answer[0] if answer else None,
                              "step": answer[1] if answer else None,
                              "last_carried": ref(answer), "first_over": ref(over_step),
                              "client_bound": False, "client_cores_needed": None,
                              "line": line}}, f, indent=2)
    manifest = {"manifest_version": 1, "provision": "synthetic", "run_id": os.path.basename(a.out.rstrip("/")),
                "lab": "synthetic", "playbook": {"path": "synthetic.yaml", "sha256": "0" * 64},
                "status": "done", "exit_code": 0, "error": None,
                "started": steps_m[0]["start"], "ended": steps_m[-1]["end"],
                "driver": {"name": "builtin", "min_users": a.users // a.steps, "max_users": a.users,
                           "step": a.users // a.steps, "duration": a.secs, "warmup": a.warmup,
                           "timeout": 0, "client_command": None, "controller_command": None,
                           "steps": [{"users": s["users"]} for s in steps_m]},
                "hosts": [{"name": "srv", "role": "server", "address": "198.18.0.20",
                           "version": "Version 4.17.12-Debian;Linux 6.1.0"}] +
                         [{"name": n, "role": "client", "address": "198.18.0.%d" % (31 + i),
                           "version": "Linux 6.1.0"} for i, n in enumerate(clients)] +
                         [{"name": "local", "role": "controller", "results": a.out}],
                "watch": {"interval": a.watch, "error": None},
                "server_config": "[global]\n\tnetbios name = SRV\n\tsecurity = ADS\n\tserver signing = mandatory\n",
                "steps": steps_m}
    with open(os.path.join(a.out, "manifest.json"), "w") as f:
        json.dump(manifest, f, indent=2)


main()
