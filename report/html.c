/* report/html.c: a page that stands alone, its start and its end (see html.h). */
#include "report/html.h"

#include "util/plot.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- the page ---- */

static const char style[] =
	"body{font:14px/1.45 system-ui,-apple-system,'Segoe UI',Roboto,'DejaVu Sans',sans-serif;"
	"color:#1b1b1b;background:#fff;margin:0 auto;max-width:1200px;padding:12px 24px 48px}\n"
	"h1{font-size:22px;margin:10px 0 2px}h2{font-size:18px;margin:30px 0 8px;"
	"border-bottom:2px solid #444;padding-bottom:3px}h3{font-size:15px;margin:18px 0 6px}\n"
	".meta{color:#444;margin:0 0 8px}\n"
	".answer{font-size:17px;border:2px solid #222;border-left-width:8px;padding:10px 14px;"
	"margin:14px 0;background:#f4f4f4}.answer b{font-size:20px}\n"
	".hint{border-left:4px solid #888;padding:4px 12px;margin:8px 0}\n"
	".tw{overflow-x:auto;margin:6px 0 14px}\n"
	"table{border-collapse:collapse;font-variant-numeric:tabular-nums;font-size:13px}\n"
	"th,td{border:1px solid #b8b8b8;padding:3px 7px;text-align:right;vertical-align:top;"
	"white-space:nowrap}\n.ci{font-size:11px;color:#444}\n"
	"th{background:#ececec}th[scope=row],.l{text-align:left}\n"
	"caption{text-align:left;font-weight:600;padding:2px 0 4px;white-space:normal}\n"
	".over{font-weight:700;text-decoration:underline}\n"
	".na{color:#555;font-style:italic}\n"
	".tag{font-size:11px;font-weight:700;border:1px solid #555;border-radius:3px;"
	"padding:0 3px}.answer .tag{font-size:inherit}\n"
	"tr.cb td,tr.cb th{background:#f3f3f3}.line{font-size:13px;color:#333}\n"
	"pre{background:#f6f6f6;border:1px solid #ddd;padding:8px;overflow:auto;max-height:420px;"
	"font-size:12px}\n"
	"details{margin:6px 0}summary{font-weight:600}\n"
	"figure{margin:10px 0 18px}svg{display:block;max-width:100%;height:auto}\n";

void pv_report_begin(struct pv_buf *out, const char *title)
{
	pv_buf_addstr(out, "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
			   /* nothing may be fetched: no script, no image, no font, no frame */
			   "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src "
			   "'none'; style-src 'unsafe-inline'; img-src data:; base-uri 'none'; "
			   "form-action 'none'\">\n"
			   "<meta name=\"viewport\" content=\"width=device-width, "
			   "initial-scale=1\">\n<meta name=\"generator\" content=\"provision\">\n"
			   "<title>");
	pv_escape_xml(out, title);
	pv_buf_addstr(out, "</title>\n<style>\n");
	pv_buf_addstr(out, style);
	pv_buf_addstr(out, pv_plot_style);
	pv_buf_addstr(out, "</style>\n</head>\n<body>\n");
}

void pv_report_end(struct pv_buf *out)
{
	pv_buf_addstr(out, "</body>\n</html>\n");
}
