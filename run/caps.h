/* run/caps.h: how much a run takes from its clients and its controller host, whatever they
 * send (docs/security-model.md lists every module's caps; remote/caps.h bounds each command's
 * output and each line first). A host past a cap fails the step for that host, naming the cap;
 * nothing it sent past it is kept. */
#ifndef PV_RUN_CAPS_H
#define PV_RUN_CAPS_H

/* bytes of results gathered from one host for one step (its step folder as a ustar stream) */
#define PV_RUN_GATHER_MAX (256u << 20)
/* files and folders in one host's results of one step */
#define PV_RUN_GATHER_ENTRIES_MAX 20000
/* figures lines (intervals) a client may send in a step beyond the step's own length in
 * intervals ((warmup + duration + the driver's grace) / load.interval) */
#define PV_RUN_INTERVALS_SLACK 16
/* lines of any other kind a client may send in a step ("ready" is one) */
#define PV_RUN_OTHER_LINES_MAX 16

#endif
