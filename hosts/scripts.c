/* hosts/scripts.c: the scripts of hosts/scripts/, built in (util/embed.h). */
#include "util/embed.h"

PV_EMBED(pv_hosts_write_sh, "hosts/scripts/write.sh");
