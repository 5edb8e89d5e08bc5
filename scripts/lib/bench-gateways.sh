# scripts/lib/bench-gateways.sh: the gateway modes' servers (scripts/bench
# --lazy and --cold), sourced after scripts/lib/bench.sh with RCLONE found:
# Apache as the upstream, then davgate and rclone in front of it, each as
# the description at the top of scripts/bench says.
# shellcheck shell=bash disable=SC2034  # what is set here is read by the modes

# Apache, the upstream: one DAV folder at /dav/, over plain HTTP for the
# gateways (like the integration tests' upstream) and over TLS for direct
# reads. Sets UPSTREAM_PORT, UPSTREAM_URL, ACCESS_LOG; registers "apache".
start_upstream_apache() {
    say "Starting Apache httpd (mpm_event, mod_dav_fs): plain HTTP as the upstream, TLS for direct reads"
    UPSTREAM_PORT=$(free_port)
    start_apache /dav "$UPSTREAM_PORT"
    register_server apache "https://127.0.0.1:$APACHE_PORT/dav" "admin:$APACHE_PASSWORD" "$APACHE_CA" \
        "$APACHE_STORE" "$(cat "$APACHE_PIDFILE")"
    UPSTREAM_URL="http://127.0.0.1:$UPSTREAM_PORT/dav/"
    ACCESS_LOG="$WORK/apache/access.log"
    note "pid $(server_pid apache), direct $(url apache)/, upstream $UPSTREAM_URL"
}

# davgate (domain "lazy", Apache's password in its vault; D its folder) and
# rclone (R its folder) over that upstream, each with its RSS sampled;
# registers "davgate" and "rclone".
start_gateways() {
    # davgate, the password in its vault.
    say "Starting davgate: domain lazy, upstream $UPSTREAM_URL, Apache's password in a davgate vault"
    D="$WORK/davgate"
    davgate_vault_for_apache "$D" lazy
    # log_level info: davgate logs each fetch over 1 MiB with its rate.
    davgate_config "$D" 'log_level = "info"' 'vault = "../vault/vault.dgv"'
    printf '%s\n' '[[domain]]' 'name = "lazy"' "upstream = \"$UPSTREAM_URL\"" \
        'credentials = { service = "apache", account = "admin" }' >> "$D/conf/davgate.toml"
    start_davgate "$D" --key-file "$D/vault/vault.key"
    register_server davgate "https://127.0.0.1:$DAVGATE_PORT/lazy" "admin:$DAVGATE_PASSWORD" "$DAVGATE_CA" "" "$DAVGATE_PID"
    start_rss_sampler "$DAVGATE_PID" "$WORK/rss.davgate"
    note "pid $DAVGATE_PID, $(url davgate)/"

    # rclone over the same upstream.
    say "Starting rclone $RCLONE_VERSION: serve webdav --vfs-cache-mode full over $UPSTREAM_URL"
    # The upstream password obscured as in a config file.
    start_rclone_webdav upstream: RCLONE_CONFIG_UPSTREAM_TYPE=webdav RCLONE_CONFIG_UPSTREAM_URL="$UPSTREAM_URL" \
        RCLONE_CONFIG_UPSTREAM_VENDOR=other RCLONE_CONFIG_UPSTREAM_USER=admin \
        RCLONE_CONFIG_UPSTREAM_PASS="$(printf '%s\n' "$APACHE_PASSWORD" | "$RCLONE" obscure -)"
    start_rss_sampler "$RCLONE_PID" "$WORK/rss.rclone"
}
