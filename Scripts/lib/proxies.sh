# shellcheck shell=bash
# Private tinyproxy, squid and microsocks on loopback, for interop checks and benchmarks.
#
# Source it (after lib/nginx.sh or lib/common.sh), then:
#   proxies_setup HTTPS_PORT       installs the three from Debian if missing, writes their configs
#                                  into a new temp dir (removed on exit unless KEEP_WORK=1; squid's
#                                  own user must reach it) and picks free ports; CONNECT is allowed
#                                  to HTTPS_PORT
#   proxies_start                  starts them in the foreground of background jobs (stopped on exit)
#
# After proxies_setup these are set:
#   TINYPROXY_PORT  TINYPROXY_USER  TINYPROXY_PASSWORD   (Basic auth required)
#   SQUID_PORT      SQUID_ACCESS_LOG                     (no auth; log_mime_hdrs on)
#   MICROSOCKS_PORT MICROSOCKS_USER MICROSOCKS_PASSWORD  (RFC 1929 auth required)

# shellcheck source=Scripts/lib/common.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

PROXY_PIDS=()

proxies_setup() {
    local https_port=$1 dir
    require_command tinyproxy tinyproxy
    require_command squid squid
    require_command microsocks microsocks
    dir=$(mktemp -d "${TMPDIR:-/tmp}/haul-proxies.XXXXXX")
    if [[ "${KEEP_WORK:-0}" != 1 ]]; then
        on_exit "rm -rf '$dir'"
    fi
    chmod 777 "$dir"   # squid drops to its own user, which writes its logs here
    PROXIES_DIR=$dir
    local ports
    ports=$(_free_ports 3)
    read -r TINYPROXY_PORT SQUID_PORT MICROSOCKS_PORT <<<"$ports"
    TINYPROXY_USER=tiny TINYPROXY_PASSWORD=tinysecret
    MICROSOCKS_USER=socks MICROSOCKS_PASSWORD=sockssecret
    SQUID_ACCESS_LOG=$dir/squid-access.log
    cat >"$dir/tinyproxy.conf" <<CONF
Port $TINYPROXY_PORT
Listen 127.0.0.1
Timeout 600
MaxClients 64
Allow 127.0.0.1
BasicAuth $TINYPROXY_USER $TINYPROXY_PASSWORD
ConnectPort $https_port
LogLevel Connect
LogFile "$dir/tinyproxy.log"
CONF
    cat >"$dir/squid.conf" <<CONF
http_port 127.0.0.1:$SQUID_PORT
acl loopback src 127.0.0.1/32
acl tls_port port $https_port
acl CONNECT method CONNECT
http_access deny CONNECT !tls_port
http_access allow loopback
http_access deny all
cache deny all
cache_mem 8 MB
pid_filename $dir/squid.pid
access_log stdio:$SQUID_ACCESS_LOG
cache_log $dir/squid-cache.log
cache_store_log none
log_mime_hdrs on
coredump_dir $dir
shutdown_lifetime 0 seconds
forwarded_for delete
via off
# Names come from /etc/hosts (localhost); any other lookup may only go to loopback.
dns_nameservers 127.0.0.1
CONF
    export TINYPROXY_PORT TINYPROXY_USER TINYPROXY_PASSWORD SQUID_PORT SQUID_ACCESS_LOG
    export MICROSOCKS_PORT MICROSOCKS_USER MICROSOCKS_PASSWORD
}

# Waits until 127.0.0.1:PORT accepts connections (NAME for the message).
_proxy_wait() {
    local name=$1 port=$2 tries=0
    until (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; do
        tries=$((tries + 1))
        ((tries <= 100)) || die "$name did not start listening on port $port within 10 s (logs in $PROXIES_DIR)"
        sleep 0.1
    done
}

proxies_start() {
    tinyproxy -d -c "$PROXIES_DIR/tinyproxy.conf" >"$PROXIES_DIR/tinyproxy.out" 2>&1 &
    PROXY_PIDS+=($!)
    squid -N -f "$PROXIES_DIR/squid.conf" >"$PROXIES_DIR/squid.out" 2>&1 &
    PROXY_PIDS+=($!)
    microsocks -i 127.0.0.1 -p "$MICROSOCKS_PORT" -u "$MICROSOCKS_USER" -P "$MICROSOCKS_PASSWORD" \
        >"$PROXIES_DIR/microsocks.out" 2>&1 &
    PROXY_PIDS+=($!)
    on_exit "proxies_stop"
    _proxy_wait tinyproxy "$TINYPROXY_PORT"
    _proxy_wait squid "$SQUID_PORT"
    _proxy_wait microsocks "$MICROSOCKS_PORT"
    log "tinyproxy on $TINYPROXY_PORT, squid on $SQUID_PORT, microsocks on $MICROSOCKS_PORT"
}

proxies_stop() {
    local pid
    for pid in "${PROXY_PIDS[@]}"; do
        kill -TERM "$pid" 2>/dev/null || true
    done
    for pid in "${PROXY_PIDS[@]}"; do
        wait "$pid" 2>/dev/null || true
    done
    PROXY_PIDS=()
}
