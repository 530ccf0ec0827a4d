/* run/scripts.c: the scripts of run/scripts/, built in (util/embed.h). */
#include "util/embed.h"

PV_EMBED(pv_run_drain_sh, "run/scripts/drain.sh");
PV_EMBED(pv_run_install_sh, "run/scripts/install.sh");
PV_EMBED(pv_run_client_pl, "run/scripts/run-client.pl");
PV_EMBED(pv_run_watch_pl, "run/scripts/watch.pl");
