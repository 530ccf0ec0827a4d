/* util/plot.c: the one SVG plotter (see plot.h). */
#include "util/plot.h"

#include "util/escape.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char pv_plot_style[] =
	"svg text{font:12px system-ui,'DejaVu Sans',sans-serif;fill:#222}\n"
	"svg .t{font-size:14px;font-weight:600}svg .sm{font-size:10px;fill:#555}\n"
	".grid{stroke:#e4e4e4}.axis{stroke:#333;fill:none}.mk{stroke:#888;stroke-dasharray:3 3}\n"
	".vl{stroke:#222;stroke-dasharray:6 4}.hl{stroke:#c0392b;stroke-dasharray:2 3}\n"
	".c0{stroke:#1f5fa8;fill:#1f5fa8}.c1{stroke:#c0392b;fill:#c0392b}"
	".c2{stroke:#2e8b3a;fill:#2e8b3a}.c3{stroke:#7d3c98;fill:#7d3c98}"
	".c4{stroke:#c77c02;fill:#c77c02}.c5{stroke:#4d4d4d;fill:#4d4d4d}"
	".c6{stroke:#0f8b8d;fill:#0f8b8d}.c7{stroke:#b0306a;fill:#b0306a}\n"
	".ln{fill:none;stroke-width:1.8}.wh{fill:none;stroke-width:1.2}\n"
	".d1{stroke-dasharray:7 4}.d2{stroke-dasharray:2 3}.d3{stroke-dasharray:9 3 2 3}\n";

/* ---- plots ---- */

struct frame {
	double W, H;	      /* the whole SVG */
	double L, R, T, B;    /* the plot area */
	double x0, x1;	      /* the x range */
	double y0, y1, ystep; /* left axis */
	double z0, z1, zstep; /* right axis */
	double xstep;
};

/* An axis ends whatever numbers it is given (a run's folder is anyone's): its bounds are
 * finite, within +-BIG (so that their difference is too), apart (a span a double can step
 * through), and it draws at most TICKS_MAX ticks. */
#define BIG	  1e300
#define TICKS_MAX 50

static double bounded(double v, double if_nan)
{
	return isnan(v) ? if_nan : v > BIG ? BIG : v < -BIG ? -BIG : v;
}

/* hi, or above lo by a span one can step through when it is not */
static double apart(double lo, double hi)
{
	return hi - lo >= 1e-9 * fmax(1, fabs(lo)) ? hi : lo + fmax(1, fabs(lo) * 1e-6);
}

/* Ticks of 1, 2 or 5 times a power of ten, about n of them, covering [lo, hi]. */
static void nice(double lo, double hi, int n, double *a, double *b, double *step)
{
	double raw, mag, f;

	lo = bounded(lo, 0);
	hi = apart(lo, bounded(hi, lo + 1));
	raw = (hi - lo) / n;
	mag = pow(10, floor(log10(raw)));
	f = raw / mag;
	*step = (f <= 1 ? 1 : f <= 2 ? 2 : f <= 5 ? 5 : 10) * mag;
	*a = floor(lo / *step + 1e-9) * *step;
	*b = ceil(hi / *step - 1e-9) * *step;
}

/* Time ticks: whole seconds, minutes or hours. */
static double time_step(double span)
{
	static const double steps[] = {1,   2,	 5,    10,   15,   30,	 60,	120,  300,
				       600, 900, 1200, 1800, 3600, 7200, 10800, 21600};

	for (size_t i = 0; i < sizeof(steps) / sizeof(steps[0]); i++)
		if (span / steps[i] <= 10)
			return steps[i];
	return 43200;
}

/* The ticks from a by step up to b (v: TICKS_MAX of room): how many. A step that would make
 * more is doubled until it does not; a tick that would not move ends them. */
static size_t ticks(double a, double b, double step, double *v)
{
	size_t n = 0;

	if (!(step > 0) || !isfinite(step) || !isfinite(a) || !isfinite(b))
		return 0;
	while ((b - a) / step > TICKS_MAX - 1)
		step *= 2;
	for (size_t i = 0; i < TICKS_MAX; i++) {
		double t = a + (double)i * step;

		if (t > b + step * 1e-6 || (n && !(t > v[n - 1])))
			break;
		v[n++] = t;
	}
	return n;
}

static double fx(const struct frame *f, double x)
{
	return f->L + (f->R - f->L) * (x - f->x0) / (f->x1 - f->x0);
}

static double fy(const struct frame *f, int axis, double y)
{
	double lo = axis ? f->z0 : f->y0, hi = axis ? f->z1 : f->y1, v;

	v = f->B - (f->B - f->T) * (y - lo) / (hi - lo);
	return v < f->T - 4 ? f->T - 4 : v > f->B + 4 ? f->B + 4 : v;
}

static void tick_label(struct pv_buf *out, enum pv_plot_x kind, double v, double span)
{
	if (kind == PV_PLOT_X_TIME && fabs(v) < 1e15) {
		long s = lround(v);

		if (span >= 3600)
			pv_buf_addf(out, "%ld:%02ld", s / 3600, s % 3600 / 60);
		else
			pv_buf_addf(out, "%ld:%02ld", s / 60, s % 60);
	} else {
		pv_buf_addf(out, "%g", fabs(v) < 1e-12 ? 0 : v);
	}
}

/* A marker of shape m, its class its colour's (and cls's, when not NULL), with its tooltip. */
static void marker(struct pv_buf *out, char m, int color, const char *cls, double x, double y,
		   const char *tip)
{
	char c[64];

	snprintf(c, sizeof(c), "c%d%s%s", color, cls ? " " : "", cls ? cls : "");
	switch (m) {
	case 's':
		pv_buf_addf(out,
			    "<rect class=\"%s\" x=\"%.1f\" y=\"%.1f\" width=\"8\" height=\"8\">", c,
			    x - 4, y - 4);
		break;
	case 't':
		pv_buf_addf(out, "<path class=\"%s\" d=\"M%.1f,%.1fl5,9h-10z\">", c, x, y - 6);
		break;
	case 'd':
		pv_buf_addf(out, "<path class=\"%s\" d=\"M%.1f,%.1fl5,5l-5,5l-5,-5z\">", c, x,
			    y - 5);
		break;
	case 'x':
		pv_buf_addf(out,
			    "<path class=\"%s\" style=\"fill:none;stroke-width:2\" "
			    "d=\"M%.1f,%.1fl8,8m0,-8l-8,8\">",
			    c, x - 4, y - 4);
		break;
	default:
		pv_buf_addf(out, "<circle class=\"%s\" cx=\"%.1f\" cy=\"%.1f\" r=\"4.5\">", c, x,
			    y);
		break;
	}
	if (tip) {
		pv_buf_addstr(out, "<title>");
		pv_escape_xml(out, tip);
		pv_buf_addstr(out, "</title>");
	}
	pv_buf_addstr(out, m == 's' ? "</rect>\n" : m == 'o' || !m ? "</circle>\n" : "</path>\n");
}

/* A series' line: M/L through its points, a gap at each NAN, thinned to the lowest and the
 * highest point of each pixel column when there are many more points than columns. */
static void line(struct pv_buf *out, const struct frame *f, const struct pv_plot_series *s)
{
	bool pen = false, thin = (double)s->n > 2 * (f->R - f->L);
	long col = -1;
	size_t lo = 0, hi = 0;

	pv_buf_addf(out, "<path class=\"ln c%d%s\" d=\"", s->color,
		    s->dash == 1   ? " d1"
		    : s->dash == 2 ? " d2"
		    : s->dash == 3 ? " d3"
				   : "");
	for (size_t i = 0; i <= s->n; i++) {
		bool gap = i < s->n && (isnan(s->y[i]) || isnan(s->x[i]));
		long c = i < s->n ? lround(fx(f, s->x[i])) : -2;

		if (thin && col >= 0 && (c != col || gap)) {
			/* the column's lowest and highest, in the order they came */
			size_t a = lo < hi ? lo : hi, b = lo < hi ? hi : lo;

			pv_buf_addf(out, "%c%.1f,%.1f", pen ? 'L' : 'M', fx(f, s->x[a]),
				    fy(f, s->axis, s->y[a]));
			pen = true;
			if (b != a)
				pv_buf_addf(out, "L%.1f,%.1f", fx(f, s->x[b]),
					    fy(f, s->axis, s->y[b]));
			col = -1;
		}
		if (i == s->n)
			break;
		if (gap) {
			pen = false;
			continue;
		}
		if (!thin) {
			pv_buf_addf(out, "%c%.1f,%.1f", pen ? 'L' : 'M', fx(f, s->x[i]),
				    fy(f, s->axis, s->y[i]));
			pen = true;
			continue;
		}
		if (col != c) {
			col = c;
			lo = hi = i;
		} else {
			if (s->y[i] < s->y[lo])
				lo = i;
			if (s->y[i] > s->y[hi])
				hi = i;
		}
	}
	pv_buf_addstr(out, "\"/>\n");
}

/* The legend's sample of a series: its line and its marker. */
static void sample(struct pv_buf *out, const struct pv_plot_series *s, double x, double y)
{
	if (s->line || !s->mark)
		pv_buf_addf(out, "<path class=\"ln c%d%s\" d=\"M%.1f,%.1fh26\"/>", s->color,
			    s->dash == 1   ? " d1"
			    : s->dash == 2 ? " d2"
			    : s->dash == 3 ? " d3"
					   : "",
			    x, y);
	if (s->mark)
		marker(out, s->mark, s->color, NULL, x + 13, y, NULL);
}

static void range(const struct pv_plot *p, int axis, double *lo, double *hi)
{
	*lo = INFINITY;
	*hi = -INFINITY;
	for (size_t k = 0; k < p->ns; k++) {
		const struct pv_plot_series *s = &p->s[k];

		if (s->axis != axis)
			continue;
		for (size_t i = 0; i < s->n; i++) {
			double v[3] = {s->y[i], s->lo ? s->lo[i] : NAN, s->hi ? s->hi[i] : NAN};

			for (int j = 0; j < 3; j++)
				if (isfinite(v[j])) {
					*lo = fmin(*lo, v[j]);
					*hi = fmax(*hi, v[j]);
				}
		}
	}
}

void pv_plot_init(struct pv_plot *p)
{
	memset(p, 0, sizeof(*p));
	p->xmin = p->xmax = p->ymin = p->ymax = p->y2min = p->y2max = NAN;
	p->hline2 = p->vline = NAN;
}

void pv_plot_svg(struct pv_buf *out, const struct pv_plot *p)
{
	struct frame f;
	double lo, hi, legend_y, x, row_h = 18, tv[TICKS_MAX];
	int rows = 1;
	size_t nt;

	memset(&f, 0, sizeof(f));
	f.W = p->width ? p->width : 960;
	f.H = p->height ? p->height : 280;
	f.L = 70;
	f.R = f.W - (p->y2label ? 70 : 20);
	f.T = 38;
	f.B = f.H - 42;
	/* x */
	f.x0 = INFINITY;
	f.x1 = -INFINITY;
	for (size_t k = 0; k < p->ns; k++)
		for (size_t i = 0; i < p->s[k].n; i++)
			if (isfinite(p->s[k].x[i])) {
				f.x0 = fmin(f.x0, p->s[k].x[i]);
				f.x1 = fmax(f.x1, p->s[k].x[i]);
			}
	for (size_t k = 0; k < p->nmarks; k++) {
		f.x0 = fmin(f.x0, p->marks[k].x);
		f.x1 = fmax(f.x1, p->marks[k].x);
	}
	if (!isnan(p->xmin))
		f.x0 = p->xmin;
	if (!isnan(p->xmax))
		f.x1 = p->xmax;
	if (!isfinite(f.x0) || !isfinite(f.x1)) {
		f.x0 = 0;
		f.x1 = 1;
	}
	f.x0 = bounded(f.x0, 0);
	f.x1 = bounded(f.x1, 1);
	if (p->xkind == PV_PLOT_X_TIME) {
		f.xstep = time_step(f.x1 - f.x0);
		f.x1 = apart(f.x0, f.x1 > f.x0 ? f.x1 : f.x0 + f.xstep);
	} else {
		double a, b;

		nice(f.x0, f.x1, 8, &a, &b, &f.xstep);
		if (isnan(p->xmin))
			f.x0 = a;
		if (isnan(p->xmax))
			f.x1 = b;
		f.x1 = apart(f.x0, f.x1 > f.x0 ? f.x1 : f.x0 + f.xstep);
	}
	/* y: from 0 unless told */
	range(p, 0, &lo, &hi);
	if (!isfinite(hi))
		hi = 1;
	nice(isnan(p->ymin) ? fmin(0, lo) : p->ymin, isnan(p->ymax) ? hi * 1.05 : p->ymax, 5, &f.y0,
	     &f.y1, &f.ystep);
	range(p, 1, &lo, &hi);
	if (!isfinite(hi))
		hi = 1;
	nice(isnan(p->y2min) ? fmin(0, lo) : p->y2min, isnan(p->y2max) ? hi * 1.05 : p->y2max, 5,
	     &f.z0, &f.z1, &f.zstep);
	/* the legend's rows */
	x = f.L;
	for (size_t k = 0; k < p->ns; k++) {
		double w = 40 + 6.6 * (double)strlen(p->s[k].name ? p->s[k].name : "") + 18;

		if (x + w > f.W - 10 && x > f.L) {
			rows++;
			x = f.L;
		}
		x += w;
	}
	legend_y = f.H + 4;
	f.H += rows * row_h + 6;

	if (p->standalone)
		pv_buf_addstr(out, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
				   "<svg xmlns=\"http://www.w3.org/2000/svg\"");
	else
		pv_buf_addstr(out, "<figure>\n<svg");
	pv_buf_addf(out,
		    " id=\"%s\" class=\"plot\" "
		    "viewBox=\"0 0 %.0f %.0f\" width=\"%.0f\" height=\"%.0f\" role=\"img\" "
		    "aria-labelledby=\"%s-t %s-d\">\n<title id=\"%s-t\">",
		    p->id, f.W, f.H, f.W, f.H, p->id, p->id, p->id);
	pv_escape_xml(out, p->title);
	pv_buf_addf(out, "</title>\n<desc id=\"%s-d\">", p->id);
	pv_escape_xml(out, p->desc);
	pv_buf_addstr(out, "</desc>\n");
	if (p->standalone)
		pv_buf_addf(out,
			    "<style>\n%s</style>\n<rect width=\"100%%\" height=\"100%%\" "
			    "fill=\"white\"/>\n",
			    pv_plot_style);
	pv_buf_addf(out, "<text class=\"t\" x=\"%.0f\" y=\"18\" text-anchor=\"middle\">", f.W / 2);
	pv_escape_xml(out, p->title);
	pv_buf_addstr(out, "</text>\n");
	if (p->subtitle) {
		pv_buf_addf(out, "<text class=\"sm\" x=\"%.0f\" y=\"31\" text-anchor=\"middle\">",
			    f.W / 2);
		pv_escape_xml(out, p->subtitle);
		pv_buf_addstr(out, "</text>\n");
	}
	/* grid and axes */
	nt = ticks(f.y0, f.y1, f.ystep, tv);
	for (size_t i = 0; i < nt; i++) {
		double v = tv[i];

		pv_buf_addf(out,
			    "<line class=\"grid\" x1=\"%.1f\" x2=\"%.1f\" y1=\"%.1f\" y2=\"%.1f\"/>"
			    "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\">%g</text>\n",
			    f.L, f.R, fy(&f, 0, v), fy(&f, 0, v), f.L - 6, fy(&f, 0, v) + 4,
			    fabs(v) < f.ystep * 1e-9 ? 0 : v);
	}
	nt = p->y2label ? ticks(f.z0, f.z1, f.zstep, tv) : 0;
	for (size_t i = 0; i < nt; i++)
		pv_buf_addf(out, "<text x=\"%.1f\" y=\"%.1f\">%g</text>\n", f.R + 6,
			    fy(&f, 1, tv[i]) + 4, fabs(tv[i]) < f.zstep * 1e-9 ? 0 : tv[i]);
	nt = ticks(ceil(f.x0 / f.xstep - 1e-9) * f.xstep, f.x1, f.xstep, tv);
	for (size_t i = 0; i < nt; i++) {
		double v = tv[i];

		pv_buf_addf(out,
			    "<line class=\"axis\" x1=\"%.1f\" x2=\"%.1f\" y1=\"%.1f\" y2=\"%.1f\"/>"
			    "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">",
			    fx(&f, v), fx(&f, v), f.B, f.B + 5, fx(&f, v), f.B + 18);
		tick_label(out, p->xkind, v, f.x1 - f.x0);
		pv_buf_addstr(out, "</text>\n");
	}
	pv_buf_addf(out, "<path class=\"axis\" d=\"M%.1f,%.1fV%.1fH%.1f%s\"/>\n", f.L, f.T, f.B,
		    f.R, p->y2label ? "V38" : "");
	pv_buf_addf(out, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">", (f.L + f.R) / 2,
		    f.B + 34);
	pv_escape_xml(out, p->xlabel);
	pv_buf_addf(out,
		    "</text>\n<text transform=\"translate(16,%.1f) rotate(-90)\" "
		    "text-anchor=\"middle\">",
		    (f.T + f.B) / 2);
	pv_escape_xml(out, p->ylabel);
	pv_buf_addstr(out, "</text>\n");
	if (p->y2label) {
		pv_buf_addf(out,
			    "<text transform=\"translate(%.1f,%.1f) rotate(90)\" "
			    "text-anchor=\"middle\">",
			    f.W - 14, (f.T + f.B) / 2);
		pv_escape_xml(out, p->y2label);
		pv_buf_addstr(out, "</text>\n");
	}
	/* step boundaries, the answer, the threshold */
	for (size_t k = 0; k < p->nmarks; k++) {
		double mx = fx(&f, p->marks[k].x);

		if (mx < f.L - 0.5 || mx > f.R + 0.5)
			continue;
		pv_buf_addf(out,
			    "<line class=\"mk\" x1=\"%.1f\" x2=\"%.1f\" y1=\"%.1f\" y2=\"%.1f\"/>",
			    mx, mx, f.T, f.B);
		if (p->marks[k].label) {
			pv_buf_addf(out, "<text class=\"sm\" x=\"%.1f\" y=\"%.1f\">", mx + 2,
				    f.T - 3);
			pv_escape_xml(out, p->marks[k].label);
			pv_buf_addstr(out, "</text>");
		}
		pv_buf_addstr(out, "\n");
	}
	if (!isnan(p->hline2) && p->y2label)
		pv_buf_addf(
			out,
			"<line class=\"hl\" x1=\"%.1f\" x2=\"%.1f\" y1=\"%.1f\" y2=\"%.1f\"/>\n",
			f.L, f.R, fy(&f, 1, p->hline2), fy(&f, 1, p->hline2));
	if (!isnan(p->vline)) {
		double vx = fx(&f, p->vline);

		/* the label on the line's left when it is near the right edge */
		pv_buf_addf(out,
			    "<line class=\"vl\" x1=\"%.1f\" x2=\"%.1f\" y1=\"%.1f\" y2=\"%.1f\"/>"
			    "<text x=\"%.1f\" y=\"%.1f\"%s>",
			    vx, vx, f.T, f.B, vx > f.R - 80 ? vx - 4 : vx + 4, f.T + 12,
			    vx > f.R - 80 ? " text-anchor=\"end\"" : "");
		pv_escape_xml(out, p->vlabel);
		pv_buf_addstr(out, "</text>\n");
	}
	/* the series */
	for (size_t k = 0; k < p->ns; k++) {
		const struct pv_plot_series *s = &p->s[k];

		pv_buf_addf(out, "<g class=\"series\" data-name=\"");
		pv_escape_xml(out, s->name);
		pv_buf_addf(out, "\" data-points=\"%zu\">\n", s->n);
		if (s->line)
			line(out, &f, s);
		for (size_t i = 0; s->lo && s->hi && i < s->n; i++) {
			double x0 = fx(&f, s->x[i]);

			if (isnan(s->lo[i]) || isnan(s->hi[i]) || isnan(s->x[i]))
				continue;
			pv_buf_addf(out,
				    "<path class=\"wh c%d\" d=\"M%.1f,%.1fV%.1fM%.1f,%.1fh8M%.1f,"
				    "%.1fh8\"/>\n",
				    s->color, x0, fy(&f, s->axis, s->lo[i]),
				    fy(&f, s->axis, s->hi[i]), x0 - 4, fy(&f, s->axis, s->lo[i]),
				    x0 - 4, fy(&f, s->axis, s->hi[i]));
		}
		for (size_t i = 0; s->mark && i < s->n; i++)
			if (!isnan(s->y[i]) && !isnan(s->x[i]))
				marker(out, s->mark, s->color, s->cls, fx(&f, s->x[i]),
				       fy(&f, s->axis, s->y[i]), s->tip ? s->tip[i] : NULL);
		pv_buf_addstr(out, "</g>\n");
	}
	/* the legend */
	x = f.L;
	for (size_t k = 0; k < p->ns; k++) {
		double w = 40 + 6.6 * (double)strlen(p->s[k].name ? p->s[k].name : "") + 18;

		if (x + w > f.W - 10 && x > f.L) {
			legend_y += row_h;
			x = f.L;
		}
		sample(out, &p->s[k], x, legend_y + 9);
		pv_buf_addf(out, "<text x=\"%.1f\" y=\"%.1f\">", x + 34, legend_y + 13);
		pv_escape_xml(out, p->s[k].name);
		pv_buf_addstr(out, "</text>\n");
		x += w;
	}
	pv_buf_addstr(out, p->standalone ? "</svg>\n" : "</svg>\n</figure>\n");
}

/* How many bytes of s to show in at most max: never a part of a UTF-8 character (which
 * would show as U+FFFD); a character has at most 3 bytes after its first, so bytes that are
 * no UTF-8 at all are still shown. */
static size_t cut(const char *s, size_t max)
{
	size_t n = strlen(s), k = max;

	if (n <= max)
		return n;
	while (k && max - k < 3 && ((unsigned char)s[k] & 0xc0) == 0x80)
		k--;
	return ((unsigned char)s[k] & 0xc0) == 0x80 ? max : k;
}

/* The x of v on an axis from 0 to b drawn from L to R, held on it: a value below 0, or past
 * the axis's end (which stops at BIG), stops at its edge, never off the plot or infinite. */
static double bar_x(double L, double R, double b, double v)
{
	return L + (R - L) * fmin(fmax(v, 0), b) / b;
}

void pv_plot_bars(struct pv_buf *out, const char *id, const char *title, const char *unit,
		  const char *const *labels, const double *v, const double *lo, const double *hi,
		  const bool *filled, size_t n)
{
	const double W = 960, L = 300, R = W - 30, T = 38, row = 30;
	double H = T + row * (double)n + 44, vmax = 0, a, b, step, tv[TICKS_MAX];
	size_t nt;

	for (size_t i = 0; i < n; i++) {
		if (isfinite(v[i]))
			vmax = fmax(vmax, v[i]);
		if (hi && isfinite(hi[i]))
			vmax = fmax(vmax, hi[i]);
	}
	if (!(vmax > 0))
		vmax = 1;
	nice(0, vmax * 1.05, 6, &a, &b, &step);
	if (!(b > 0))
		b = 1;
	pv_buf_addf(out, "<figure>\n<svg id=\"");
	pv_escape_xml(out, id);
	pv_buf_addf(out,
		    "\" class=\"bars\" role=\"img\" viewBox=\"0 0 %.0f %.0f\" width=\"%.0f\" "
		    "height=\"%.0f\" aria-labelledby=\"",
		    W, H, W, H);
	pv_escape_xml(out, id);
	pv_buf_addstr(out, "-t\"><title id=\"");
	pv_escape_xml(out, id);
	pv_buf_addstr(out, "-t\">");
	pv_escape_xml(out, title);
	pv_buf_addf(out,
		    "</title>\n<text x=\"%.0f\" y=\"20\" text-anchor=\"middle\" "
		    "font-weight=\"bold\">",
		    W / 2);
	pv_escape_xml(out, title);
	pv_buf_addstr(out, "</text>\n");
	nt = ticks(0, b, step, tv);
	for (size_t i = 0; i < nt; i++) {
		double x = tv[i], px = L + (R - L) * x / b;

		pv_buf_addf(
			out,
			"<line x1=\"%.1f\" y1=\"%.0f\" x2=\"%.1f\" y2=\"%.0f\" stroke=\"#ddd\"/>"
			"<text x=\"%.1f\" y=\"%.0f\" text-anchor=\"middle\" font-size=\"12\">"
			"%g</text>\n",
			px, T, px, T + row * (double)n, px, T + row * (double)n + 16, x);
	}
	pv_buf_addf(out, "<text x=\"%.0f\" y=\"%.0f\" text-anchor=\"middle\" font-size=\"12\">",
		    (L + R) / 2, H - 8);
	pv_escape_xml(out, unit);
	pv_buf_addstr(out, "</text>\n");
	for (size_t i = 0; i < n; i++) {
		double y = T + row * (double)i + 5,
		       w = isfinite(v[i]) ? bar_x(L, R, b, v[i]) - L : 0;

		pv_buf_addf(out, "<g class=\"bar\" data-name=\"");
		pv_escape_xml(out, labels[i]);
		pv_buf_addf(out,
			    "\" data-value=\"%g\"><text x=\"%.0f\" y=\"%.0f\" "
			    "text-anchor=\"end\" font-size=\"13\">",
			    isfinite(v[i]) ? v[i] : 0, L - 8, y + 14);
		pv_escape_xmln(out, labels[i], cut(labels[i], 40));
		pv_buf_addf(out,
			    "</text><rect x=\"%.0f\" y=\"%.0f\" width=\"%.1f\" height=\"20\" "
			    "fill=\"%s\" stroke=\"#1f5fa8\"/>",
			    L, y, w,
			    filled && filled[i] ? "#1f5fa8"
			    : i == 0		? "#999"
						: "#fff");
		if (lo && hi && isfinite(lo[i]) && isfinite(hi[i])) {
			double x0 = bar_x(L, R, b, lo[i]), x1 = bar_x(L, R, b, hi[i]);

			pv_buf_addf(out,
				    "<path class=\"wh\" d=\"M%.1f %.1fH%.1fM%.1f %.1fV%.1fM%.1f "
				    "%.1fV%.1f\" stroke=\"#000\"/>",
				    x0, y + 10, x1, x0, y + 4, y + 16, x1, y + 4, y + 16);
		}
		pv_buf_addstr(out, "</g>\n");
	}
	pv_buf_addstr(out, "</svg>\n</figure>\n");
}
