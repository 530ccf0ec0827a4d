/* json/json.h: JSON values, built and read, through jansson (the only place it is used). The
 * CLI writes its one document per command with these (docs/json.md); the phases read what
 * hosts answer in JSON (smbstatus --json) with them. */
#ifndef PV_JSON_JSON_H
#define PV_JSON_JSON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

struct pv_json; /* a JSON value */

/* Building. A value handed to pv_json_set or pv_json_append belongs to its container. A value
 * that cannot be made (out of memory) is NULL, and setting or appending NULL does nothing. */
struct pv_json *pv_json_object(void);
struct pv_json *pv_json_array(void);
void pv_json_set(struct pv_json *o, const char *key, struct pv_json *v);
void pv_json_append(struct pv_json *a, struct pv_json *v);
/* key: value in o; a NULL string is null */
void pv_json_str(struct pv_json *o, const char *key, const char *v);
void pv_json_int(struct pv_json *o, const char *key, long long v);
void pv_json_bool(struct pv_json *o, const char *key, bool v);
void pv_json_real(struct pv_json *o, const char *key, double v); /* null when not finite */
void pv_json_secs(struct pv_json *o, const char *key, double v); /* to the millisecond */
void pv_json_append_str(struct pv_json *a, const char *v);
void pv_json_append_int(struct pv_json *a, long long v);
/* v on one line and a newline to f (ASCII, compact); -1 when f cannot be written. */
int pv_json_dump(const struct pv_json *v, FILE *f);
/* v indented by two spaces, with a newline, for files a person reads too (a run's
 * manifest.json); NULL when out of memory (free() it). */
char *pv_json_pretty(const struct pv_json *v);
/* v on one line (compact, ASCII), without a newline, for a line protocol (the load driver's
 * figures); NULL when out of memory (free() it). */
char *pv_json_compact(const struct pv_json *v);
void pv_json_free(struct pv_json *v);

/* Reading. pv_json_parse: NULL with a message in err when text is not JSON. What the getters
 * return is borrowed from the value they are given. */
struct pv_json *pv_json_parse(const char *text, size_t len, char *err, size_t errlen);
const struct pv_json *pv_json_get(const struct pv_json *o, const char *key); /* or NULL */
bool pv_json_is_object(const struct pv_json *v);
/* Each member of an object (key, value); fn returning non-zero stops and is returned. */
int pv_json_each(const struct pv_json *o,
		 int (*fn)(const char *key, const struct pv_json *v, void *arg), void *arg);
const char *pv_json_text(const struct pv_json *v); /* a string's value, else NULL */
/* An integer's value into *out (true); false, *out untouched, for anything else (a real
 * such as 1.0 included). */
bool pv_json_integer(const struct pv_json *v, long long *out);
/* A number's value (an integer or a real) into *out (true); false for anything else. */
bool pv_json_number(const struct pv_json *v, double *out);
bool pv_json_is_array(const struct pv_json *v);
bool pv_json_is_null(const struct pv_json *v); /* false for NULL (no value) */
bool pv_json_is_true(const struct pv_json *v); /* the value true (not 1, not "true") */
bool pv_json_is_bool(const struct pv_json *v); /* true or false */
size_t pv_json_size(const struct pv_json *a);  /* an array's length; 0 for anything else */
const struct pv_json *pv_json_at(const struct pv_json *a, size_t i); /* or NULL */

#endif
