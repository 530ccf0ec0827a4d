/* util/plot.h: the one SVG plotter: the plots of report.html, compare --html, copy's and
 * sweep's pages (inline, in a page that holds pv_plot_style) and load.svg (a document of its
 * own). Plots tell their series apart by marker shape and dash as well as colour, with a
 * legend, a title and a description for screen readers; every text in them goes through the
 * one escaper (util/escape.h). Whatever numbers they are given (a run's folder is anyone's),
 * an axis ends, within bounds, with at most 50 ticks.
 *
 * Builders append to a buffer (util/buf.h; failure is sticky, the caller checks once). */
#ifndef PV_UTIL_PLOT_H
#define PV_UTIL_PLOT_H

#include <stdbool.h>
#include <stddef.h>

#include "util/buf.h"

enum pv_plot_x { PV_PLOT_X_NUMBER, PV_PLOT_X_TIME /* seconds, labelled m:ss or h:mm */ };

struct pv_plot_series {
	const char *name;
	const double *x, *y;	/* n points; a NAN y is a gap */
	const double *lo, *hi;	/* NULL, or a whisker per point (NAN: none) */
	const char *const *tip; /* NULL, or a tooltip per marked point */
	size_t n;
	int axis;	 /* 0: the left axis, 1: the right one */
	char mark;	 /* 'o' circle, 's' square, 't' triangle, 'd' diamond, 'x' cross, 0: none */
	int dash;	 /* 0 solid, 1 dashed, 2 dotted, 3 dash-dot */
	int color;	 /* 0..7: the palette */
	bool line;	 /* joined by a line (false: markers only) */
	const char *cls; /* NULL, or classes its markers carry besides their colour's ("pt
			  * scen": what a reader of the file looks for) */
};

struct pv_plot_mark {
	double x;	   /* a vertical line here (a step's start) ... */
	const char *label; /* ... labelled at its top; NULL: none */
};

struct pv_plot {
	const char *id;	   /* unique in the page: the SVG's id, its title's and description's */
	const char *title; /* above the plot */
	const char *desc;  /* what the plot shows, for screen readers */
	const char *xlabel, *ylabel, *y2label; /* y2label NULL: no right axis */
	enum pv_plot_x xkind;
	double xmin, xmax, ymin, ymax, y2min, y2max; /* NAN: from the data (y from 0) */
	double hline2;	    /* a dotted line at this right-axis value (NAN: none) */
	double vline;	    /* a dashed vertical line here (NAN: none) ... */
	const char *vlabel; /* ... with this label */
	const struct pv_plot_series *s;
	size_t ns;
	const struct pv_plot_mark *marks;
	size_t nmarks;
	int width, height;    /* the plot area with its axes; 0: 960 x 280 */
	const char *subtitle; /* a line under the title (what was measured); NULL: none */
	bool standalone;      /* a document of its own (an .svg file): the XML declaration, the SVG
			       * namespace, pv_plot_style inline and a white ground; else inline SVG in a
			       * page's <figure> (the page holds the style) */
};

/* p emptied, every bound and line NAN (from the data, none): a plot sets only what it fixes. */
void pv_plot_init(struct pv_plot *p);

/* The plot as SVG. Series with more points than two per pixel are thinned to the lowest and
 * highest value of each pixel column, which keeps every peak. */
void pv_plot_svg(struct pv_buf *out, const struct pv_plot *p);

/* A horizontal bar per label (v, NAN: none), whiskers from lo to hi (NULL: none), a bar filled
 * where filled[i] (NULL: none; the first, the baseline, is grey), as inline SVG. */
void pv_plot_bars(struct pv_buf *out, const char *id, const char *title, const char *unit,
		  const char *const *labels, const double *v, const double *lo, const double *hi,
		  const bool *filled, size_t n);

/* The style the plots' classes need (their palette, dashes, axes, grid, text): a page holds it
 * once; a standalone plot holds it itself. */
extern const char pv_plot_style[];

#endif
