/* remote/quote.h: quoting for the command lines and scripts provision sends to hosts. Pure
 * text (no I/O, no libssh): every remote command that carries a value from the playbook or the
 * command line builds it with these, one function per shell: POSIX sh, cmd.exe (OpenSSH for
 * Windows' default shell) and PowerShell. */
#ifndef PV_REMOTE_QUOTE_H
#define PV_REMOTE_QUOTE_H

#include "util/buf.h"

/* Append s to b quoted for a POSIX shell: '...' with each ' written as '\''. Any byte other
 * than NUL is safe inside, newlines included. -1 on allocation failure (b is then failed). */
int pv_remote_quote(struct pv_buf *b, const char *s);

/* Append "name=<quoted value>\n": a shell variable assignment for a script's preamble. */
int pv_remote_var(struct pv_buf *b, const char *name, const char *value);

/* Append s to b as one double-quoted argument for cmd.exe: "s".
 *
 * cmd.exe has no escape that works inside double quotes: %VAR% is still expanded there (and
 * !VAR! when delayed expansion is on, which a registry key can turn on for every cmd.exe), a
 * '"' ends the quoting, '^' is literal inside but not outside, and a line break ends the
 * command. So what cannot be made safe is refused, never escaped half-way: s may not hold '"',
 * '%', '!', a control character (0x00-0x1f, 0x7f) or any byte above 0x7f (cmd.exe and the
 * program it starts see the text through the console code page, whose "best fit" mapping turns
 * characters such as U+FF02 into '"'), may not end with '\' (a program parsing its command
 * line as the C runtime does reads \" as a quote inside the argument), and may not be empty.
 * Inside the quotes &, |, <, >, ^, (, ) and spaces are plain text.
 * Returns 0; PV_ECONFIG (recorded, b unchanged) when s is refused; PV_EIO (recorded) when out
 * of memory. */
int pv_remote_quote_cmd(struct pv_buf *b, const char *s);

/* Append s to b as a PowerShell single-quoted string: '...', in which nothing is expanded.
 * PowerShell takes any of ' and U+2018..U+201B as a single quote, so each is doubled (as its
 * own escaping does). Control characters (C0, DEL and C1) and text that is not valid UTF-8
 * are refused. Returns 0; PV_ECONFIG (recorded, b unchanged) when s is refused; PV_EIO
 * (recorded) when out of memory. A PowerShell command given to powershell.exe through cmd.exe
 * is then quoted as a whole with pv_remote_quote_cmd(). */
int pv_remote_quote_ps(struct pv_buf *b, const char *s);

#endif
