#!/usr/bin/env bash
# A private PostgreSQL cluster for CI and the fleet scripts: Debian's postgresql (installed when
# missing), a data folder in FOLDER owned by the postgres user, a Unix socket in FOLDER and a free
# port on 127.0.0.1, trusted logins as `haul` from this machine only.
#
#   bash Scripts/postgres-cluster.sh start FOLDER   # prints FOLDER:PORT (HAUL_TEST_POSTGRES's form)
#   bash Scripts/postgres-cluster.sh stop FOLDER
set -euo pipefail

action=${1:?start or stop}
folder=${2:?a folder}

binaries() {
    local version
    version=$(ls /usr/lib/postgresql 2>/dev/null | sort -n | tail -1)
    [ -n "$version" ] && echo "/usr/lib/postgresql/$version/bin"
}

as_postgres() {
    if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi
}

case "$action" in
start)
    if [ -z "$(binaries)" ]; then
        echo "installing postgresql" >&2
        DEBIAN_FRONTEND=noninteractive apt-get install -y -q postgresql >&2
    fi
    bin=$(binaries)
    mkdir -p "$folder"
    [ "$(id -u)" = 0 ] && chown postgres "$folder"
    port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
    as_postgres "$bin/initdb" -D "$folder/data" -A trust -U haul -E UTF8 --no-sync >&2
    as_postgres "$bin/pg_ctl" -D "$folder/data" -l "$folder/log" -w \
        -o "-k $folder -p $port -c listen_addresses=127.0.0.1 -c max_connections=300" start >&2
    echo "$folder:$port"
    ;;
stop)
    bin=$(binaries)
    [ -f "$folder/data/postmaster.pid" ] && as_postgres "$bin/pg_ctl" -D "$folder/data" -m fast -w stop >&2
    rm -rf "$folder"
    ;;
*)
    echo "usage: $0 start|stop FOLDER" >&2
    exit 2
    ;;
esac
