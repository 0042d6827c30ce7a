#!/usr/bin/env bash
# A one-node Slurm cluster on this machine, for tests/test_slurm.py: munge, slurmctld and slurmd on localhost,
# no accounting (no slurmdbd, so `sacct` has nothing to report and job status must come from `squeue`).
#   .ci/slurm-localhost.sh            configure and start an installed Slurm, wait until the node is idle
#   .ci/slurm-localhost.sh --install  the same, installing Debian's slurm-wlm and munge first when missing (.ci/run)
#   .ci/slurm-localhost.sh --stop     stop the daemons this script started
# Needs root (or passwordless sudo). It writes /etc/slurm/slurm.conf only when there is none or when it wrote the
# one there (first line below), so a real site's configuration is never replaced. Exit status 0: `sinfo` shows the
# node idle; anything else: the reason is the last line on stderr.
set -euo pipefail

MARK="# written by .ci/slurm-localhost.sh"
CONF=/etc/slurm/slurm.conf
STATE=/var/lib/slurm
LOGS=/var/log/slurm

fail() { echo "slurm-localhost: $*" >&2; exit 1; }
as_root() { if [ "$(id -u)" = 0 ]; then "$@"; else sudo -n "$@"; fi; }

if [ "$(id -u)" != 0 ] && ! sudo -n true 2>/dev/null; then
    fail "needs root or passwordless sudo"
fi

if [ "${1:-}" = --stop ]; then
    for daemon in slurmd slurmctld munged; do
        pidfile=/run/slurm-localhost-$daemon.pid
        [ -f "$pidfile" ] && as_root kill "$(cat "$pidfile")" 2>/dev/null || true
        as_root rm -f "$pidfile"
    done
    exit 0
fi

if ! command -v slurmctld >/dev/null || ! command -v slurmd >/dev/null || ! command -v munged >/dev/null; then
    [ "${1:-}" = --install ] || fail "Slurm (slurmctld, slurmd) or munge is not installed; .ci/slurm-localhost.sh --install installs them"
    command -v apt-get >/dev/null || fail "slurm-wlm and munge are not installed and apt-get is not available"
    as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -q slurm-wlm munge >/dev/null \
        || { as_root apt-get update -q >/dev/null \
             && as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -q slurm-wlm munge >/dev/null; } \
        || fail "apt-get install slurm-wlm munge failed"
fi

# already up (a previous run of this script, or a real cluster): nothing to do
if sinfo -h -o %T 2>/dev/null | grep -qE '^(idle|mixed|allocated)'; then
    exit 0
fi

# munge: the key that authenticates every Slurm message, and its daemon
if [ ! -s /etc/munge/munge.key ]; then
    as_root mkdir -p /etc/munge
    as_root dd if=/dev/urandom of=/etc/munge/munge.key bs=1024 count=1 status=none
fi
as_root mkdir -p /run/munge /var/lib/munge /var/log/munge
as_root chown munge:munge /etc/munge /etc/munge/munge.key /run/munge /var/lib/munge /var/log/munge
as_root chmod 0700 /etc/munge && as_root chmod 0400 /etc/munge/munge.key
if ! munge -n >/dev/null 2>&1; then
    as_root runuser -u munge -- munged --pid-file=/run/munge/munged.pid
    as_root cp /run/munge/munged.pid /run/slurm-localhost-munged.pid
fi
munge -n | unmunge >/dev/null || fail "munged does not answer"

# slurm.conf: this machine as the only node, with the CPUs and memory slurmd detects
if [ -f "$CONF" ] && [ "$(head -n1 "$CONF")" != "$MARK" ]; then
    fail "$CONF exists and was not written by this script; not replacing it"
fi
NODE=$(hostname -s)
HARDWARE=$(slurmd -C | head -n1 | sed -E 's/^NodeName=[^ ]+ //')  # CPUs=.. Boards=.. ... RealMemory=..
as_root mkdir -p /etc/slurm "$STATE/slurmctld" "$STATE/slurmd" "$LOGS"
as_root tee "$CONF" >/dev/null <<EOF
$MARK
ClusterName=localhost
SlurmctldHost=$NODE(127.0.0.1)
SlurmUser=root
AuthType=auth/munge
StateSaveLocation=$STATE/slurmctld
SlurmdSpoolDir=$STATE/slurmd
SlurmctldPidFile=/run/slurm-localhost-slurmctld.pid
SlurmdPidFile=/run/slurm-localhost-slurmd.pid
SlurmctldLogFile=$LOGS/slurmctld.log
SlurmdLogFile=$LOGS/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core_Memory
ReturnToService=2
# no slurmdbd: sacct has no records; a finished job stays visible to squeue for MinJobAge seconds
AccountingStorageType=accounting_storage/none
JobAcctGatherType=jobacct_gather/none
MinJobAge=300
NodeName=$NODE NodeAddr=127.0.0.1 $HARDWARE State=UNKNOWN
PartitionName=main Nodes=$NODE Default=YES MaxTime=INFINITE State=UP
EOF

as_root slurmctld
as_root slurmd
for _ in $(seq 60); do
    if sinfo -h -o %T 2>/dev/null | grep -qx idle; then
        sinfo
        exit 0
    fi
    sleep 1
done
sinfo >&2 || true
tail -n 20 "$LOGS/slurmctld.log" "$LOGS/slurmd.log" >&2 || true
fail "the node did not become idle within 60 s (logs above)"
