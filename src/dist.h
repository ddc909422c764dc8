/* Sorting across processes, for clusters: under mpirun -n P (in a build
 * configured --with-mpi), every process maps the input files, takes its
 * slice of them (whole records or lines), and the processes agree on P - 1
 * splitters from a sample of every slice.  Each process sends every record
 * to the process of its key range (MPI point-to-point, in chunks, so that
 * counts past INT_MAX pass), sorts the range it received on its own device
 * and writes it at its offset in a temporary file beside OUT, which the
 * first process renames to OUT once all are done.  In a build without MPI,
 * or with one process, the sort is the usual one. */
#ifndef CLSORT_DIST_H
#define CLSORT_DIST_H

#include "clsort.h"

/* Join the other processes when started by mpirun; else nothing.  0, or
 * CLS_E_FAIL after a message. */
int dist_init(int *argc, char ***argv);

/* Run the sort (or check) o describes: across the processes when there
 * are several.  0, CLS_E_DISORDER, CLS_E_PIPE or CLS_E_FAIL; messages are
 * already printed, each naming its process. */
int dist_run(const struct cls_opts *o);

/* Leave with exit status status.  Among several processes, a failure all
 * of them learned of (a bad line, a missing input) ends each once all
 * have cleaned up; one only this process knows of ends them all
 * (MPI_Abort) with status.  Returns status. */
int dist_finish(int status);

#endif
