#!/usr/bin/env bash
# Starts the PostgreSQL and Redis the service and its tests use in development
# (127.0.0.1:5432, user postgres without a password; 127.0.0.1:6379), installing
# them from Debian's packages when absent. Does nothing when both answer.
# `npm run services`; .ci/run uses the same steps.
set -uo pipefail

SUDO=""
[ "$(id -u)" -ne 0 ] && command -v sudo >/dev/null && SUDO="sudo"

log() { printf '\n== %s\n' "$*"; }

apt_install() {
  log "installing $*"
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -qq && $SUDO apt-get install -y -qq "$@" >/dev/null
}

postgres_answers() {
  command -v psql >/dev/null &&
    psql -h 127.0.0.1 -p 5432 -U postgres -d postgres -tAc 'SELECT 1' >/dev/null 2>&1
}

ensure_postgres() {
  postgres_answers && return 0
  command -v pg_ctlcluster >/dev/null || apt_install postgresql postgresql-client
  local version
  version=$(ls /etc/postgresql | sort -V | tail -n 1)
  local hba="/etc/postgresql/${version}/main/pg_hba.conf"
  # Tests connect as postgres over TCP without a password, as on the dev machines.
  if ! grep -Eq '^host\s+all\s+all\s+127\.0\.0\.1/32\s+trust' "$hba"; then
    $SUDO sed -i '1i host all all 127.0.0.1/32 trust\nhost all all ::1/128 trust\nlocal all postgres trust' "$hba"
  fi
  log "starting PostgreSQL ${version}"
  $SUDO pg_ctlcluster --skip-systemctl-redirect "$version" main start 2>/dev/null ||
    $SUDO pg_ctlcluster --skip-systemctl-redirect "$version" main reload
  for _ in $(seq 1 30); do postgres_answers && return 0; sleep 1; done
  echo "PostgreSQL did not come up" >&2
  return 1
}

redis_answers() {
  command -v redis-cli >/dev/null && [ "$(redis-cli -h 127.0.0.1 -p 6379 ping 2>/dev/null)" = "PONG" ]
}

ensure_redis() {
  redis_answers && return 0
  command -v redis-server >/dev/null || apt_install redis-server
  log "starting Redis"
  $SUDO mkdir -p /var/lib/redis /var/log/redis
  $SUDO redis-server --daemonize yes --bind 127.0.0.1 -::1 --port 6379 --save "" \
    --appendonly no --dir /var/lib/redis --logfile /var/log/redis/ci.log
  for _ in $(seq 1 30); do redis_answers && return 0; sleep 1; done
  echo "Redis did not come up" >&2
  return 1
}

# Run directly (not sourced): start both.
if [ "${BASH_SOURCE[0]}" = "$0" ]; then
  if ! command -v apt-get >/dev/null && ! command -v pg_ctlcluster >/dev/null; then
    echo "no apt-get here: start PostgreSQL and Redis yourself, e.g." >&2
    echo "  docker run -d -p 127.0.0.1:5432:5432 -e POSTGRES_HOST_AUTH_METHOD=trust postgres:15" >&2
    echo "  docker run -d -p 127.0.0.1:6379:6379 redis:7" >&2
    exit 1
  fi
  ensure_postgres && ensure_redis && echo "PostgreSQL and Redis are running"
fi
