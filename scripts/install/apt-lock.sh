# shellcheck shell=bash
# Sourced before apt-get by every script that installs Debian packages: one apt-get at a time.
# `make test` runs such scripts at once (scripts/test/prebuild.sh beside the suites), and apt-get
# update fails at once rather than wait for another's lock. The lock file has one fixed path and
# anyone may open it (read-only is enough for flock), whoever created it first.
apt_lock=/tmp/observatory-apt.lock
[[ -e $apt_lock ]] || (umask 0 && : >>"$apt_lock")
exec 8<"$apt_lock"
flock 8
