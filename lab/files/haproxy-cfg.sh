#!/usr/bin/env bash
# Prints the lab balancer's haproxy configuration (lab/lb.sh; bench/graceful_restart.py runs the same on loopback).
#   haproxy-cfg.sh [--bind ADDR:PORT] [--stats ADDR:PORT] [--keep-sessions] [NAME=]BACKEND[:PORT]...
# A server is named NAME (the lab passes the node names, so that a playbook can address it by inventory_hostname),
# else cp1, cp2, ... in order. The stats page takes admin actions (lab/files/balancer-*.yml): lab only, it has no auth.
# TCP round robin to every kube-apiserver, health-checked with GET /readyz over TLS: a draining kube-apiserver
# (SIGTERM, --shutdown-delay-duration) fails /readyz at once while /healthz stays 200, so /healthz cannot be used.
set -euo pipefail
bind='*:6443' stats='*:8404' down_action=' on-marked-down shutdown-sessions'
while [ $# -gt 0 ]; do
  case $1 in
    --bind) bind=$2; shift 2 ;;
    --stats) stats=$2; shift 2 ;;
    --keep-sessions) down_action=''; shift ;;
    --*) echo "haproxy-cfg.sh: unknown option $1" >&2; exit 2 ;;
    *) break ;;
  esac
done
[ $# -gt 0 ] || { echo "usage: haproxy-cfg.sh [--bind A:P] [--stats A:P] [--keep-sessions] [NAME=]BACKEND..." >&2; exit 2; }
cat <<EOF2
# written by lab/files/haproxy-cfg.sh
global
  log stdout format raw local0 notice
  maxconn 4096

defaults
  log global
  mode tcp
  option dontlognull
  # a control plane that refuses or drops connections (kube-apiserver restarting during an
  # upgrade, node container stopped): retry the connect on another server
  retries 3
  option redispatch 1
  timeout connect 3s
  timeout check 2s
  # watches and exec/logs streams are long-lived
  timeout client 1h
  timeout server 1h
  timeout tunnel 1h

frontend stats
  mode http
  bind $stats
  stats enable
  stats uri /stats
  stats refresh 5s
  stats admin if TRUE

frontend kube-apiserver
  bind $bind
  default_backend kube-apiservers

backend kube-apiservers
  balance roundrobin
  option httpchk
  http-check connect ssl
  http-check send meth GET uri /readyz
  http-check expect status 200
  # down after ~2 s of failed checks, back after 2 good ones
  default-server inter 1s fall 2 rise 2 verify none$down_action
EOF2
i=0
for backend in "$@"; do
  i=$((i + 1)) name=cp$((i))
  case $backend in *=*) name=${backend%%=*} backend=${backend#*=} ;; esac
  case $backend in *:*) ;; *) backend=$backend:6443 ;; esac
  echo "  server $name $backend check"
done
