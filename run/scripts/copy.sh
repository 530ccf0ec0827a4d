# run/scripts/copy.sh: `provision copy-agent` on a client, the copy job's part (its settings
# and the password come on stdin). Set before it: bin (provision there).
: "${bin:?}"
exec "$bin" copy-agent
