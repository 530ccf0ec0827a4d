/* report/html.h: pages that stand alone (report.html, compare --html, copy's and sweep's pages;
 * docs/report.md): one file with its style inline and its plots as inline SVG (util/plot.h), no
 * script, and a Content-Security-Policy that lets the page fetch nothing at all, so it opens
 * the same from a mail attachment, offline.
 *
 * Builders append to a buffer (util/buf.h; failure is sticky, the caller checks once). */
#ifndef PV_REPORT_HTML_H
#define PV_REPORT_HTML_H

#include <stdbool.h>
#include <stddef.h>

#include "util/buf.h"
#include "util/escape.h" /* text in a page: pv_escape_xml, the one escaper */
#include "util/plot.h"	 /* its plots */

/* The page's start (doctype, charset, the policy, the style, the title, <body>) and end. */
void pv_report_begin(struct pv_buf *out, const char *title);
void pv_report_end(struct pv_buf *out);

#endif
