"""Health of observed objects, shared by every kind's status: Grove's PodCliques and scaling groups,
Deployments, LeaderWorkerSets, Jobs, and the conditions a status carries. Pure functions of plain dicts."""
