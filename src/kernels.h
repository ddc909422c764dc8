/* OpenCL C sources embedded at build time (kernels.c is generated). */
#ifndef CLSORT_KERNELS_H
#define CLSORT_KERNELS_H

#include <stddef.h>

struct kernel_source {
	const char *name;	/* file name under kernels/ */
	const char *text;
	size_t len;
};

/* Terminated by an entry with name NULL; in the order they are compiled. */
extern const struct kernel_source kernel_sources[];

#endif
