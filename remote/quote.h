/* remote/quote.h: quoting for the command lines and scripts provision sends to hosts. Pure
 * text (no I/O, no libssh): every remote command that carries a value from the playbook or the
 * command line builds it with these. */
#ifndef PV_REMOTE_QUOTE_H
#define PV_REMOTE_QUOTE_H

#include "util/buf.h"

/* Append s to b quoted for a POSIX shell: '...' with each ' written as '\''. Any byte other
 * than NUL is safe inside, newlines included. -1 on allocation failure (b is then failed). */
int pv_remote_quote(struct pv_buf *b, const char *s);

/* Append "name=<quoted value>\n": a shell variable assignment for a script's preamble. */
int pv_remote_var(struct pv_buf *b, const char *name, const char *value);

#endif
