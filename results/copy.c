/* results/copy.c: the copy job's figures and its verdict (see copy.h). */
#include "results/copy.h"

#include "load/stats.h"
#include "util/stats.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

const char *const pv_results_copy_bound_names[6] = {"quota",  "smbd core", "server cpus",
						    "client", "disk",	   "unknown"};

void pv_results_copy_rate(const double *t, const double *count, size_t n, double *rate, double *lo,
			  double *hi)
{
	double sum = 0, sq = 0, mean, sd, h;
	size_t k = 0;

	*rate = *lo = *hi = NAN;
	if (n < 1 || !(t[n - 1] > 0))
		return;
	*rate = count[n - 1] / t[n - 1];
	for (size_t i = 1; i < n; i++) {
		double dt = t[i] - t[i - 1];

		if (dt <= 0)
			continue;
		sum += (count[i] - count[i - 1]) / dt;
		k++;
	}
	if (k < 3)
		return;
	mean = sum / (double)k;
	for (size_t i = 1; i < n; i++) {
		double dt = t[i] - t[i - 1], r;

		if (dt <= 0)
			continue;
		r = (count[i] - count[i - 1]) / dt;
		sq += (r - mean) * (r - mean);
	}
	sd = sqrt(sq / (double)(k - 1));
	h = pv_stat_t_q(0.975, (double)(k - 1)) * sd / sqrt((double)k);
	*lo = fmax(0, *rate - h);
	*hi = *rate + h;
}

/* "N%" and unit, or "not measured" for a figure the copy lacks (NAN: the server not
 * watched, no smbd seen, the agent's CPU unknown), so that no verdict prints "nan%". */
static const char *pct(double v, const char *unit, char *b, size_t len)
{
	if (isfinite(v))
		snprintf(b, len, "%.0f%%%s", v, unit);
	else
		snprintf(b, len, "not measured");
	return b;
}

static enum pv_results_copy_bound judge(const struct pv_results_copy_facts *f, char *text,
					size_t len)
{
	char who[96], p1[48], p2[48], p3[48], busiest[160];
	bool seen = f->smbd_known && isfinite(f->smbd_top);
	/* the quota is the group's: the other smbds in it use it too */
	double group = f->group_cpu > f->smbd_cpu ? f->group_cpu : f->smbd_cpu;

	snprintf(who, sizeof(who), "smbd %d%s", f->smbd_pid,
		 f->smbd_ours ? " (it serves the copy's connection)" : "");
	if (f->smbd_known && f->smbd_quota >= 0 &&
	    group >= PV_RESULTS_COPY_AT_LIMIT / 100 * f->smbd_quota) {
		char others[96] = "";

		if (group >= f->smbd_cpu + 0.5)
			snprintf(others, sizeof(others),
				 " (%.0f%% with the other smbds under the same quota)", group);
		snprintf(text, len,
			 "A CPU quota is the limit: %s used %.0f%% of a core%s, and the cgroup "
			 "that holds it may use %.0f%% (cgroup cpu.max or cpu.cfs_quota_us: "
			 "systemd's CPUQuota= of the smbd service, or a container's CPU limit). "
			 "Raise or remove the quota; more connections would share the same quota.",
			 who, f->smbd_cpu, others, f->smbd_quota);
		return PV_RESULTS_COPY_BOUND_QUOTA;
	}
	if (f->smbd_known && f->smbd_top >= PV_RESULTS_COPY_AT_LIMIT) {
		snprintf(text, len,
			 "One core of the server is the limit: %s ran its busiest thread at %.0f%% "
			 "of a core (%u thread%s, %.0f%% in all). Samba serves a connection in one "
			 "process, so a copy over one connection is bound by one core of the "
			 "server, whatever the server has. More connections (--connections N, "
			 "robocopy cannot) or more clients spread it over more cores%s.",
			 who, f->smbd_top, f->smbd_threads, f->smbd_threads == 1 ? "" : "s",
			 f->smbd_cpu,
			 f->connections > 1 ? "; this copy already had several, and the busiest "
					      "still was at its core"
					    : "");
		return PV_RESULTS_COPY_BOUND_CORE;
	}
	if (isfinite(f->server_cpu) && f->server_cpu >= 90) {
		if (seen)
			snprintf(busiest, sizeof(busiest),
				 ", and no one smbd thread was at a full core (the busiest at "
				 "%.0f%%)",
				 f->smbd_top);
		else
			snprintf(busiest, sizeof(busiest), " (no smbd thread was measured)");
		snprintf(text, len,
			 "The server's CPUs are the limit: they were %.0f%% busy over the copy%s. "
			 "Other work on the server takes the CPU the copy's smbd would use; the "
			 "figures are the server's as it is, not Samba's alone.",
			 f->server_cpu, busiest);
		return PV_RESULTS_COPY_BOUND_CPUS;
	}
	if (f->client_top >= PV_LOAD_BOUND_CPU) {
		snprintf(text, len,
			 "The client is the limit (client-bound): the copy's busiest thread there "
			 "ran at %.0f%% of a core, so the figures say little of the server. Copy "
			 "from more clients, or with fewer requests in flight per connection and "
			 "more connections.",
			 f->client_top);
		return PV_RESULTS_COPY_BOUND_CLIENT;
	}
	if (isfinite(f->server_iowait) && f->server_iowait >= 20) {
		if (seen)
			snprintf(busiest, sizeof(busiest),
				 " while no smbd thread was at a full core (the busiest at %.0f%%)",
				 f->smbd_top);
		else
			snprintf(busiest, sizeof(busiest), " (no smbd thread was measured)");
		snprintf(text, len,
			 "The server's disk is the limit: its CPUs waited for I/O %.0f%% of the "
			 "time%s.",
			 f->server_iowait, busiest);
		return PV_RESULTS_COPY_BOUND_DISK;
	}
	if (!f->smbd_known) {
		snprintf(text, len,
			 "The data cannot tell what bounds this copy: the server's smbd processes "
			 "were not seen (the server is not Samba, or it was not watched); the "
			 "client's busiest thread: %s.",
			 pct(f->client_top, " of a core", p1, sizeof(p1)));
	} else {
		if (isfinite(f->server_cpu) && isfinite(f->server_iowait))
			snprintf(p3, sizeof(p3), "%.0f%% busy, %.0f%% waiting for I/O",
				 f->server_cpu, f->server_iowait);
		else
			snprintf(p3, sizeof(p3), "not measured");
		snprintf(text, len,
			 "Nothing measured was at its limit (the busiest smbd thread: %s; the "
			 "client's busiest thread: %s; the server's CPUs: %s). The time goes to "
			 "waiting (a round trip per file, the network); more requests in flight "
			 "(--mt) or connections would tell.",
			 pct(f->smbd_top, " of a core", p1, sizeof(p1)),
			 pct(f->client_top, " of a core", p2, sizeof(p2)), p3);
	}
	return PV_RESULTS_COPY_BOUND_UNKNOWN;
}

enum pv_results_copy_bound pv_results_copy_judge(const struct pv_results_copy_facts *f, char *text,
						 size_t len)
{
	enum pv_results_copy_bound b = judge(f, text, len);
	size_t n = strlen(text);

	if (f->smbd_known && f->dgram_qlen >= 0 && f->dgram_qlen < PV_RESULTS_COPY_QLEN && n < len)
		snprintf(text + n, len - n,
			 " The server's Unix sockets queue at most %d datagrams "
			 "(net.unix.max_dgram_qlen; systemd sets %d, a new network "
			 "namespace or container starts at 10): smbd tells smbd-notifyd of "
			 "every change over such a socket, and when it is full the messages "
			 "wait inside smbd, at a cost of its CPU per file that grows with the "
			 "copy (on the lab, copies of 44,000 to 88,000 files ran 1.4 to 7 "
			 "times slower with 10 than with 512). Set it to %d (sysctl "
			 "net.unix.max_dgram_qlen=%d) and restart Samba.",
			 f->dgram_qlen, PV_RESULTS_COPY_QLEN, PV_RESULTS_COPY_QLEN,
			 PV_RESULTS_COPY_QLEN);
	return b;
}
