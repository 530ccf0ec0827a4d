/* load/report.h: the results of a ramp of the built-in driver, as text for the run's folder
 * (docs/load.md): load.txt (a fixed-width table like FSCT's FSCT_data.txt and the answer),
 * load.csv (one row per step), load-kinds.csv (one row per step and scenario kind), load.json
 * and load.svg (users against throughput, overload and the server's CPU; it opens in a
 * browser).
 *
 * Pure text builders: each appends to a buffer (util/buf.h) and returns PV_OK, or PV_EIO when
 * out of memory. No I/O. */
#ifndef PV_LOAD_REPORT_H
#define PV_LOAD_REPORT_H

#include <stddef.h>

#include "load/model.h"
#include "load/answer.h"
#include "load/summary.h"
#include "util/buf.h"

/* load.txt: a header naming the settings, a row per step (users, scenarios/s, expected,
 * overload %, errors, median and p95 latency of every scenario in ms, the server's CPU %, and
 * notes on users not connected and clients lost), then the answer line (load/answer.h). */
int pv_load_report_txt(const struct pv_load_results *r, struct pv_buf *out);

/* load.csv: a header, then a row per step with every figure of struct pv_load_summary (latency
 * in ms, an absent CPU as an empty cell) and "carried" (1 when the step counts for the
 * answer). */
int pv_load_report_csv(const struct pv_load_results *r, struct pv_buf *out);

/* load-kinds.csv: the long form per kind: a header, then for every step a row per scenario
 * kind in the table's order (users, kind, weight, limit, counts, overload %, latency in ms). */
int pv_load_report_kinds_csv(const struct pv_load_results *r, struct pv_buf *out);

/* load.json, indented: {"version": 1, "title", "config": the settings, "steps": [each step's
 * figures, "all" kinds and per kind, "carried"], "answer": {"users", "step" (from 1), "line"}}
 * (users and step null when no step counts). */
int pv_load_report_json(const struct pv_load_results *r, struct pv_buf *out);

/* A client's own figures as load.json and manifest.json have them: {name, threads, cpu_driver,
 * cpu_top_loop, cpu_host, lag_ms_p95, lag_ms_max, bound} (docs/json.md). */
struct pv_json;
struct pv_json *pv_load_client_json(const struct pv_load_client *c);

/* load.svg: a standalone SVG, 800 x 500: users (x, from 0) against scenarios/s (left axis,
 * with the expected throughput as a dashed line), overload % and the server's CPU % (right
 * axis, 0-100, the threshold as a dotted line), the answer as a vertical line, one marker per
 * step for each series (class "pt scen", "pt overload", "pt cpu"; CPU only where measured),
 * each with a tooltip, axis ticks and labels, a legend and a title. Text is escaped. */
int pv_load_report_svg(const struct pv_load_results *r, struct pv_buf *out);

#endif
