/* phases/scripts.c: the scripts of phases/scripts/, built in (util/embed.h). */
#include "util/embed.h"

PV_EMBED(pv_phases_ctl_reset_sh, "phases/scripts/ctl-reset.sh");
PV_EMBED(pv_phases_ctl_status_sh, "phases/scripts/ctl-status.sh");
PV_EMBED(pv_phases_getent_sh, "phases/scripts/getent.sh");
PV_EMBED(pv_phases_list_trees_sh, "phases/scripts/list-trees.sh");
PV_EMBED(pv_phases_trees_sh, "phases/scripts/trees.sh");
PV_EMBED(pv_phases_trees_pl, "phases/scripts/trees.pl");
PV_EMBED(pv_phases_send_template_sh, "phases/scripts/send-template.sh");
PV_EMBED(pv_phases_read_hosts_sh, "phases/scripts/read-hosts.sh");
PV_EMBED(pv_phases_resolve_ps1, "phases/scripts/resolve.ps1");
PV_EMBED(pv_phases_spn_record_sh, "phases/scripts/spn-record.sh");
PV_EMBED(pv_phases_rm_template_sh, "phases/scripts/rm-template.sh");
PV_EMBED(pv_phases_rm_foreign_sh, "phases/scripts/rm-foreign.sh");
PV_EMBED(pv_phases_which_dc_sh, "phases/scripts/which-dc.sh");
PV_EMBED(pv_phases_needs_sh, "phases/scripts/needs.sh");
