/* sweep/scripts.c: the scripts of sweep/scripts/, built in (util/embed.h). */
#include "util/embed.h"

PV_EMBED(pv_sweep_remove_sh, "sweep/scripts/remove.sh");
