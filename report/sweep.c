/* report/sweep.c: sweep's report.html (see report.h): a bar per condition with its interval,
 * then the sweep's text. */
#include "report/html.h"
#include "report/report.h"

void pv_report_sweep_page(struct pv_buf *b, const char *title, const char *chart, const char *unit,
			  const char *const *labels, const double *v, const double *lo,
			  const double *hi, const bool *filled, size_t n, const char *text,
			  size_t len)
{
	pv_report_begin(b, title);
	pv_buf_addstr(b, "<h1>");
	pv_escape_xml(b, title);
	pv_buf_addstr(b, "</h1>\n");
	pv_plot_bars(b, "sweep", chart, unit, labels, v, lo, hi, filled, n);
	pv_buf_addstr(b, "<p>Bars: the median of each condition's repeats; whiskers: the 95% "
			 "interval of their mean. The grey bar is the baseline; a blue-filled bar "
			 "is beyond the noise against it, a white one is not.</p>\n<pre>");
	pv_escape_xmln(b, text, len);
	pv_buf_addstr(b, "</pre>\n");
	pv_report_end(b);
}
