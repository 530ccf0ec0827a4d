#!/usr/bin/env python3
# tests/integration/pty_type.py PROMPT SECRET-FILE CMD...: run CMD on a terminal of its own (a
# new pseudo-terminal, its controlling terminal, as a person at a keyboard would have), wait
# for PROMPT (a Python regular expression) on it, type the secret SECRET-FILE holds (its first
# line) and Enter, and let CMD run to its end. Prints what the terminal showed and exits with
# CMD's status (128+N for signal N). The secret is never on this command line, and must not
# show on the terminal: typed without echo, it is not in what the terminal showed.
#   90: PROMPT never came (60 s, or CMD ended first); 91: the secret showed on the terminal.
import os
import pty
import re
import select
import sys
import termios
import time

WAIT = 60


def main():
    prompt, secret_file, cmd = re.compile(sys.argv[1].encode()), sys.argv[2], sys.argv[3:]
    secret = open(secret_file, "rb").read().split(b"\n", 1)[0]
    pid, fd = pty.fork()
    if pid == 0:
        try:
            os.execvp(cmd[0], cmd)
        finally:
            os._exit(127)
    seen, typed, end = b"", False, time.monotonic() + WAIT
    while True:
        r, _, _ = select.select([fd], [], [], 0.2)
        if r:
            try:
                data = os.read(fd, 65536)
            except OSError:  # EIO: the terminal's last holder closed it
                data = b""
            if not data:
                break
            seen += data
        if not typed and prompt.search(seen):
            # typed once the program has turned the echo off: a program that prints its prompt
            # first and then turns the echo off with TCSAFLUSH (provision does) would drop what
            # came before, and echo it (5 s at most: then typed all the same, to be seen)
            until = time.monotonic() + 5
            while termios.tcgetattr(fd)[3] & termios.ECHO and time.monotonic() < until:
                time.sleep(0.01)
            os.write(fd, secret + b"\n")
            typed = True
        if not typed and time.monotonic() > end:
            break
    if not typed:
        try:
            os.kill(pid, 15)
        except OSError:
            pass
    _, status = os.waitpid(pid, 0)
    sys.stdout.write(seen.replace(secret, b"<the secret>").decode("utf-8", "replace"))
    if not typed:
        sys.stderr.write("pty_type: no prompt /%s/ on the terminal\n" % sys.argv[1])
        return 90
    if secret in seen:
        sys.stderr.write("pty_type: the secret typed showed on the terminal (echoed)\n")
        return 91
    return os.WEXITSTATUS(status) if os.WIFEXITED(status) else 128 + os.WTERMSIG(status)


if __name__ == "__main__":
    sys.exit(main())
