/* results/internal.h: what the files of results/ share and nobody else uses. */
#ifndef PV_RESULTS_INTERNAL_H
#define PV_RESULTS_INTERNAL_H

#include "results/results.h"

/* The next line of text (len bytes) from *pos, without its "\n" or "\r\n", in *line and *n:
 * false at the end. */
bool pv_results_next_line(const char *text, size_t len, size_t *pos, const char **line, size_t *n);

/* pv_results_parse_watch with left numbers left to the run's watches (PV_RESULTS_RUN_CELLS): a
 * watch of more is refused before any of its numbers is read. */
int pv_results_parse_watch_in(const char *text, size_t len, size_t left,
			      struct pv_results_watch **out);

#endif
