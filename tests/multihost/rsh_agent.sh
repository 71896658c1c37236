#!/bin/sh
# rsh agent for Open MPI's mpirun (--mca plm_rsh_agent): the "hosts" are
# network namespaces of this machine, each with its own host name.
#   rsh_agent.sh [options] HOST COMMAND...
# Options an ssh would take are skipped; the command is parsed again by a
# shell, as ssh would do on a remote host.
while [ $# -gt 0 ]; do
    case $1 in
    -l | -p | -o | -i | -F) shift 2 ;;
    -*) shift ;;
    *) break ;;
    esac
done
host=$1
shift
exec ip netns exec "$host" unshare --uts sh -c "hostname $host; $*"
