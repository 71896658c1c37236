/* Team handles of the OpenSHMEM layer, for its other files. */
#ifndef SR_SHMEM_SH_TEAM_H
#define SR_SHMEM_SH_TEAM_H

#include "core/team.h"

/* The core's team of a handle; a handle that is no team ends the job
 * naming `fn`. */
sr_team_t *sr_sh_team(const char *fn, struct sr_team *team);
/* The same, NULL for a handle that is no team (calls that return -1). */
sr_team_t *sr_sh_team_or_null(struct sr_team *team);
/* Copies the core's world and shared teams into SHMEM_TEAM_WORLD/SHARED:
 * shmem_init calls it, so team contexts made before any team call see them. */
void sr_sh_teams_bind(void);

#endif
