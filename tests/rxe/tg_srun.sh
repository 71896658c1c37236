#!/bin/sh
# One Slurm step over the two guests of the two-guest bed (two_guest_bed.sh
# exports SLURM_CONF), bounded by TG_STEP_TIMEOUT seconds (default 240); srun
# ends the other tasks when one fails, 60 s after the first one exits at the
# latest.  A script rather than a function so that `env VAR=x` can run it.
exec timeout "${TG_STEP_TIMEOUT:-240}" srun --mpi=pmix --kill-on-bad-exit=1 --wait=60 "$@"
