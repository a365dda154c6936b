#!/usr/bin/env bash
# Makes sure a MariaDB server listens on 127.0.0.1:${MODELDOCK_MYSQL_PORT:-3306}.
# Reuses one that is already running; otherwise installs Debian's mariadb-server (as root)
# and starts it without systemd, configured for utf8mb4.
set -euo pipefail
port="${MODELDOCK_MYSQL_PORT:-3306}"
listening() { (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; }
if listening; then echo "[mariadb] reusing the server on 127.0.0.1:$port" >&2; exit 0; fi
if [ ! -x /usr/sbin/mariadbd ]; then
  echo "[mariadb] installing mariadb-server from Debian's packages" >&2
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq mariadb-server mariadb-client >/dev/null
fi
mkdir -p /run/mysqld && chown mysql:mysql /run/mysqld
echo "[mariadb] starting /usr/sbin/mariadbd" >&2
# Options on the command line: config directories differ between images.
start-stop-daemon --start --oknodo --background --exec /usr/sbin/mariadbd -- --user=mysql \
  --bind-address=127.0.0.1 --port="$port" --character-set-server=utf8mb4 \
  --collation-server=utf8mb4_unicode_ci --max-connections=2000
for _ in $(seq 1 120); do listening && exit 0; sleep 0.5; done
echo "[mariadb] did not start listening on 127.0.0.1:$port within 60 s" >&2
tail -n 30 /var/log/mysql/error.log 2>/dev/null >&2 || true
exit 1
