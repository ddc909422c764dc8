/* Programs for a device: the embedded kernels built with a sort's
 * options, kept in a binary cache per source, options, clsort version,
 * platform, device and driver (or left to the driver's own cache, PoCL's),
 * and built ahead of the sort where the device is opened early. */
#ifndef CLSORT_DEVBUILD_H
#define CLSORT_DEVBUILD_H

#include <stdbool.h>

#include "device.h"

/* Build the embedded kernels with the given options: the program
 * dev_build_early built with them where one waits, else from the binary
 * cache when an entry for this source, options, clsort version, platform,
 * device and driver exists and loads, else into it; what (the kernels it
 * holds) names the program in -vv's account of the cost.  0 or CLS_E_FAIL
 * after printing the build log. */
int dev_build(struct dev_ctx *d, const char *options, const char *what, cl_program *program);

/* dev_build ahead of the sort (a build, or a load from clsort's cache),
 * into d->early for the dev_build with the same options that will follow
 * (at most DEV_EARLY programs: past them, or where one with these options
 * waits, nothing is built).  A failure is left for that dev_build to meet
 * again and report. */
void dev_build_early(struct dev_ctx *d, const char *options, const char *what);

/* Whether the binary cache has an entry for the program dev_build would
 * build with options (it may still fail to load); false where the driver
 * caches compiled kernels itself, which clsort's cache leaves to it. */
bool dev_cached(const struct dev_ctx *d, const char *options);

#endif
