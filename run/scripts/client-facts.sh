# run/scripts/client-facts.sh: a client's system for the manifest (uname -sr), and
# "no-perl" when perl, which the run's wrapper needs, is missing.
uname -sr
command -v perl >/dev/null || echo no-perl
