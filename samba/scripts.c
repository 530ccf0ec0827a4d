/* samba/scripts.c: the scripts of samba/scripts/, built in (util/embed.h). */
#include "util/embed.h"

PV_EMBED(pv_samba_probe_sh, "samba/scripts/probe.sh");
PV_EMBED(pv_samba_as_admin_sh, "samba/scripts/as-admin.sh");
PV_EMBED(pv_phases_samba_verify_join_sh, "samba/scripts/verify-join.sh");
PV_EMBED(pv_phases_samba_leave_sh, "samba/scripts/leave.sh");
PV_EMBED(pv_phases_samba_join_sh, "samba/scripts/join.sh");
PV_EMBED(pv_phases_samba_keytab_list_sh, "samba/scripts/keytab-list.sh");
PV_EMBED(pv_phases_samba_keytab_remove_sh, "samba/scripts/keytab-remove.sh");
PV_EMBED(pv_phases_samba_keytab_add_sh, "samba/scripts/keytab-add.sh");
PV_EMBED(pv_phases_samba_keytab_pl, "samba/scripts/keytab.pl");
PV_EMBED(pv_phases_samba_shares_sh, "samba/scripts/shares.sh");
PV_EMBED(pv_phases_samba_unshare_sh, "samba/scripts/unshare.sh");
PV_EMBED(pv_samba_version_sh, "samba/scripts/version.sh");
PV_EMBED(pv_samba_config_sh, "samba/scripts/config.sh");
PV_EMBED(pv_phases_samba_trust_sh, "samba/scripts/trust.sh");
PV_EMBED(pv_phases_samba_keytab_net_sh, "samba/scripts/keytab-net.sh");
PV_EMBED(pv_samba_profile_sh, "samba/scripts/profile.sh");
PV_EMBED(pv_samba_setting_sh, "samba/scripts/setting.sh");
