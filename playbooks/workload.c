/* playbooks/workload.c: the scenario table and the workload's defaults (see workload.h). */
#include "playbooks/workload.h"

#include <string.h>

const char *const pv_playbook_workload_names[PV_PLAYBOOK_WORKLOAD_KINDS + 1] = {
	[PV_PLAYBOOK_WORKLOAD_UPLOAD] = "upload",
	[PV_PLAYBOOK_WORKLOAD_BROWSE] = "browse",
	[PV_PLAYBOOK_WORKLOAD_OPEN_READ] = "open_read",
	[PV_PLAYBOOK_WORKLOAD_COPY_IN] = "copy_in",
	[PV_PLAYBOOK_WORKLOAD_EDIT_SAVE] = "edit_save",
	[PV_PLAYBOOK_WORKLOAD_OPEN_CLOSE] = "open_close",
	[PV_PLAYBOOK_WORKLOAD_REWRITE] = "rewrite",
	[PV_PLAYBOOK_WORKLOAD_DELETE_NEW] = "delete_new",
	[PV_PLAYBOOK_WORKLOAD_LIST_NEW] = "list_new",
	[PV_PLAYBOOK_WORKLOAD_RENAME] = "rename",
	[PV_PLAYBOOK_WORKLOAD_MKDIR] = "mkdir",
	[PV_PLAYBOOK_WORKLOAD_READ_FOLDER] = "read_folder",
	[PV_PLAYBOOK_WORKLOAD_LEARNED] = "learned",
	[PV_PLAYBOOK_WORKLOAD_KINDS] = NULL,
};

const char *const pv_playbook_workload_encryptions[] = {
	[PV_PLAYBOOK_WORKLOAD_ENCRYPT_AUTO] = "auto",
	[PV_PLAYBOOK_WORKLOAD_ENCRYPT_ON] = "on",
	[PV_PLAYBOOK_WORKLOAD_ENCRYPT_AES128_CCM] = "aes-128-ccm",
	[PV_PLAYBOOK_WORKLOAD_ENCRYPT_AES128_GCM] = "aes-128-gcm",
	[PV_PLAYBOOK_WORKLOAD_ENCRYPT_AES256_CCM] = "aes-256-ccm",
	[PV_PLAYBOOK_WORKLOAD_ENCRYPT_AES256_GCM] = "aes-256-gcm",
	NULL,
};

/* docs/load.md's table: FSCT's weights (they sum to 331) and our latency limits */
static const struct pv_playbook_workload_scenario defaults[PV_PLAYBOOK_WORKLOAD_KINDS] = {
	[PV_PLAYBOOK_WORKLOAD_UPLOAD] = {15, 2},    [PV_PLAYBOOK_WORKLOAD_BROWSE] = {150, 1},
	[PV_PLAYBOOK_WORKLOAD_OPEN_READ] = {40, 2}, [PV_PLAYBOOK_WORKLOAD_COPY_IN] = {7, 3},
	[PV_PLAYBOOK_WORKLOAD_EDIT_SAVE] = {15, 3}, [PV_PLAYBOOK_WORKLOAD_OPEN_CLOSE] = {50, 1},
	[PV_PLAYBOOK_WORKLOAD_REWRITE] = {15, 2},   [PV_PLAYBOOK_WORKLOAD_DELETE_NEW] = {5, 1},
	[PV_PLAYBOOK_WORKLOAD_LIST_NEW] = {15, 1},  [PV_PLAYBOOK_WORKLOAD_RENAME] = {7, 1},
	[PV_PLAYBOOK_WORKLOAD_MKDIR] = {7, 2},	    [PV_PLAYBOOK_WORKLOAD_READ_FOLDER] = {5, 5},
	[PV_PLAYBOOK_WORKLOAD_LEARNED] = {0, 10}, /* only with load.workload */
};

void pv_playbook_workload_defaults(struct pv_playbook_workload *c)
{
	memset(c, 0, sizeof(*c));
	c->rate = PV_PLAYBOOK_WORKLOAD_RATE;
	memcpy(c->kind, defaults, sizeof(defaults));
	c->late = 1;
	c->overload = 1;
	c->interval = 1;
	c->seed = 1;
}

int pv_playbook_workload_kind_of(const char *name)
{
	for (int k = 0; k < PV_PLAYBOOK_WORKLOAD_KINDS; k++)
		if (!strcmp(pv_playbook_workload_names[k], name))
			return k;
	return -1;
}

double pv_playbook_workload_logons(const struct pv_playbook_workload *c)
{
	double r = c->learned.relogons_per_user_hour;

	if (!c->learned.n || !(c->kind[PV_PLAYBOOK_WORKLOAD_LEARNED].weight > 0) || !(r > 0))
		return 0;
	return r < PV_PLAYBOOK_WORKLOAD_LOGONS_MAX ? r : PV_PLAYBOOK_WORKLOAD_LOGONS_MAX;
}

const char *pv_playbook_workload_learned_command(unsigned code)
{
	static const char *const names[] = {
		[5] = "CREATE",
		[6] = "CLOSE",
		[7] = "FLUSH",
		[8] = "READ",
		[9] = "WRITE",
		[10] = "LOCK",
		[11] = "IOCTL",
		[14] = "QUERY_DIRECTORY",
		[15] = "CHANGE_NOTIFY",
		[16] = "QUERY_INFO",
		[17] = "SET_INFO",
		[5 | PV_PLAYBOOK_WORKLOAD_LEARNED_OPEN_IF] = "CREATE(OPEN_IF)",
		[5 | PV_PLAYBOOK_WORKLOAD_LEARNED_OVERWRITE_IF] = "CREATE(OVERWRITE_IF)",
		[5 | PV_PLAYBOOK_WORKLOAD_LEARNED_NEW] = "CREATE(CREATE)",
		[PV_PLAYBOOK_WORKLOAD_LEARNED_REFUSED] = "CREATE(REFUSED)",
		[PV_PLAYBOOK_WORKLOAD_LEARNED_STAT] = "CREATE(STAT)",
		[11 | PV_PLAYBOOK_WORKLOAD_LEARNED_SNAPSHOTS] = "IOCTL(SNAPSHOTS)",
		[11 | PV_PLAYBOOK_WORKLOAD_LEARNED_REFERRAL] = "IOCTL(REFERRAL)",
		[14 | PV_PLAYBOOK_WORKLOAD_LEARNED_PATTERN] = "QUERY_DIRECTORY(PATTERN)",
		[14 | PV_PLAYBOOK_WORKLOAD_LEARNED_NAME] = "QUERY_DIRECTORY(NAME)",
	};

	return code < sizeof(names) / sizeof(names[0]) ? names[code] : NULL;
}

bool pv_playbook_workload_paced(const struct pv_playbook_workload *c)
{
	if (!c->learned.n || c->learned.think.n < 2 ||
	    !(c->kind[PV_PLAYBOOK_WORKLOAD_LEARNED].weight > 0))
		return false;
	for (int k = 0; k < PV_PLAYBOOK_WORKLOAD_KINDS; k++)
		if (k != PV_PLAYBOOK_WORKLOAD_LEARNED && c->kind[k].weight > 0)
			return false;
	return true;
}

unsigned pv_playbook_workload_learned_fsctl(uint32_t code)
{
	switch (code) {
	case PV_PLAYBOOK_FSCTL_SNAPSHOTS:
		return PV_PLAYBOOK_WORKLOAD_LEARNED_SNAPSHOTS;
	case PV_PLAYBOOK_FSCTL_REFERRAL:
	case PV_PLAYBOOK_FSCTL_REFERRAL_EX:
		return PV_PLAYBOOK_WORKLOAD_LEARNED_REFERRAL;
	default: /* the object id, and what has no name here */
		return 0;
	}
}

unsigned pv_playbook_workload_learned_listing(const uint8_t *pattern, size_t len)
{
	bool wild = false, all = true;
	size_t n = len / 2;

	if (!pattern || !n)
		return 0;
	for (size_t i = 0; i < n; i++) {
		unsigned ch = (unsigned)pattern[2 * i] | (unsigned)pattern[2 * i + 1] << 8;

		wild = wild || ch == '*' || ch == '?' || ch == '<' || ch == '>' || ch == '"';
		all = all && (ch == '*' || (ch == '.' && i > 0 && i + 1 < n));
	}
	if (all) /* "*", "*.*" */
		return 0;
	return wild ? PV_PLAYBOOK_WORKLOAD_LEARNED_PATTERN : PV_PLAYBOOK_WORKLOAD_LEARNED_NAME;
}

uint32_t pv_playbook_workload_learned_fsctl_code(unsigned bits)
{
	switch (bits & PV_PLAYBOOK_WORKLOAD_LEARNED_DISP) {
	case PV_PLAYBOOK_WORKLOAD_LEARNED_SNAPSHOTS:
		return PV_PLAYBOOK_FSCTL_SNAPSHOTS;
	case PV_PLAYBOOK_WORKLOAD_LEARNED_REFERRAL:
		return PV_PLAYBOOK_FSCTL_REFERRAL;
	default:
		return PV_PLAYBOOK_FSCTL_OBJECT_ID;
	}
}

unsigned pv_playbook_workload_learned_disposition(uint32_t disposition)
{
	switch (disposition) {
	case 1: /* FILE_OPEN */
		return 0;
	case 2: /* FILE_CREATE */
		return PV_PLAYBOOK_WORKLOAD_LEARNED_NEW;
	case 3: /* FILE_OPEN_IF */
		return PV_PLAYBOOK_WORKLOAD_LEARNED_OPEN_IF;
	default: /* SUPERSEDE, OVERWRITE, OVERWRITE_IF; and what no client sends: replaced */
		return PV_PLAYBOOK_WORKLOAD_LEARNED_OVERWRITE_IF;
	}
}

unsigned pv_playbook_workload_learned_create(uint32_t disposition, uint32_t access)
{
	/* FILE_READ_ATTRIBUTES, FILE_WRITE_ATTRIBUTES, READ_CONTROL, SYNCHRONIZE (MS-SMB2
	 * 2.2.13.1): Samba's stat open, its lease's too */
	const uint32_t stat = 0x00000080u | 0x00000100u | 0x00020000u | 0x00100000u;

	if (disposition == 1 && access && !(access & ~stat))
		return PV_PLAYBOOK_WORKLOAD_LEARNED_STAT;
	return 5 | pv_playbook_workload_learned_disposition(disposition);
}
