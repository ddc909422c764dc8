/* The build without MPI: one process, the usual sort. */
#include "config.h"
#include "dist.h"

#include "pipeline.h"

int dist_init(int *argc, char ***argv)
{
	return 0;
}

int dist_run(const struct cls_opts *o)
{
	return cls_run(o);
}

int dist_finish(int status)
{
	return status;
}
