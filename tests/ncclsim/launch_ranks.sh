#!/bin/sh
# A launcher of the kind torchrun is: starts N copies of a program as ranks 0..N-1 of one
# job on this host, each with RANK, LOCAL_RANK, WORLD_SIZE, LOCAL_WORLD_SIZE, MASTER_ADDR,
# MASTER_PORT and NCCL_COMM_ID (the simulated NCCL's rendezvous) set, waits for all of them
# and exits with the first non-zero status of a rank. The launcher itself uses no GPU.
#   launch_ranks.sh [--rank-variable NAME] N PROGRAM [ARGS...]
# --rank-variable: the rank goes in NAME instead (a launcher whose variables profagent does not
# know: the rank then comes from the program's ncclCommInitRank), and WORLD_SIZE is not set.
set -u
rank_variable=RANK
if [ "$1" = "--rank-variable" ]; then
  rank_variable=$2
  shift 2
fi
n=$1
shift
export LOCAL_WORLD_SIZE="$n" MASTER_ADDR=127.0.0.1 MASTER_PORT=29500 RANKS_TRAIN_WORLD_SIZE="$n"
[ "$rank_variable" = RANK ] && export WORLD_SIZE="$n"
export NCCL_COMM_ID="${NCCL_COMM_ID:-launch_ranks_$$}"
pids=""
rank=0
while [ "$rank" -lt "$n" ]; do
  env "$rank_variable=$rank" LOCAL_RANK=$rank "$@" &
  pids="$pids $!"
  rank=$((rank + 1))
done
status=0
for pid in $pids; do
  wait "$pid" || { code=$?; [ "$status" -eq 0 ] && status=$code; }
done
exit "$status"
