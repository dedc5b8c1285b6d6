#!/bin/sh
# The PostgreSQL image's entrypoint: on first start initialises $PGDATA with superuser
# $POSTGRES_USER (default postgres), password $POSTGRES_PASSWORD (required) and database
# $POSTGRES_DB (default: the user's name), then runs postgres on every address, port $PGPORT
# (default 5432), password (SCRAM) authentication for every TCP client.
set -eu
: "${POSTGRES_PASSWORD:?POSTGRES_PASSWORD is required}"
user=${POSTGRES_USER:-postgres}
db=${POSTGRES_DB:-$user}
if [ ! -s "$PGDATA/PG_VERSION" ]; then
  # A subdirectory of a mounted volume: the volume's root may belong to root.
  mkdir -p "$PGDATA"
  chmod 700 "$PGDATA"
  pwfile=$(mktemp)
  printf '%s\n' "$POSTGRES_PASSWORD" >"$pwfile"
  initdb -D "$PGDATA" -U "$user" --pwfile="$pwfile" -E UTF8 --no-locale \
    --auth-local=trust --auth-host=scram-sha-256 >/dev/null
  rm -f "$pwfile"
  printf '%s\n' 'host all all 0.0.0.0/0 scram-sha-256' 'host all all ::/0 scram-sha-256' \
    >>"$PGDATA/pg_hba.conf"
  if [ "$db" != postgres ]; then
    echo "CREATE DATABASE \"$db\"" | postgres --single -D "$PGDATA" postgres >/dev/null
  fi
  echo "postgres-entrypoint: initialised $PGDATA (user $user, database $db)"
fi
# jit=off: the image leaves LLVM out.
exec postgres -D "$PGDATA" -c listen_addresses='*' -c unix_socket_directories=/tmp -c jit=off "$@"
