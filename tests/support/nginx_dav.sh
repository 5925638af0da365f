# Sourced by shell tests and benchmarks: Debian's nginx with WebDAV PUT on 127.0.0.1, serving a
# directory of its own, as a remote object cache (docs/performance.md: GET, HEAD and PUT on
# <url>/<key>). start_nginx_dav DIR starts it in DIR (config, data, logs) on a free port, sets
# NGINX_DAV_URL (http://127.0.0.1:PORT) and NGINX_DAV_PID, and returns once it answers;
# stop_nginx_dav stops it. free_port prints a port nothing listens on now.

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

start_nginx_dav() {
  local dir=$1 port
  port=$(free_port)
  mkdir -p "$dir/data" "$dir/tmp"
  cat > "$dir/nginx.conf" <<CONF
daemon off; master_process off; worker_processes 1;
pid $dir/nginx.pid; error_log $dir/error.log;
events { worker_connections 64; }
http {
  access_log $dir/access.log;
  client_body_temp_path $dir/tmp; proxy_temp_path $dir/tmp; fastcgi_temp_path $dir/tmp;
  uwsgi_temp_path $dir/tmp; scgi_temp_path $dir/tmp;
  client_max_body_size 0;
  server { listen 127.0.0.1:$port;
    location / { root $dir/data; dav_methods PUT; create_full_put_path on; dav_access user:rw; } }
}
CONF
  "$(command -v nginx || echo /usr/sbin/nginx)" -p "$dir" -c "$dir/nginx.conf" &
  NGINX_DAV_PID=$!
  NGINX_DAV_URL=http://127.0.0.1:$port
  for _ in $(seq 50); do (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null && return 0; sleep 0.1; done
  echo "nginx did not answer on 127.0.0.1:$port: $(cat "$dir/error.log" 2>/dev/null)" >&2
  return 1
}

stop_nginx_dav() { [ -n "${NGINX_DAV_PID:-}" ] && kill "$NGINX_DAV_PID" 2>/dev/null; NGINX_DAV_PID=""; }
