# The slurm.conf lines that the private beds share (tests/slurm/cluster.sh on
# this machine, tests/rxe/two_guest_bed.sh across two guests): no systemd,
# no cgroups and no mail, root everywhere, several tasks per declared CPU
# allowed.  Sourced; slurm_conf_base DIR prints them, with the state, spool,
# TmpFS and pid files below DIR (%n: one per node, as each slurmd needs).
slurm_conf_base() {
    cat <<EOF
SlurmUser=root
SlurmdUser=root
MailProg=/bin/true
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
MpiDefault=none
ReturnToService=2
SlurmdParameters=config_overrides
KillWait=5
StateSaveLocation=$1/state
SlurmdSpoolDir=$1/spool/%n
TmpFS=$1/tmp/%n
SlurmctldPidFile=$1/run/slurmctld.pid
SlurmdPidFile=$1/run/slurmd.%n.pid
EOF
}
