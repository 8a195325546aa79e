#!/bin/bash
# The stand-in for the official postgres image's docker-entrypoint.sh, the parts a chart uses: on
# an empty PGDATA, initdb with POSTGRES_USER and POSTGRES_PASSWORD (or _FILE), the database
# POSTGRES_DB, then /docker-entrypoint-initdb.d/*.sh (sourced) and *.sql; password (scram) logins
# from the network; then `postgres` in the foreground.
set -euo pipefail
: "${PGDATA:=/var/lib/postgresql/data}" "${POSTGRES_USER:=postgres}"
export PGDATA POSTGRES_USER
: "${POSTGRES_DB:=$POSTGRES_USER}"
export POSTGRES_DB
if [[ -n ${POSTGRES_PASSWORD_FILE:-} ]]; then POSTGRES_PASSWORD=$(<"$POSTGRES_PASSWORD_FILE"); fi
if [[ ! -s $PGDATA/PG_VERSION ]]; then
  if [[ -z ${POSTGRES_PASSWORD:-} ]]; then
    echo 'postgres: POSTGRES_PASSWORD (or POSTGRES_PASSWORD_FILE) is required to initialise PGDATA' >&2
    exit 1
  fi
  mkdir -p "$PGDATA"
  chmod 700 "$PGDATA"
  initdb --username="$POSTGRES_USER" --pwfile=<(printf '%s\n' "$POSTGRES_PASSWORD") \
    --auth-local=trust --auth-host=scram-sha-256 >/dev/null
  printf 'host all all all scram-sha-256\n' >>"$PGDATA/pg_hba.conf"
  pg_ctl -D "$PGDATA" -o "-c listen_addresses=''" -w start >/dev/null
  if [[ $POSTGRES_DB != postgres ]]; then
    psql -v ON_ERROR_STOP=1 --username "$POSTGRES_USER" --dbname postgres \
      -c "CREATE DATABASE \"$POSTGRES_DB\"" >/dev/null
  fi
  for f in /docker-entrypoint-initdb.d/*; do
    case $f in
      *.sh) echo "postgres: running $f"; source "$f" ;;
      *.sql) echo "postgres: running $f"; psql -v ON_ERROR_STOP=1 --username "$POSTGRES_USER" --dbname "$POSTGRES_DB" -f "$f" ;;
    esac
  done
  pg_ctl -D "$PGDATA" -m fast -w stop >/dev/null
  echo 'postgres: initialised'
fi
[[ ${1:-} == postgres ]] && shift  # the image's CMD, as the official entrypoint takes it
exec postgres -c listen_addresses='*' "$@"
