/* util/escape.h: text made safe where it lands, the one place that does it. Text that reaches
 * provision's output or its pages may come from anywhere (a lab id, a remote host's stderr, a
 * client's error line, a run's folder mailed around):
 *
 * - on a terminal, some bytes act (ESC starts a sequence that can move the cursor, retitle
 *   the window or rewrite what was printed, BEL rings, CR overwrites the line): every such
 *   byte is shown as \xNN instead (pv_escape_text);
 * - in HTML and XML (report.html, compare --html, load.svg), markup characters become
 *   entities and what is not text becomes U+FFFD (pv_escape_xml).
 *
 * Both show the Unicode bidirectional controls (U+061C, U+200E, U+200F, U+202A..U+202E,
 * U+2066..U+2069) as \uNNNN: left in, they reorder what a reader sees ("Trojan Source",
 * CVE-2021-42574), so that an error or a report could read other than it is; shown, they read
 * as what they are. Pure: no I/O. */
#ifndef PV_UTIL_ESCAPE_H
#define PV_UTIL_ESCAPE_H

#include <stdbool.h>
#include <stddef.h>

#include "util/buf.h"

/* Append in (len bytes) to out, every byte shown as it is except: a C0 control other than
 * '\n' and '\t', DEL, a C1 control written in UTF-8 (U+0080..U+009F, which some terminals
 * obey) and any byte that is not part of valid UTF-8 (a lone 0x9b is CSI to a Latin-1
 * terminal) become \xNN; a bidirectional control becomes \uNNNN. Returns how many bytes of in
 * were taken: all of them when final; otherwise a UTF-8 sequence cut short by the end of in
 * is left for the next call (a stream written in pieces). -1 when out ran out of memory. */
long pv_escape_text(struct pv_buf *out, const char *in, size_t len, bool final);

/* Append s (n bytes; pv_escape_xml: up to its NUL, nothing for NULL) to out as text for HTML
 * and XML, element content and attribute values alike: & < > " ' as entities (&amp; &lt;
 * &gt; &quot; &#39;, the same in both); a control character other than tab and newline (C0,
 * DEL, C1), the noncharacters U+FFFE and U+FFFF (XML 1.0 allows none of them) and every byte
 * that is not part of valid UTF-8 as U+FFFD; a bidirectional control as \uNNNN. A failure
 * is the buffer's (sticky, util/buf.h). */
void pv_escape_xmln(struct pv_buf *out, const char *s, size_t n);
void pv_escape_xml(struct pv_buf *out, const char *s);

#endif
