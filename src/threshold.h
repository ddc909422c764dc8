/* Host or device: what "auto" sorts on.  The host engine and the auto
 * OpenCL device are both measured where they run, on the sorts auto sends
 * them, and the measurements are kept in the cache per slot (format and
 * sort word width), since each sorts bare keys, records and kv lines of
 * each width at rates of its own.  auto then takes whichever the rates
 * say is quicker for the input's size; while a side has no measurement
 * yet, it is tried on an input big enough to measure it, and a side
 * measured only on much smaller inputs may be measured again. */
#ifndef CLSORT_THRESHOLD_H
#define CLSORT_THRESHOLD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "clsort.h"
#include "keys.h"

/* Sorts of fewer records are too quick to time. */
#define THR_MEASURE_MIN ((uint64_t)1 << 14)
/* A sort while other processes took more than this share of the CPUs
 * measures them too: its rate is not kept. */
#define THR_OTHERS_MAX 0.25
/* While the host is not measured, auto tries it on inputs up to this many
 * records: it sorts them in a second or so on any host. */
#define THR_TRY_HOST ((uint64_t)1 << 24)
/* ...and on larger ones where the device sorts slower than this a record:
 * slower than the host engine on one thread of the slowest host measured
 * (23 ns a u32 key); a CPU device under PoCL took 52-58 ns a key on 2
 * cores, where the host engine takes 4. */
#define THR_DEVICE_SLOW 40e-9
/* A side measured only on sorts this many times smaller than an input may
 * be measured again on it (see thr_host_wins). */
#define THR_EXPLORE 4
/* A device known to be a CPU (PoCL) and not yet measured is tried on
 * inputs of up to this many records: 70-83 ns a u32 key on 2 cores,
 * where the host engine takes 4, so a first try of 2^26 keys took 4.0 s
 * against 0.4; up to 2^20 it costs under 0.1 s. */
#define THR_TRY_CPU_DEVICE ((uint64_t)1 << 20)

struct thr_rates {
	double host;		/* seconds per record on the host engine; 0: not measured */
	double host_at;		/* the size of the largest sort it was measured on */
	double start;		/* seconds to start and release the device; 0: not
				 * measured */
	bool start_ahead;	/* start measured only where the device opened
				 * beside a stream's read, whose threads it
				 * shared: maybe longer than its own */
	double device;		/* seconds per record on the device; 0: not measured */
	double device_at;
	char dev[560];		/* the device measured */
	bool cpu;		/* auto's device is a CPU (thr_load_auto), not kept
				 * with the rates */
};

/* The slot of a format: "keys32", "records64", "kv128"... (at most 15
 * characters). */
void thr_slot(char *slot, size_t size, enum cls_format fmt, bool indexed, enum word_kind kind);

/* The cached rates of slot; all 0 when there are none, or they are not
 * sound. */
void thr_load(const char *slot, struct thr_rates *r);

/* Keep r as slot's rates; failures only cost the next sorts the
 * measurement. */
void thr_store(const char *slot, const struct thr_rates *r);

/* Fold a sort of n records that took seconds (beyond the device's start)
 * into a side's rate, kept with the size *at it was measured on: a sort
 * much smaller than that one is not taken, since its fixed costs weigh
 * more per record; a similar one is averaged in; a much larger one
 * replaces it. */
void thr_measure(double *rate, double *at, uint64_t n, double seconds);

/* The most bytes of the drivers' stamp (dev_drivers_stamp) that the
 * cache keeps with auto's device: a path and a time. */
#define THR_STAMP_BYTES 4200

/* What the cache says of the device auto opens, for every slot: its name
 * ("NAME [PLATFORM]", dev_auto_probe) and whether it is a CPU, where it
 * was found with the drivers as stamp (dev_drivers_stamp) says; false
 * where it says nothing of them. */
bool thr_load_auto(const char *stamp, char *name, size_t size, bool *cpu);
/* Keep them; name NULL: forget them (another device sorted). */
void thr_store_auto(const char *stamp, const char *name, bool cpu);

/* Whether auto sorts n records on the host, by r.  Where the device's
 * start was measured only beside a stream's read (r->start_ahead) and it
 * alone makes the host win, the device is tried once the host would take
 * half that start more than the device's work: its start, measured on its
 * own, then replaces the other.  An H200's start measured 2.5 s beside a
 * 16 GiB stream and 0.18-0.23 s alone; with the host measured, auto left
 * every later sort of up to 6 GiB of u32 keys to it, twice as slow. */
bool thr_host_wins(const struct thr_rates *r, uint64_t n);

/* Whether auto would leave a stream to the host, looked at while it
 * arrives: n records so far, elapsed seconds after its first look.  It is
 * judged as a sort of twice as many records (a stream that has come this
 * far is taken to come as far again, for about as long), and the device's
 * start as opened now, while the rest arrives: less the time that rest
 * takes.  Where it would not, the device is opened ahead, and the sort
 * takes it (its start spent) at any size.  Only where the device and its
 * start are measured: a device never measured here may not open at all,
 * and the host keeps the streams thr_host_wins gives it.  Judged as a
 * sort of what it had so far, start and all, a stream of kv lines opened
 * an H200's device (0.4 s to start) 370 MB in with the host unmeasured
 * (past THR_TRY_HOST lines), and its last byte, 0.6 s in, waited for the
 * device and its programs; with the host measured at 9.8 ns a line and
 * the device at 3 ns and 0.3 s to start, it would not open before 945 MB. */
bool thr_stream_host_wins(const struct thr_rates *r, uint64_t n, double elapsed);

#endif
