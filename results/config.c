/* results/config.c: the server's configuration as `testparm -s` gave it (manifest.json's
 * server_config), read one setting at a time (see results.h): the one reader of it, for the
 * report's settings and for compare's differences. */
#include "results/results.h"

#include <string.h>

bool pv_results_config_next(const char *conf, size_t *pos, struct pv_results_setting *out)
{
	const char *p = conf ? conf + *pos : NULL;

	while (p && *p) {
		size_t n = strcspn(p, "\n");
		const char *s = p, *end = p + n, *eq, *close;

		*pos += n + (p[n] == '\n');
		while (s < end && (*s == ' ' || *s == '\t'))
			s++;
		if (*s == '[' && (close = memchr(s, ']', (size_t)(end - s))) != NULL) {
			out->section = s + 1;
			out->nsection = (int)(close - s - 1);
		} else if (*s != '#' && *s != ';' && (eq = memchr(s, '=', (size_t)(end - s)))) {
			const char *ke = eq, *v = eq + 1;

			while (ke > s && (ke[-1] == ' ' || ke[-1] == '\t'))
				ke--;
			while (v < end && (*v == ' ' || *v == '\t'))
				v++;
			out->key = s;
			out->nkey = (int)(ke - s);
			out->value = v;
			out->nvalue = (int)(end - v);
			return true;
		}
		p = conf + *pos;
	}
	return false;
}
