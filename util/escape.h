/* util/escape.h: text made safe for a terminal. Text that reaches provision's output may come
 * from anywhere (a lab id, a remote host's stderr, a client's error line); a terminal acts on
 * some bytes (ESC starts a sequence that can move the cursor, retitle the window or rewrite
 * what was printed, BEL rings, CR overwrites the line), so every such byte is shown as \xNN
 * instead. Pure: no I/O. */
#ifndef PV_UTIL_ESCAPE_H
#define PV_UTIL_ESCAPE_H

#include <stdbool.h>
#include <stddef.h>

#include "util/buf.h"

/* Append in (len bytes) to out, every byte shown as it is except: a C0 control other than
 * '\n' and '\t', DEL, a C1 control written in UTF-8 (U+0080..U+009F, which some terminals
 * obey) and any byte that is not part of valid UTF-8 (a lone 0x9b is CSI to a Latin-1
 * terminal) become \xNN. Returns how many bytes of in were taken: all of them when final;
 * otherwise a UTF-8 sequence cut short by the end of in is left for the next call (a stream
 * written in pieces). -1 when out ran out of memory. */
long pv_escape_text(struct pv_buf *out, const char *in, size_t len, bool final);

#endif
