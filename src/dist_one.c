/* The build without MPI: one process, the usual sort. */
#include "config.h"
#include "dist.h"

#include <stdlib.h>

#include "answer.h"
#include "pipeline.h"
#include "util.h"

int dist_init(int *argc, char ***argv)
{
	const char *n = getenv("OMPI_COMM_WORLD_SIZE");

	/* Several copies of a sort that knows nothing of the others would
	 * each sort everything into the same output. */
	if (n && atoi(n) > 1) {
		msg_err("this clsort was built without MPI: run one process, or build it with "
			"./configure --with-mpi to sort across %d", atoi(n));
		return CLS_E_FAIL;
	}
	return 0;
}

int dist_run(const struct cls_opts *o)
{
	answer_start(o);
	return cls_run(o);
}

int dist_finish(int status)
{
	return status;
}
