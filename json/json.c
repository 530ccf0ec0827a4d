/* json/json.c: JSON through jansson (see json.h). A struct pv_json is a jansson json_t. */
#include "json/json.h"

#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define J(v) ((json_t *)(v))
#define P(v) ((struct pv_json *)(v))
/* one line, ASCII: what pv_json_dump and pv_json_compact write */
#define LINE (JSON_COMPACT | JSON_ENSURE_ASCII | JSON_REAL_PRECISION(12))

struct pv_json *pv_json_object(void)
{
	return P(json_object());
}

struct pv_json *pv_json_array(void)
{
	return P(json_array());
}

void pv_json_set(struct pv_json *o, const char *key, struct pv_json *v)
{
	if (o && v)
		json_object_set_new(J(o), key, J(v));
	else
		json_decref(J(v));
}

void pv_json_append(struct pv_json *a, struct pv_json *v)
{
	if (a && v)
		json_array_append_new(J(a), J(v));
	else
		json_decref(J(v));
}

void pv_json_str(struct pv_json *o, const char *key, const char *v)
{
	pv_json_set(o, key, P(v ? json_string(v) : json_null()));
}

void pv_json_int(struct pv_json *o, const char *key, long long v)
{
	pv_json_set(o, key, P(json_integer(v)));
}

void pv_json_bool(struct pv_json *o, const char *key, bool v)
{
	pv_json_set(o, key, P(json_boolean(v)));
}

void pv_json_real(struct pv_json *o, const char *key, double v)
{
	pv_json_set(o, key, P(isfinite(v) ? json_real(v) : json_null()));
}

void pv_json_secs(struct pv_json *o, const char *key, double v)
{
	pv_json_real(o, key, round(v * 1000) / 1000);
}

void pv_json_append_str(struct pv_json *a, const char *v)
{
	pv_json_append(a, P(v ? json_string(v) : json_null()));
}

void pv_json_append_int(struct pv_json *a, long long v)
{
	pv_json_append(a, P(json_integer(v)));
}

int pv_json_dump(const struct pv_json *v, FILE *f)
{
	if (!v || json_dumpf(J(v), f, LINE) != 0)
		return -1;
	return fputc('\n', f) == EOF ? -1 : 0;
}

char *pv_json_pretty(const struct pv_json *v)
{
	char *s = v ? json_dumps(J(v), JSON_INDENT(2) | JSON_ENSURE_ASCII | JSON_REAL_PRECISION(12))
		    : NULL;
	char *nl;

	if (!s)
		return NULL;
	if ((nl = realloc(s, strlen(s) + 2)) == NULL) {
		free(s);
		return NULL;
	}
	strcat(nl, "\n");
	return nl;
}

char *pv_json_compact(const struct pv_json *v)
{
	return v ? json_dumps(J(v), LINE) : NULL;
}

void pv_json_free(struct pv_json *v)
{
	json_decref(J(v));
}

struct pv_json *pv_json_parse(const char *text, size_t len, char *err, size_t errlen)
{
	json_error_t e;
	json_t *v = json_loadb(text, len, JSON_REJECT_DUPLICATES, &e);

	if (!v && err && errlen)
		snprintf(err, errlen, "%s (line %d, column %d)", e.text, e.line, e.column);
	return P(v);
}

const struct pv_json *pv_json_get(const struct pv_json *o, const char *key)
{
	return json_is_object(J(o)) ? P(json_object_get(J(o), key)) : NULL;
}

bool pv_json_is_object(const struct pv_json *v)
{
	return json_is_object(J(v));
}

int pv_json_each(const struct pv_json *o,
		 int (*fn)(const char *key, const struct pv_json *v, void *arg), void *arg)
{
	const char *key;
	json_t *v;
	int r;

	if (!json_is_object(J(o)))
		return 0;
	json_object_foreach(J(o), key, v) if ((r = fn(key, P(v), arg)) != 0) return r;
	return 0;
}

const char *pv_json_text(const struct pv_json *v)
{
	return json_is_string(J(v)) ? json_string_value(J(v)) : NULL;
}

bool pv_json_integer(const struct pv_json *v, long long *out)
{
	if (!json_is_integer(J(v)))
		return false;
	*out = json_integer_value(J(v));
	return true;
}

bool pv_json_number(const struct pv_json *v, double *out)
{
	if (!json_is_number(J(v)))
		return false;
	*out = json_number_value(J(v));
	return true;
}

bool pv_json_is_array(const struct pv_json *v)
{
	return json_is_array(J(v));
}

bool pv_json_is_null(const struct pv_json *v)
{
	return json_is_null(J(v));
}

bool pv_json_is_true(const struct pv_json *v)
{
	return json_is_true(J(v));
}

bool pv_json_is_bool(const struct pv_json *v)
{
	return json_is_boolean(J(v));
}

size_t pv_json_size(const struct pv_json *a)
{
	return json_is_array(J(a)) ? json_array_size(J(a)) : 0;
}

const struct pv_json *pv_json_at(const struct pv_json *a, size_t i)
{
	return json_is_array(J(a)) ? P(json_array_get(J(a), i)) : NULL;
}
