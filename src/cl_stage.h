/* The OpenCL engine's transfers: words go up to a device buffer and come
 * down from it in chunks of whole tiles, through STG_N pinned staging
 * buffers in turn, so that producing the words, their transfers and the
 * kernels that sort them (and the transfers down and consuming) overlap. */
#ifndef CLSORT_CL_STAGE_H
#define CLSORT_CL_STAGE_H

#include <CL/cl.h>
#include <stdbool.h>
#include <stddef.h>

#include "device.h"
#include "engine.h"

#define STG_N DEV_STAGE

struct stg {
	struct dev_ctx *d;
	cl_command_queue q;		/* the transfers' queue */
	size_t wsize, tile;		/* bytes per word, words per tile */
	cl_mem mem[STG_N];		/* pinned staging buffers, mapped... */
	void *host[STG_N];		/* ...here, through mapq (q, or the
					 * device's queue for those made
					 * ahead) */
	cl_command_queue mapq;
	size_t bytes;			/* of each */
	bool host_idle;			/* the device's sort leaves the host's
					 * threads idle: not a CPU device's */
};

/* Chunk c of a sort: tiles [t0, t1) and words [w0, w1). */
struct stg_chunk {
	size_t t0, t1, w0, w1;
};

/* Transfers on q of d for sorts of wsize-byte words in tiles of tile
 * words; no buffer is made yet. */
void stg_init(struct stg *s, struct dev_ctx *d, cl_command_queue q, size_t wsize, size_t tile);

/* The staging buffers, made on the first call, sized for a first sort of
 * n words: about a 32nd of it, from 16 to 64 MiB (the first upload and
 * the last download are not overlapped; a producer fed by many threads
 * waits at each chunk's end), at least a pair of tiles; or those made
 * ahead on the device, where they hold a pair of tiles.  0 or CLS_E_FAIL
 * after a message. */
int stg_make(struct stg *s, size_t n);

/* Staging buffers of the smallest size (16 MiB) made on d (through its
 * queue) while the input is still read, for the first stg_make on d to
 * take; nothing where they cannot be had, whose stg_make then says why. */
void stg_make_ahead(struct dev_ctx *d);

/* Tiles per chunk (even where pairs: whole pairs of tiles). */
size_t stg_chunk_tiles(const struct stg *s, bool pairs);

/* Chunk c of n words in chunks of chunk_tiles tiles. */
struct stg_chunk stg_chunk(const struct stg *s, size_t c, size_t chunk_tiles, size_t n);

/* Produce chunk c (its words k) into its staging buffer, once the upload
 * that last used that buffer is done (up[c - STG_N], where set: not for a
 * chunk that was on the device already), and start its upload into buf,
 * *up[c].  A callback's failure comes back in *rc. */
cl_int stg_upload(struct stg *s, cl_mem buf, size_t c, struct stg_chunk k, cl_event *up,
		  eng_producer produce, void *ctx, int *rc);

/* Bring the n sorted words at word off of result down through the staging
 * buffers in turn, chunk by chunk, each handed to consume: chunk c + STG_N
 * goes into chunk c's buffer once that has been consumed.  Chunk c's
 * download waits for ready[c] (each) or ready[0]; down[c] its event.
 * While the first chunks come, consume is told of them (count 0,
 * eng_consumer) where the sort leaves the host idle (CLSORT_HOST_IDLE=1:
 * a CPU device's too, for tests).  A callback's failure comes back in
 * *rc. */
cl_int stg_download(struct stg *s, cl_mem result, size_t off, size_t n, size_t chunk_tiles,
		    size_t chunks, cl_event *ready, bool each, cl_event *down, eng_consumer consume,
		    void *ctx, int *rc);

/* Release the n events of ev that are set. */
void stg_release_events(cl_event *ev, size_t n);

/* Unmap and release the staging buffers. */
void stg_release(struct stg *s);

#endif
