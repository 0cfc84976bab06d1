#!/usr/bin/env bash
# The tests need a real PostgreSQL and Redis. Usage: ensure-services.sh DATABASE_URL BROKER_URL.
# When a URL points at this machine and its server is installed but down, start it (the commands
# of this machine's set-up); then wait for both to answer, or fail with a line saying what is
# missing. Never skips: a suite without its services must not look green.
set -euo pipefail
database_url="$1"
broker_url="$2"

host_port() {  # URL, default port -> "host port"
  python3 -c 'import sys; from urllib.parse import urlsplit
u = urlsplit(sys.argv[1]); print(u.hostname or "127.0.0.1", u.port or sys.argv[2])' "$1" "$2"
}
read -r pg_host pg_port < <(host_port "$database_url" 5432)
read -r redis_host redis_port < <(host_port "$broker_url" 6379)
is_local() { [[ "$1" == "127.0.0.1" || "$1" == "localhost" || "$1" == "::1" ]]; }
pg_up() { pg_isready -q -h "$pg_host" -p "$pg_port" 2>/dev/null; }
redis_up() { redis-cli -h "$redis_host" -p "$redis_port" ping 2>/dev/null | grep -q PONG; }

if ! pg_up && is_local "$pg_host" && [ -d /etc/postgresql ] && command -v pg_ctlcluster >/dev/null; then
  for version in /etc/postgresql/*/; do
    pg_ctlcluster --skip-systemctl-redirect "$(basename "$version")" main start || true
  done
fi
if ! redis_up && is_local "$redis_host" && command -v redis-server >/dev/null; then
  mkdir -p /var/lib/redis /var/log/redis
  redis-server --daemonize yes --bind 127.0.0.1 -::1 --port "$redis_port" --save "" \
    --appendonly no --dir /var/lib/redis --logfile /var/log/redis/ci.log
fi
for _ in $(seq 1 30); do
  pg_up && redis_up && break
  sleep 1
done
if ! pg_up; then
  echo "error: PostgreSQL does not answer at $pg_host:$pg_port (DATABASE_URL=$database_url)." >&2
  exit 1
fi
if ! redis_up; then
  echo "error: Redis does not answer at $redis_host:$redis_port (CELERY_BROKER_URL=$broker_url)." >&2
  exit 1
fi
echo "PostgreSQL at $pg_host:$pg_port and Redis at $redis_host:$redis_port answer."
