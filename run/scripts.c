/* run/scripts.c: the scripts of run/scripts/, built in (util/embed.h). */
#include "util/embed.h"

PV_EMBED(pv_run_drain_sh, "run/scripts/drain.sh");
PV_EMBED(pv_run_install_sh, "run/scripts/install.sh");
PV_EMBED(pv_run_client_pl, "run/scripts/run-client.pl");
PV_EMBED(pv_run_watch_pl, "run/scripts/watch.pl");
PV_EMBED(pv_run_watch_sh, "run/scripts/watch.sh");
PV_EMBED(pv_run_client_sh, "run/scripts/run-client.sh");
PV_EMBED(pv_run_load_sh, "run/scripts/load.sh");
PV_EMBED(pv_run_gather_sh, "run/scripts/gather.sh");
PV_EMBED(pv_run_cleanup_sh, "run/scripts/cleanup.sh");
PV_EMBED(pv_run_client_facts_sh, "run/scripts/client-facts.sh");
PV_EMBED(pv_run_sink_open_sh, "run/scripts/sink-open.sh");
PV_EMBED(pv_run_copy_sh, "run/scripts/copy.sh");
