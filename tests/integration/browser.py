#!/usr/bin/env python3
# tests/integration/browser.py PAGE OUTDIR: load an HTML file in Debian's headless Chromium and
# say what a reader's browser would see, for the tests of report.html and compare --html.
#
# Chromium runs in a network namespace of its own with only loopback (unshare -n, as root),
# with a fresh profile, and is driven over the DevTools protocol on a pipe (fds 3 and 4,
# messages ending in NUL; no port, no third-party client). It records every request the page
# makes (Network.requestWillBeSent), every console message and log entry (CSP violations
# come as these), every exception; waits for the load event; then reads the DOM: each SVG
# plot (svg.plot) with the points its series carry and the size of what they draw, the
# tables. Writes into OUTDIR: screenshot.png (the top of the page at 1280 x 1000, as a
# reader first sees it), page.png (the whole page) and page-NN.png (it in slices of 1500
# pixels), dom.html (the DOM after loading,
# Chromium's --dump-dom equivalent) and result.json (everything above). Prints result.json.
# Exit status: 0 when the page loaded with no console message of level warning or error, no
# exception and no request beyond the file itself (data: URLs aside); 1 otherwise; 2 when
# Chromium could not be driven.
import base64, json, os, select, shutil, subprocess, sys, tempfile, time

FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--disable-extensions", "--disable-default-apps", "--mute-audio",
         "--hide-scrollbars", "--remote-debugging-pipe"]
JS = r"""
(() => {
  const plots = [...document.querySelectorAll('svg.plot')].map(svg => {
    const series = [...svg.querySelectorAll('g.series')].map(g => ({
      name: g.getAttribute('data-name'),
      points: +g.getAttribute('data-points'),
      path: [...g.querySelectorAll('path.ln')].reduce((n, p) => n + (p.getAttribute('d') || '').length, 0),
      markers: g.querySelectorAll('circle, rect, path:not(.ln):not(.wh)').length,
      whiskers: g.querySelectorAll('path.wh').length,
    }));
    const box = svg.getBoundingClientRect();
    return {id: svg.id, title: (svg.querySelector('title') || {}).textContent || '',
            width: box.width, height: box.height, series};
  });
  return {title: document.title,
          h1: (document.querySelector('h1') || {}).textContent || '',
          csp: (document.querySelector('meta[http-equiv="Content-Security-Policy"]') || {}).content || '',
          scripts: document.querySelectorAll('script').length,
          tables: document.querySelectorAll('table').length,
          tables_with_headers: [...document.querySelectorAll('table')].filter(t => t.querySelector('th[scope]')).length,
          answer: (document.querySelector('.answer') || {}).textContent || '',
          plots, text: document.body.innerText.slice(0, 200000)};
})()
"""


class Chrome:
    def __init__(self, profile):
        exe = shutil.which("chromium") or shutil.which("chromium-browser")
        if not exe:
            raise RuntimeError("chromium is not installed (make deps)")
        to_r, self.to_w = os.pipe()   # we write commands, Chromium reads them on fd 3
        self.from_r, from_w = os.pipe()  # Chromium writes on fd 4, we read
        self.log = open(os.path.join(profile, "chromium.log"), "wb")

        def fds():
            # by way of new numbers: either end may be 3 or 4 already
            a, b = os.dup(to_r), os.dup(from_w)
            os.dup2(a, 3)
            os.dup2(b, 4)

        argv = [exe] + FLAGS + ["--user-data-dir=" + os.path.join(profile, "p"), "about:blank"]
        if os.geteuid() == 0 and shutil.which("unshare"):
            argv = ["unshare", "-n", "--"] + argv  # only loopback: nothing can leave
        self.proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=self.log,
                                     stderr=self.log, preexec_fn=fds, close_fds=False)
        os.close(to_r)
        os.close(from_w)
        self.buf = b""
        self.next_id = 0
        self.events = []

    def send(self, method, params=None, session=None):
        self.next_id += 1
        msg = {"id": self.next_id, "method": method, "params": params or {}}
        if session:
            msg["sessionId"] = session
        os.write(self.to_w, json.dumps(msg).encode() + b"\0")
        return self.next_id

    def read(self, timeout):
        end = time.time() + timeout
        while b"\0" not in self.buf:
            left = end - time.time()
            if left <= 0 or not select.select([self.from_r], [], [], left)[0]:
                return None
            chunk = os.read(self.from_r, 1 << 20)
            if not chunk:
                raise RuntimeError("chromium closed its pipe")
            self.buf += chunk
        msg, self.buf = self.buf.split(b"\0", 1)
        return json.loads(msg)

    def call(self, method, params=None, session=None, timeout=30):
        want = self.send(method, params, session)
        end = time.time() + timeout
        while time.time() < end:
            m = self.read(end - time.time())
            if m is None:
                break
            if m.get("id") == want:
                if "error" in m:
                    raise RuntimeError("%s: %s" % (method, m["error"]))
                return m.get("result", {})
            self.events.append(m)
        raise RuntimeError("%s: no answer in %d s" % (method, timeout))

    def wait_event(self, method, timeout):
        end = time.time() + timeout
        for m in self.events:
            if m.get("method") == method:
                return m
        while time.time() < end:
            m = self.read(end - time.time())
            if m is None:
                break
            self.events.append(m)
            if m.get("method") == method:
                return m
        return None

    def close(self):
        try:
            self.send("Browser.close")
            self.proc.wait(10)
        except Exception:
            self.proc.kill()
            self.proc.wait()
        os.close(self.to_w)
        os.close(self.from_r)
        self.log.close()


def main():
    if len(sys.argv) != 3:
        print(__doc__ or "usage: browser.py PAGE OUTDIR", file=sys.stderr)
        return 2
    page, out = os.path.abspath(sys.argv[1]), sys.argv[2]
    os.makedirs(out, exist_ok=True)
    url = "file://" + page
    profile = tempfile.mkdtemp(prefix="pv-chromium.")
    res = {"url": url, "requests": [], "console": [], "exceptions": [], "loaded": False}
    try:
        c = Chrome(profile)
    except Exception as e:
        print("browser: %s" % e, file=sys.stderr)
        return 2
    try:
        target = c.call("Target.createTarget", {"url": "about:blank"})["targetId"]
        sess = c.call("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
        for dom in ("Page", "Runtime", "Log", "Network"):
            c.call(dom + ".enable", session=sess)
        c.call("Emulation.setDeviceMetricsOverride",
               {"width": 1280, "height": 1000, "deviceScaleFactor": 1, "mobile": False},
               session=sess)
        c.call("Page.navigate", {"url": url}, session=sess)
        res["loaded"] = c.wait_event("Page.loadEventFired", 60) is not None
        time.sleep(0.5)  # late console messages
        while c.read(0.2) is not None:
            pass
        dom = c.call("Runtime.evaluate", {"expression": JS, "returnByValue": True},
                     session=sess)["result"]["value"]
        html = c.call("Runtime.evaluate",
                      {"expression": "document.documentElement.outerHTML",
                       "returnByValue": True}, session=sess)["result"]["value"]
        with open(os.path.join(out, "dom.html"), "w") as f:
            f.write("<!DOCTYPE html>\n" + html)
        shot = c.call("Page.captureScreenshot", {"format": "png"}, session=sess)
        with open(os.path.join(out, "screenshot.png"), "wb") as f:
            f.write(base64.b64decode(shot["data"]))
        m = c.call("Page.getLayoutMetrics", session=sess)
        size = m.get("cssContentSize") or m.get("contentSize")
        full = c.call("Page.captureScreenshot",
                      {"format": "png", "captureBeyondViewport": True,
                       "clip": {"x": 0, "y": 0, "width": 1280,
                                "height": min(size["height"], 16000), "scale": 1}},
                      session=sess)
        with open(os.path.join(out, "page.png"), "wb") as f:
            f.write(base64.b64decode(full["data"]))
        # and in slices a person can look at one by one
        for i in range(min(12, int((min(size["height"], 16000) + 1499) // 1500))):
            part = c.call("Page.captureScreenshot",
                          {"format": "png", "captureBeyondViewport": True,
                           "clip": {"x": 0, "y": 1500 * i, "width": 1280,
                                    "height": min(1500, size["height"] - 1500 * i), "scale": 1}},
                          session=sess)
            with open(os.path.join(out, "page-%02d.png" % (i + 1)), "wb") as f:
                f.write(base64.b64decode(part["data"]))
        for e in c.events + [c.read(0.1) or {}]:
            m, p = e.get("method"), e.get("params", {})
            if m == "Network.requestWillBeSent":
                res["requests"].append(p["request"]["url"])
            elif m == "Runtime.consoleAPICalled":
                res["console"].append({"level": p.get("type"), "text": " ".join(
                    str(a.get("value", a.get("description", ""))) for a in p.get("args", []))})
            elif m == "Log.entryAdded":
                en = p["entry"]
                res["console"].append({"level": en.get("level"), "source": en.get("source"),
                                       "text": en.get("text")})
            elif m == "Runtime.exceptionThrown":
                res["exceptions"].append(p["exceptionDetails"].get("text"))
        res["dom"] = dom
    except Exception as e:
        print("browser: %s" % e, file=sys.stderr)
        c.close()
        shutil.rmtree(profile, ignore_errors=True)
        return 2
    c.close()
    shutil.rmtree(profile, ignore_errors=True)
    res["requests_out"] = [u for u in res["requests"] if u != url and not u.startswith("data:")]
    res["bad_console"] = [m for m in res["console"]
                          if m.get("level") in ("error", "warning", "assert")]
    res["ok"] = res["loaded"] and not res["requests_out"] and not res["bad_console"] and \
        not res["exceptions"]
    text = res["dom"].pop("text", "") if "dom" in res else ""
    with open(os.path.join(out, "text.txt"), "w") as f:
        f.write(text)
    with open(os.path.join(out, "result.json"), "w") as f:
        json.dump(res, f, indent=1)
    json.dump(res, sys.stdout)
    print()
    return 0 if res["ok"] else 1


sys.exit(main())
