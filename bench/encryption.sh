#!/usr/bin/env bash
# bench/encryption.sh: what SMB encryption costs our client and what it wins, on the lab,
# side by side with the reference tools (issue 18):
#   (1) the built-in driver's operations per second and client CPU per operation, encrypted
#       and not, against smbtorture smb2.bench.path-contention-shared with the same setting
#       (bench/load.sh's part (2) with ENCRYPT="auto on"; goal: a/b >= 1.0x the operations at
#       no more CPU per operation, in every round);
#   (2) tree building with `server smb encrypt = required`, our client against libsmbclient
#       (bench/signing.sh with that setting; goal: a/b >= 1.5x the files per second).
# Environment: CONNS (default "16 64"), ROUNDS (default 3), USERS (for (2), default 40).
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
CONNS=${CONNS-"16 64"} ROUNDS=${ROUNDS:-3} SECS=0 ENCRYPT="auto on" USERS=100 bash "$HERE/load.sh"
echo
SETTING='server smb encrypt=required' ROUNDS=${ROUNDS:-3} USERS=${USERS:-40} bash "$HERE/signing.sh"
