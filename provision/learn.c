/* provision/learn.c: `provision learn CAPTURE`: a capture of a file server's SMB traffic read
 * (learn/learn.h) and what it holds shown as text or JSON: the connections, the SMB2 requests
 * by command with their share, how many were answered, and what could not be read. */
#include "provision/provision.h"

#include "learn/learn.h"
#include "util/err.h"

#include "json/json.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct learn_out {
	char path[1024];
	struct pv_learn_counts c;
	bool read;
};

static const char *const dispositions[] = {"SUPERSEDE", "OPEN",	     "CREATE",
					   "OPEN_IF",	"OVERWRITE", "OVERWRITE_IF"};

static uint64_t sum(const uint64_t *v, size_t n)
{
	uint64_t s = 0;

	for (size_t i = 0; i < n; i++)
		s += v[i];
	return s;
}

static double pct(uint64_t a, uint64_t b)
{
	return b ? 100.0 * (double)a / (double)b : 0;
}

static void text(const struct pv_ctx *ctx, const void *result, int code)
{
	const struct learn_out *o = result;
	const struct pv_learn_counts *c = &o->c;
	uint64_t reqs = sum(c->req, PV_SMBT_NCMD), tracked = reqs - c->req[12];
	uint64_t smb = c->smb2_bytes + c->enc_bytes + c->comp_bytes + c->smb1_bytes + c->other_bytes;

	(void)ctx;
	if (!o->read)
		return;
	printf("learn: %s: %llu frames over %.2f s, %llu TCP connection%s to the SMB port (%llu "
	       "begun before the capture)\n",
	       o->path, (unsigned long long)c->frames, c->frames ? c->t1 - c->t0 : 0.0,
	       (unsigned long long)c->conns, c->conns == 1 ? "" : "s",
	       (unsigned long long)c->conns_midway);
	printf("learn: %llu SMB2 requests, %llu answered in the capture (%.1f%%), %llu with an "
	       "error status\n",
	       (unsigned long long)reqs, (unsigned long long)c->matched, pct(c->matched, tracked),
	       (unsigned long long)c->errors);
	if (reqs) {
		printf("  %-16s %10s %7s\n", "command", "requests", "%");
		for (uint16_t i = 0; i < PV_SMBT_NCMD; i++)
			if (c->req[i])
				printf("  %-16s %10llu %7.2f\n", pv_smbt_cmd_name(i),
				       (unsigned long long)c->req[i], pct(c->req[i], reqs));
	}
	if (c->enc_frames)
		printf("learn: not read: %llu encrypted frames (%.1f%% of the SMB bytes); capture "
		       "with encryption off (smb encrypt = off on a lab server) to learn from "
		       "them\n",
		       (unsigned long long)c->enc_frames, pct(c->enc_bytes, smb));
	if (c->comp_frames)
		printf("learn: not read: %llu compressed frames (%.1f%% of the SMB bytes)\n",
		       (unsigned long long)c->comp_frames, pct(c->comp_bytes, smb));
	if (c->smb1_frames)
		printf("learn: not read: %llu SMB1 frames (%.1f%% of the SMB bytes)\n",
		       (unsigned long long)c->smb1_frames, pct(c->smb1_bytes, smb));
	if (c->gap_bytes)
		printf("learn: not read: %llu bytes the capture did not keep (%llu frames cut by its "
		       "snapshot length, %llu holes); the headers before them were read\n",
		       (unsigned long long)c->gap_bytes, (unsigned long long)c->cut_frames,
		       (unsigned long long)c->gaps);
	if (c->other_frames)
		printf("learn: not read: %llu NetBIOS frames that were not SMB (%.1f%% of the bytes)\n",
		       (unsigned long long)c->other_frames, pct(c->other_bytes, smb));
	if (c->malformed)
		printf("learn: %llu malformed SMB2 frames, the first: %s\n",
		       (unsigned long long)c->malformed, c->first_malformed);
	if (c->bad_frames)
		printf("learn: %llu frames not taken apart, the first: %s\n",
		       (unsigned long long)c->bad_frames, c->first_bad);
	if (c->conns_refused)
		printf("learn: %llu segments of connections past the %u followed at once were not "
		       "read\n",
		       (unsigned long long)c->conns_refused, PV_LEARN_CONNS_MAX);
	if (code == PV_OK)
		printf("learn: this version counts the traffic; the workload learned from it (-o) "
		       "is still to come\n");
}

static void cmds(struct pv_json *o, const char *key, const uint64_t *v)
{
	struct pv_json *m = pv_json_object();

	for (uint16_t i = 0; i < PV_SMBT_NCMD; i++)
		if (v[i])
			pv_json_int(m, pv_smbt_cmd_name(i), (long long)v[i]);
	pv_json_set(o, key, m);
}

#define INT(o, k, v) pv_json_int(o, k, (long long)(v))

static void json(const struct pv_ctx *ctx, const void *result, int code, struct pv_json *j)
{
	const struct learn_out *o = result;
	const struct pv_learn_counts *c = &o->c;
	struct pv_json *f = pv_json_object(), *d = pv_json_object();

	(void)ctx;
	(void)code;
	pv_json_str(j, "capture", o->path[0] ? o->path : NULL);
	INT(j, "frames", c->frames);
	pv_json_real(j, "seconds", c->frames ? c->t1 - c->t0 : 0);
	INT(j, "tcp", c->tcp);
	INT(j, "not_tcp", c->not_tcp);
	INT(j, "fragments", c->fragments);
	INT(j, "cut_frames", c->cut_frames);
	INT(j, "bad_frames", c->bad_frames);
	pv_json_str(j, "first_bad", c->first_bad[0] ? c->first_bad : NULL);
	INT(j, "connections", c->conns);
	INT(j, "connections_midway", c->conns_midway);
	INT(j, "connections_refused", c->conns_refused);
	INT(j, "bytes", c->bytes);
	INT(j, "lost_bytes", c->gap_bytes);
	INT(j, "holes", c->gaps);
	INT(j, "again_bytes", c->again_bytes);
	INT(f, "smb2", c->smb2_frames);
	INT(f, "encrypted", c->enc_frames);
	INT(f, "compressed", c->comp_frames);
	INT(f, "smb1", c->smb1_frames);
	INT(f, "other", c->other_frames);
	INT(f, "keepalive", c->keepalives);
	INT(f, "resyncs", c->resyncs);
	pv_json_set(j, "netbios_frames", f);
	INT(j, "smb2_bytes", c->smb2_bytes);
	INT(j, "encrypted_bytes", c->enc_bytes);
	cmds(j, "requests", c->req);
	cmds(j, "answers", c->ans);
	cmds(j, "responses", c->resp);
	INT(j, "matched", c->matched);
	INT(j, "unmatched_answers", c->unmatched_ans);
	INT(j, "unanswered", c->unanswered);
	INT(j, "untracked", c->untracked);
	INT(j, "interim", c->interim);
	INT(j, "notifications", c->notifications);
	INT(j, "errors", c->errors);
	INT(j, "unknown_commands", c->unknown_cmd);
	INT(j, "malformed", c->malformed);
	pv_json_str(j, "first_malformed", c->first_malformed[0] ? c->first_malformed : NULL);
	INT(j, "cut_chains", c->cut_chains);
	for (size_t i = 0; i < 6; i++)
		INT(d, dispositions[i], c->disposition[i]);
	pv_json_set(j, "create_dispositions", d);
	INT(j, "read_asked", c->read_asked);
	INT(j, "read_got", c->read_got);
	INT(j, "written", c->written);
}

int pv_cmd_learn(struct pv_ctx *ctx, struct pv_out *out)
{
	struct learn_out *o = pv_out_result(out, "learn", sizeof(*o), text, json, NULL);
	struct pv_learn_opts opts = {0};
	int r;

	if (!o)
		return PV_EIO;
	if (ctx->cli.nargs != 1)
		return pv_error(PV_EUSAGE, "learn needs one capture: provision learn CAPTURE "
					   "(a pcap or pcapng file, as tcpdump -w writes)");
	snprintf(o->path, sizeof(o->path), "%s", ctx->cli.args[0]);
	if (ctx->cli.opt[OPT_PORT]) {
		char *end;
		long v = strtol(ctx->cli.opt[OPT_PORT], &end, 10);

		if (*end || end == ctx->cli.opt[OPT_PORT] || v < 1 || v > 65535)
			return pv_error(PV_EUSAGE, "--port '%s' is not a TCP port (1 to 65535)",
					ctx->cli.opt[OPT_PORT]);
		opts.port = (uint16_t)v;
	}
	r = pv_learn_read(o->path, &opts, &o->c);
	o->read = o->c.frames > 0 || r == PV_OK;
	return r;
}
