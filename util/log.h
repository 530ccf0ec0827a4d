/* util/log.h: the log sink. Modules describe what they do through pv_log(); only provision/
 * decides where it goes (it installs the sink), so library code never prints. */
#ifndef PV_UTIL_LOG_H
#define PV_UTIL_LOG_H

enum pv_log_level { PV_LOG_ERROR, PV_LOG_WARN, PV_LOG_INFO, PV_LOG_DEBUG };

typedef void (*pv_log_sink)(enum pv_log_level level, const char *msg, void *ctx);

/* Install the sink (NULL drops everything). Not thread-safe: call before starting threads. */
void pv_log_set_sink(pv_log_sink sink, void *ctx);
void pv_log(enum pv_log_level level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif
