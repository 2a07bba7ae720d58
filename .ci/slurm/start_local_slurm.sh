#!/usr/bin/env bash
# start_local_slurm.sh - bring up a real single-node SLURM cluster on this host
# (Debian 12 / SLURM 22.05, no systemd, no cgroups needed).  Idempotent:
#   * installs the Debian packages only if a binary is missing,
#   * (re)writes /etc/slurm/{slurm,gres[,slurmdbd]}.conf (restarts our daemons if they changed),
#   * starts only the daemons that are not already running,
#   * waits until the node is idle and a test job can be submitted.
# Every daemon it starts is recorded in $LOCAL_SLURM_BASE/run/started/<name>.pid;
# stop_local_slurm.sh stops exactly those (by PID, never by name).
#
# Must run as root.  Settings (environment variables):
#   LOCAL_SLURM_BASE        state/log/pid directory     (default ${TMPDIR:-/tmp}/oncoeval-slurm/state)
#   LOCAL_SLURM_ACCOUNTING  none | slurmdbd             (default none)
#        none:     no database; `sacct` does not work -> run snakemake with
#                  --slurm-status-command squeue
#        slurmdbd: also installs+starts MariaDB and slurmdbd so sacct/sacctmgr work
#                  (the executor plugin's defaults then work unchanged)
#   LOCAL_SLURM_PARTITION   partition name              (default cpu)
#   LOCAL_SLURM_GPUS        fake GPUs (gres/gpu) to declare, 0-5 (default 1)
#   LOCAL_SLURM_ACCOUNT     account created with slurmdbd (default ci)
#   LOCAL_SLURM_DB_PASS     MariaDB password of user slurm (default slurmci; socket-only DB)
# Packages it installs are listed in $LOCAL_SLURM_BASE/packages-installed; the stop script removes
# them again with LOCAL_SLURM_REMOVE_PACKAGES=1.
set -euo pipefail

BASE=${LOCAL_SLURM_BASE:-${TMPDIR:-/tmp}/oncoeval-slurm/state}
ACCOUNTING=${LOCAL_SLURM_ACCOUNTING:-none}
PARTITION=${LOCAL_SLURM_PARTITION:-cpu}
NGPUS=${LOCAL_SLURM_GPUS:-1}
ACCOUNT=${LOCAL_SLURM_ACCOUNT:-ci}
DB_PASS=${LOCAL_SLURM_DB_PASS:-slurmci}
CLUSTER=localci
RUN=$BASE/run
STARTED=$RUN/started
LOG=$BASE/log

T0=$(date +%s)
say() { printf '[start_local_slurm %3ss] %s\n' "$(( $(date +%s) - T0 ))" "$*"; }
die() { say "ERROR: $*" >&2; exit 1; }

[ "$(id -u)" = 0 ] || die "must run as root"
case "$ACCOUNTING" in none|slurmdbd) ;; *) die "LOCAL_SLURM_ACCOUNTING must be none or slurmdbd";; esac
case "$NGPUS" in [0-5]) ;; *) die "LOCAL_SLURM_GPUS must be 0..5";; esac

# ---------------------------------------------------------------- packages
need_pkgs=()
for b in slurmctld slurmd sinfo munged; do command -v "$b" >/dev/null || need_pkgs=(slurmctld slurmd slurm-client munge); done
if [ "$ACCOUNTING" = slurmdbd ]; then
  command -v slurmdbd >/dev/null || need_pkgs+=(slurmdbd)
  command -v mariadbd >/dev/null || need_pkgs+=(mariadb-server)
fi
if [ ${#need_pkgs[@]} -gt 0 ]; then
  say "installing ${need_pkgs[*]}"
  export DEBIAN_FRONTEND=noninteractive
  mkdir -p "$BASE"
  installed() { dpkg-query -W -f='${Package} ${db:Status-Abbrev}\n' | awk '$2 == "ii" {print $1}' | sort; }
  installed > "$BASE/packages-before"
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${need_pkgs[@]}" >"$BASE/apt.log" 2>&1 \
    || { tail -30 "$BASE/apt.log"; die "apt-get install failed"; }
  # What this run installed (dependencies included), so that the stop script can remove exactly
  # that: with the SLURM client installed and no controller up, `scontrol` waits ~10 s, and the
  # SLURM executor plugin calls it whenever Snakemake starts.
  installed | comm -13 "$BASE/packages-before" - > "$BASE/packages-installed"
  say "packages installed ($(dpkg-query -W -f='${Version}' slurmctld))"
fi

mkdir -p "$RUN" "$STARTED" "$LOG" "$BASE/ctld" "$BASE/d"

# helpers ---------------------------------------------------------------
# is_ours NAME: the recorded PID is alive and really is that program
is_ours() {
  local f=$STARTED/$1.pid p
  [ -s "$f" ] || return 1
  p=$(cat "$f")
  [ -d "/proc/$p" ] && [ "$(cat "/proc/$p/comm" 2>/dev/null)" = "$1" ] && return 0
  rm -f "$f"; return 1
}
# wait_pidfile FILE NAME: wait for a daemon's own pid file, record it as ours
wait_pidfile() {
  local f=$1 name=$2 i p
  for i in $(seq 1 100); do
    if [ -s "$f" ]; then p=$(cat "$f"); if [ -d "/proc/$p" ] && [ "$(cat /proc/$p/comm)" = "$name" ]; then
      echo "$p" > "$STARTED/$name.pid"; return 0; fi; fi
    sleep 0.2
  done
  return 1
}
port_open() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }
stop_ours() {  # NAME
  is_ours "$1" || return 0
  local p; p=$(cat "$STARTED/$1.pid"); kill "$p" 2>/dev/null || true
  for _ in $(seq 1 100); do [ -d "/proc/$p" ] || break; sleep 0.2; done
  rm -f "$STARTED/$1.pid"
}

# ---------------------------------------------------------------- config
H=$(hostname -s)
# topology exactly as slurmd detects it, so the node is never drained for
# "low socket*core*thread count"; RealMemory = 90 % of what slurmd sees
NODE_HW=$(slurmd -C | head -1 | sed -e 's/^NodeName=[^ ]* //' -e 's/ RealMemory=.*//')
MEM=$(slurmd -C | head -1 | sed -n 's/.*RealMemory=\([0-9]*\).*/\1/p')
REALMEM=$(( MEM * 9 / 10 ))
GRES_NODE=""; GRES_TYPES=""
if [ "$NGPUS" -gt 0 ]; then
  GRES_NODE=" Gres=gpu:$NGPUS"; GRES_TYPES="GresTypes=gpu"
  # fake GPUs: any existing character devices will do (slurm only stat()s them
  # without task/cgroup); jobs get CUDA_VISIBLE_DEVICES=0[,1..]
  GPU_FILES=$(echo /dev/null /dev/zero /dev/full /dev/random /dev/urandom | cut -d' ' -f1-"$NGPUS" | tr ' ' ,)
fi
if [ "$ACCOUNTING" = slurmdbd ]; then
  ACCT_LINES="AccountingStorageType=accounting_storage/slurmdbd
AccountingStorageHost=localhost
AccountingStorageTRES=gres/gpu
JobAcctGatherType=jobacct_gather/linux
JobAcctGatherFrequency=5"
else
  ACCT_LINES="AccountingStorageType=accounting_storage/none
JobAcctGatherType=jobacct_gather/none"
fi

NEWCONF=$(cat <<EOF
# generated by start_local_slurm.sh - single-node test cluster
ClusterName=$CLUSTER
SlurmctldHost=$H(127.0.0.1)
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
MpiDefault=none
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
$ACCT_LINES
JobCompType=jobcomp/none
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_Core_Memory
DefMemPerCPU=1024
ReturnToService=2
MinJobAge=600
SlurmctldPidFile=$RUN/slurmctld.pid
SlurmdPidFile=$RUN/slurmd.pid
SlurmctldLogFile=$LOG/slurmctld.log
SlurmdLogFile=$LOG/slurmd.log
StateSaveLocation=$BASE/ctld
SlurmdSpoolDir=$BASE/d
SlurmctldPort=6817
SlurmdPort=6818
SlurmctldDebug=info
SlurmdDebug=info
$GRES_TYPES
NodeName=$H NodeAddr=127.0.0.1 $NODE_HW RealMemory=$REALMEM$GRES_NODE State=UNKNOWN
PartitionName=$PARTITION Nodes=ALL Default=YES MaxTime=INFINITE State=UP
EOF
)
NEWGRES="# generated by start_local_slurm.sh"
[ "$NGPUS" -gt 0 ] && NEWGRES="$NEWGRES
AutoDetect=off
NodeName=$H Name=gpu File=$GPU_FILES"

CHANGED=0
write_conf() {  # FILE CONTENT MODE
  if [ ! -f "$1" ] || [ "$(cat "$1")" != "$2" ]; then
    if [ -f "$1" ] && ! grep -q 'generated by start_local_slurm.sh' "$1" && [ ! -e "$1.orig" ]; then cp -p "$1" "$1.orig"; fi
    printf '%s\n' "$2" > "$1"; chmod "$3" "$1"; CHANGED=1; say "wrote $1"
  fi
}
mkdir -p /etc/slurm
write_conf /etc/slurm/slurm.conf "$NEWCONF" 644
write_conf /etc/slurm/gres.conf "$NEWGRES" 644
if [ "$ACCOUNTING" = slurmdbd ]; then
  write_conf /etc/slurm/slurmdbd.conf "# generated by start_local_slurm.sh
AuthType=auth/munge
DbdHost=localhost
DbdPort=6819
SlurmUser=root
PidFile=$RUN/slurmdbd.pid
LogFile=$LOG/slurmdbd.log
DebugLevel=info
StorageType=accounting_storage/mysql
StorageHost=localhost
StorageUser=slurm
StoragePass=$DB_PASS
StorageLoc=slurm_acct_db" 600
fi
if [ "$CHANGED" = 1 ]; then stop_ours slurmd; stop_ours slurmctld; stop_ours slurmdbd; fi

# ---------------------------------------------------------------- munge
if munge -n 2>/dev/null | unmunge >/dev/null 2>&1; then
  say "munged already running$(is_ours munged && echo ' (ours)' || echo ' (not ours, reusing it)')"
else
  [ -s /etc/munge/munge.key ] || { mungekey --create --keyfile=/etc/munge/munge.key; chown munge:munge /etc/munge/munge.key; chmod 400 /etc/munge/munge.key; }
  install -d -o munge -g munge -m 0755 /run/munge
  install -d -o munge -g munge -m 0700 /var/lib/munge /var/log/munge
  rm -f /run/munge/munged.pid
  runuser -u munge -- /usr/sbin/munged --pid-file=/run/munge/munged.pid
  wait_pidfile /run/munge/munged.pid munged || die "munged did not start (see /var/log/munge/munged.log)"
  say "started munged pid $(cat "$STARTED/munged.pid")"
fi

# ---------------------------------------------------------------- mariadb + slurmdbd
if [ "$ACCOUNTING" = slurmdbd ]; then
  if mariadb-admin ping >/dev/null 2>&1; then
    say "mariadb already running$(is_ours mariadbd && echo ' (ours)' || echo ' (not ours, reusing it)')"
  else
    install -d -o mysql -g mysql -m 0755 /run/mysqld
    [ -d /var/lib/mysql/mysql ] || mariadb-install-db --user=mysql --datadir=/var/lib/mysql >"$LOG/mariadb-install.log" 2>&1
    rm -f /run/mysqld/mysqld.pid
    # socket only (no TCP listener)
    setsid /usr/sbin/mariadbd --user=mysql --datadir=/var/lib/mysql --skip-networking \
      --socket=/run/mysqld/mysqld.sock --pid-file=/run/mysqld/mysqld.pid \
      --innodb-buffer-pool-size=128M </dev/null >"$LOG/mariadb.log" 2>&1 &
    wait_pidfile /run/mysqld/mysqld.pid mariadbd || die "mariadbd did not start (see $LOG/mariadb.log)"
    for _ in $(seq 1 100); do mariadb-admin ping >/dev/null 2>&1 && break; sleep 0.2; done
    say "started mariadbd pid $(cat "$STARTED/mariadbd.pid")"
  fi
  mariadb -uroot -e "CREATE DATABASE IF NOT EXISTS slurm_acct_db;
    CREATE USER IF NOT EXISTS 'slurm'@'localhost' IDENTIFIED BY '$DB_PASS';
    ALTER USER 'slurm'@'localhost' IDENTIFIED BY '$DB_PASS';
    GRANT ALL ON slurm_acct_db.* TO 'slurm'@'localhost'; FLUSH PRIVILEGES;"
  if is_ours slurmdbd; then say "slurmdbd already running (ours)"
  elif port_open 6819; then die "port 6819 in use by a slurmdbd this script did not start"
  else
    rm -f "$RUN/slurmdbd.pid"; /usr/sbin/slurmdbd
    wait_pidfile "$RUN/slurmdbd.pid" slurmdbd || die "slurmdbd did not start (see $LOG/slurmdbd.log)"
    for _ in $(seq 1 150); do port_open 6819 && break; sleep 0.2; done
    say "started slurmdbd pid $(cat "$STARTED/slurmdbd.pid")"
  fi
fi

# ---------------------------------------------------------------- slurmctld + slurmd
if is_ours slurmctld; then say "slurmctld already running (ours)"
elif port_open 6817; then die "port 6817 in use by a slurmctld this script did not start"
else
  rm -f "$RUN/slurmctld.pid"
  /usr/sbin/slurmctld -c   # -c: discard old job/node state (stale DRAIN reasons etc.)
  wait_pidfile "$RUN/slurmctld.pid" slurmctld || die "slurmctld did not start (see $LOG/slurmctld.log)"
  say "started slurmctld pid $(cat "$STARTED/slurmctld.pid")"
fi
if is_ours slurmd; then say "slurmd already running (ours)"
elif port_open 6818; then die "port 6818 in use by a slurmd this script did not start"
else
  rm -f "$RUN/slurmd.pid"
  /usr/sbin/slurmd
  wait_pidfile "$RUN/slurmd.pid" slurmd || die "slurmd did not start (see $LOG/slurmd.log)"
  say "started slurmd pid $(cat "$STARTED/slurmd.pid")"
fi

# ---------------------------------------------------------------- accounts (slurmdbd)
if [ "$ACCOUNTING" = slurmdbd ]; then
  for _ in $(seq 1 100); do sacctmgr -n show cluster format=cluster 2>/dev/null | grep -qw "$CLUSTER" && break; sleep 0.3; done
  sacctmgr -n show account "$ACCOUNT" format=account 2>/dev/null | grep -qw "$ACCOUNT" \
    || sacctmgr -i add account "$ACCOUNT" Cluster="$CLUSTER" Description=ci Organization=ci >/dev/null
  sacctmgr -n show assoc user=root account="$ACCOUNT" format=user 2>/dev/null | grep -qw root \
    || sacctmgr -i add user root Account="$ACCOUNT" DefaultAccount="$ACCOUNT" >/dev/null
fi

# ---------------------------------------------------------------- wait for an idle node
state=""
for i in $(seq 1 120); do
  state=$(sinfo -h -N -n "$H" -o '%T' 2>/dev/null | head -1 || true)
  case "$state" in
    idle|mixed|allocated|completing) break;;
    *drain*|*down*|*inval*|*fail*) [ "$i" -eq 10 ] && scontrol update nodename="$H" state=resume 2>/dev/null || true;;
  esac
  sleep 0.5
done
case "$state" in idle|mixed|allocated|completing) ;; *)
  sinfo -N -o '%N %T %E' || true; tail -20 "$LOG/slurmctld.log" "$LOG/slurmd.log" >&2 || true
  die "node $H not usable (state '$state')";; esac
sinfo -o '%P %a %D %T %c %m %G'
say "cluster ready: partition=$PARTITION gpus=$NGPUS accounting=$ACCOUNTING"
