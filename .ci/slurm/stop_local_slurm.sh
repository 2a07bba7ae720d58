#!/usr/bin/env bash
# stop_local_slurm.sh - stop the daemons that start_local_slurm.sh started,
# using only the PIDs it recorded in $LOCAL_SLURM_BASE/run/started/ (never by name).
# A recorded PID is signalled only if /proc/PID/comm still names that program.
# Jobs still in the queue are cancelled first (while our slurmctld is up).
# Optional: LOCAL_SLURM_PURGE=1 also deletes the state/log directory.
set -uo pipefail

BASE=${LOCAL_SLURM_BASE:-${TMPDIR:-/tmp}/oncoeval-slurm/state}
STARTED=$BASE/run/started
say() { printf '[stop_local_slurm] %s\n' "$*"; }

alive_as() {  # PID NAME
  [ -d "/proc/$1" ] && [ "$(cat "/proc/$1/comm" 2>/dev/null)" = "$2" ]
}

stop_one() {  # NAME
  local name=$1 f=$STARTED/$1.pid p i
  [ -s "$f" ] || return 0
  p=$(cat "$f")
  if ! alive_as "$p" "$name"; then
    say "$name (pid $p) not running any more"; rm -f "$f"; return 0
  fi
  kill -TERM "$p" 2>/dev/null
  for i in $(seq 1 100); do alive_as "$p" "$name" || break; sleep 0.2; done
  if alive_as "$p" "$name"; then say "$name (pid $p) ignored SIGTERM for 20 s, sending SIGKILL"; kill -KILL "$p" 2>/dev/null; sleep 0.5; fi
  rm -f "$f"
  say "stopped $name (pid $p)"
}

if [ -d "$STARTED" ]; then
  p=$(cat "$STARTED/slurmctld.pid" 2>/dev/null || true)
  if [ -n "$p" ] && alive_as "$p" slurmctld; then
    jobs=$(squeue -h -o %i 2>/dev/null | tr '\n' ' ')
    if [ -n "${jobs// /}" ]; then
      say "cancelling jobs: $jobs"; scancel $jobs 2>/dev/null
      for _ in $(seq 1 50); do [ -z "$(squeue -h -t R,CG,PD -o %i 2>/dev/null)" ] && break; sleep 0.2; done
    fi
  fi
  # reverse start order
  for name in slurmd slurmctld slurmdbd mariadbd munged; do stop_one "$name"; done
else
  say "nothing recorded in $STARTED - nothing to stop"
fi

if [ "${LOCAL_SLURM_PURGE:-0}" = 1 ]; then rm -rf "$BASE"; say "removed $BASE"; fi
exit 0
