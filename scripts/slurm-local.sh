#!/usr/bin/env bash
# A throwaway single-node Slurm cluster on this machine, for the Slurm executor's tests and for
# trying `trainer run --executor slurm` without a cluster. Everything lives in DIR: the munge
# key and socket, slurm.conf, state, spool, logs and pid files; nothing in /etc is touched and
# no system daemon is started. What each setting is for: ../shared/reference/slurm-local.md.
#
#   usage: scripts/slurm-local.sh start DIR    (then: export SLURM_CONF=DIR/slurm.conf)
#          scripts/slurm-local.sh stop DIR
#
# start: munged, then slurmctld, then slurmd, each waited for (bounded); fails with the log's
# tail if one does not come up. stop: cancels every job, then stops the three daemons by the
# PIDs in their pid files (TERM, KILL after 10 s); never by name.
# Needs Debian's slurmctld, slurmd, slurm-client and munge (scripts/test.sh installs them).
set -euo pipefail
[ $# -eq 2 ] || { sed -n '7,8p' "$0" | sed 's/^# *//' >&2; exit 2; }
ACTION=$1
DIR=$(realpath -m "$2")
CONF=$DIR/slurm.conf
export SLURM_CONF=$CONF

die() { echo "slurm-local.sh: $*" >&2; exit 1; }

# Waits up to $1 seconds for the command after it to succeed.
wait_for() {
    local limit=$1; shift
    local end=$((SECONDS + limit))
    until "$@" >/dev/null 2>&1; do
        [ $SECONDS -lt $end ] || return 1
        sleep 0.2
    done
}

# Whether the process in pid file $1 lives (a zombie is dead).
alive() {
    [ -s "$1" ] || return 1
    local pid state
    pid=$(cat "$1")
    state=$(ps -o stat= -p "$pid" 2>/dev/null) || return 1
    [[ $state != Z* ]]
}

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }

start() {
    for p in munged mungekey slurmctld slurmd sinfo scontrol; do
        command -v "$p" >/dev/null || die "$p not found: apt-get install slurmctld slurmd slurm-client munge"
    done
    mkdir -p "$DIR"/{state,spool,log,munge}
    chmod 711 "$DIR/munge"
    [ -s "$DIR/munge/munge.key" ] || mungekey --create --keyfile="$DIR/munge/munge.key"
    chmod 600 "$DIR/munge/munge.key"
    local socket=$DIR/munge/munge.socket
    if ! alive "$DIR/munge/munged.pid"; then
        munged --force --socket="$socket" --key-file="$DIR/munge/munge.key" \
            --pid-file="$DIR/munge/munged.pid" --log-file="$DIR/log/munged.log" \
            --seed-file="$DIR/munge/munged.seed"
    fi
    wait_for 10 bash -c "munge -S '$socket' -n | unmunge -S '$socket'" \
        || die "munged did not start: $(tail -3 "$DIR/log/munged.log" 2>/dev/null)"
    local cpus mem
    cpus=$(nproc)
    mem=$(awk '/MemTotal/ { printf "%d", $2 / 1024 * 0.9 }' /proc/meminfo)
    cat >"$CONF" <<CONF
ClusterName=local
SlurmctldHost=localhost
SlurmctldPort=$(free_port)
SlurmdPort=$(free_port)
SlurmUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$socket
CommunicationParameters=NoCtldInAddrAny,NoInAddrAny
StateSaveLocation=$DIR/state
SlurmdSpoolDir=$DIR/spool
SlurmctldPidFile=$DIR/slurmctld.pid
SlurmdPidFile=$DIR/slurmd.pid
SlurmctldLogFile=$DIR/log/slurmctld.log
SlurmdLogFile=$DIR/log/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
MpiDefault=none
MailProg=/bin/true
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/filetxt
JobCompLoc=$DIR/log/jobcomp.log
SchedulerParameters=batch_sched_delay=0,sched_min_interval=0
ReturnToService=2
NodeName=localhost NodeAddr=127.0.0.1 CPUs=$cpus RealMemory=$mem State=UNKNOWN
PartitionName=debug Nodes=localhost Default=YES MaxTime=INFINITE State=UP
CONF
    slurmctld -f "$CONF" -i
    wait_for 20 bash -c "scontrol ping | grep -q UP" \
        || die "slurmctld did not start: $(tail -3 "$DIR/log/slurmctld.log" 2>/dev/null)"
    slurmd -f "$CONF" -N localhost
    wait_for 30 bash -c "sinfo -h -N -o %t | grep -qx idle" \
        || die "slurmd did not come up: $(tail -3 "$DIR/log/slurmd.log" 2>/dev/null)"
    echo "export SLURM_CONF=$CONF"
}

stop() {
    if [ -f "$CONF" ] && alive "$DIR/slurmctld.pid"; then
        timeout 10 scancel --user "$(id -un)" 2>/dev/null || true
        wait_for 15 bash -c '[ -z "$(squeue -h -o %i)" ]' || true
    fi
    local pids=()
    for f in "$DIR/slurmd.pid" "$DIR/slurmctld.pid" "$DIR/munge/munged.pid"; do
        if alive "$f"; then pids+=("$f"); kill -TERM "$(cat "$f")" 2>/dev/null || true; fi
    done
    local end=$((SECONDS + 10))
    for f in "${pids[@]}"; do
        while alive "$f" && [ $SECONDS -lt $end ]; do sleep 0.2; done
        if alive "$f"; then kill -KILL "$(cat "$f")" 2>/dev/null || true; fi
    done
}

case $ACTION in
    start) start ;;
    stop) stop ;;
    *) die "unknown action '$ACTION' (start or stop)" ;;
esac
