/* Unit tests of auto's choice between the host and the device: by the
 * measured rates when both sides have them, else trying the unmeasured
 * side, and measuring again a device measured on much smaller sorts; and
 * how a sort's time is folded into a rate. */
#include "config.h"

#include <string.h>

#include "../src/threshold.h"
#include "tap.h"

static struct thr_rates rates(double host, double start, double device)
{
	struct thr_rates r;
	memset(&r, 0, sizeof r);
	/* Measured on sorts larger than those below, unless a test says. */
	r.host = host;
	r.host_at = host > 0 ? 1e12 : 0;
	r.start = start;
	r.device = device;
	r.device_at = device > 0 ? 1e12 : 0;
	return r;
}

int main(void)
{
	/* A GPU: 0.3 s to start and release, 0.5 ns per record; a host at 5 ns. */
	struct thr_rates r = rates(5e-9, 0.3, 0.5e-9);
	char slot[16];
	double rate, at;

	ok(thr_host_wins(&r, 1000000), "GPU-like: the host below the crossover");
	ok(!thr_host_wins(&r, 100000000), "GPU-like: the device above it");
	ok(thr_host_wins(&r, 66666666) && !thr_host_wins(&r, 66666668),
	   "GPU-like: the crossover where 5 ns x n = 0.3 s + 0.5 ns x n");
	/* A CPU device slower per record than the host: never the device. */
	r = rates(5e-9, 0.01, 40e-9);
	ok(thr_host_wins(&r, 1) && thr_host_wins(&r, (uint64_t)1 << 40),
	   "a device slower per record: the host at every size");
	/* A device that starts at once and is quicker: the device always. */
	r = rates(5e-9, 1e-9, 1e-9);
	ok(!thr_host_wins(&r, 1), "a device quicker with no start: the device");
	/* Its start not measured yet (the sort that measured its rate built
	 * its kernels): tried as an unmeasured device is. */
	r = rates(5e-9, 0, 0.5e-9);
	ok(thr_host_wins(&r, THR_MEASURE_MIN - 1) && !thr_host_wins(&r, THR_MEASURE_MIN),
	   "the device's start unmeasured: tried on a sort big enough to time");
	/* ...but not where it is slower per record than the host on sorts
	 * of about this size: no start makes it win.  A CPU device, 70 ns a
	 * key on 2^26 keys (4.7 s) where the host takes 4. */
	r = rates(4e-9, 0, 70e-9);
	r.device_at = 67108864;
	ok(thr_host_wins(&r, 67108864) && thr_host_wins(&r, 1000000),
	   "a device slower per record, its start unmeasured: the host");
	ok(thr_host_wins(&r, (uint64_t)THR_EXPLORE * 67108864),
	   "...on THR_EXPLORE times as many, where the host takes less than its work measured");
	ok(thr_host_wins(&r, 1174405119) && !thr_host_wins(&r, 1174405121),
	   "...measured again where 4 ns x n > 70 ns x 2^26");
	ok(thr_stream_host_wins(&r, 67108864, 1.0),
	   "...and for a stream, whatever the time it has taken");
	/* A GPU measured on 10^6 keys, its fixed costs in its rate: 0.19 s
	 * to start, 25 ns a key; the host 2.09 ns.  Measured again where the
	 * host takes longer than 0.19 s + 25 ms: not locked out. */
	r = rates(2.09e-9, 0.19, 25e-9);
	r.device_at = 1e6;
	ok(thr_host_wins(&r, 3999999) && thr_host_wins(&r, 100000000),
	   "a GPU measured on small sorts: the host below THR_EXPLORE times and the crossover");
	ok(!thr_host_wins(&r, (uint64_t)1 << 28),
	   "...measured again on 2^28 keys, where the host takes 0.56 s");
	/* Measured on sorts of 10^6 records, where its fixed costs weigh: on
	 * THR_EXPLORE times as many, measured again where the host would take
	 * longer than its start... */
	r = rates(5e-9, 0.3, 0.5e-9);
	r.device_at = 1e6;
	ok(thr_host_wins(&r, 4000000), "the host where it takes less than the device's start");
	ok(!thr_host_wins(&r, 66666666), "a device measured on smaller sorts: measured again");
	r.device_at = 3e7;
	ok(thr_host_wins(&r, 66666666), "the crossover again, measured on sorts big enough");
	/* The host measured on a sort of 16384 records, all fixed costs:
	 * measured again where that costs little. */
	r = rates(60e-9, 0.4, 2e-9);
	r.host_at = 16384;
	ok(thr_host_wins(&r, THR_TRY_HOST), "a host measured on a small sort: measured again");
	ok(!thr_host_wins(&r, THR_TRY_HOST + 1), "...up to THR_TRY_HOST records");
	r.start = 0.001;
	ok(!thr_host_wins(&r, THR_EXPLORE * 16384 - 1) && thr_host_wins(&r, THR_EXPLORE * 16384),
	   "...on sorts THR_EXPLORE times larger than it was");
	/* ...and when it is slower per record, only where the host takes
	 * longer than its start and all its work measured: 0.01 s + 40 ns x
	 * 10^6 = 5 ns x 10^7. */
	r = rates(5e-9, 0.01, 40e-9);
	r.device_at = 1e6;
	ok(thr_host_wins(&r, 9999999) && !thr_host_wins(&r, 10000001),
	   "a device slower per record: measured again past its start and work measured");

	r = rates(0, 0, 0);
	ok(thr_host_wins(&r, 1) && thr_host_wins(&r, THR_TRY_HOST),
	   "nothing measured: the host is tried up to THR_TRY_HOST");
	ok(!thr_host_wins(&r, THR_TRY_HOST + 1), "nothing measured: the device above it");
	r = rates(0, 0.3, 1e-9);
	ok(thr_host_wins(&r, 100000), "the host unmeasured: tried");
	ok(!thr_host_wins(&r, THR_TRY_HOST + 1), "the host unmeasured: not above THR_TRY_HOST");
	r = rates(0, 0.05, 52e-9);
	ok(thr_host_wins(&r, (uint64_t)1 << 26),
	   "the host unmeasured, the device slower than THR_DEVICE_SLOW: tried above THR_TRY_HOST");
	r = rates(5e-9, 0, 0);
	ok(thr_host_wins(&r, THR_MEASURE_MIN - 1),
	   "the device unmeasured: not tried on a sort too small to time");
	ok(!thr_host_wins(&r, THR_MEASURE_MIN), "the device unmeasured: tried on one big enough");

	/* auto's device known to be a CPU (PoCL): the host tried at any size
	 * while it is not measured... */
	r = rates(0, 0, 0);
	r.cpu = true;
	ok(thr_host_wins(&r, (uint64_t)1 << 30), "a CPU device, nothing measured: the host at any size");
	/* ...the device only on inputs of up to THR_TRY_CPU_DEVICE records... */
	r = rates(4e-9, 0, 0);
	r.cpu = true;
	ok(thr_host_wins(&r, THR_MEASURE_MIN - 1) && !thr_host_wins(&r, THR_MEASURE_MIN) &&
		   !thr_host_wins(&r, THR_TRY_CPU_DEVICE) && thr_host_wins(&r, THR_TRY_CPU_DEVICE + 1),
	   "a CPU device unmeasured: tried from THR_MEASURE_MIN to THR_TRY_CPU_DEVICE records");
	/* ...and once measured slower per record (on its first sort, which
	 * built its kernels: 20 us a key on 20000), not again past it, where
	 * another device would be. */
	r = rates(4e-9, 0, 2e-5);
	r.device_at = 20000;
	ok(!thr_host_wins(&r, (uint64_t)1 << 30),
	   "a device slower per record, unknown: measured again on 2^30 keys");
	r.cpu = true;
	ok(thr_host_wins(&r, (uint64_t)1 << 30) && thr_host_wins(&r, THR_TRY_CPU_DEVICE),
	   "a CPU device slower per record: the host");
	/* A CPU device measured quicker than the host: the rates decide. */
	r = rates(4e-9, 0.01, 1e-9);
	r.cpu = true;
	ok(!thr_host_wins(&r, 100000000), "a CPU device quicker per record: by the rates");

	/* A start measured only beside a stream's read (an H200's 2.5 s,
	 * where alone it took 0.2): where it alone makes the host win, the
	 * device is tried once the host takes half that start more than the
	 * device's work; a stream's look does not try it. */
	r = rates(2e-9, 2.5, 0.4e-9);
	r.start_ahead = true;
	ok(!thr_host_wins(&r, 1000000000) && thr_host_wins(&r, 700000000),
	   "a start measured beside a stream: the device from 2 ns x n = 1.25 s + 0.4 ns x n");
	ok(thr_host_wins(&r, 1000) && thr_stream_host_wins(&r, 500000000, 0),
	   "a start measured beside a stream: not tried on small sorts, nor by a stream's look");
	r.start_ahead = false;
	ok(thr_host_wins(&r, 1000000000) && !thr_host_wins(&r, 1600000000),
	   "the same start measured alone: the host to 2 ns x n = 2.5 s + 0.4 ns x n");

	/* A stream looked at as it arrives: judged as twice what it has so
	 * far, the device's start less the time it has taken. */
	r = rates(5e-9, 0.3, 0.5e-9);
	ok(thr_host_wins(&r, 40000000) && !thr_stream_host_wins(&r, 40000000, 0),
	   "a stream past half the crossover: the device, where the whole sort takes the host");
	ok(thr_stream_host_wins(&r, 33333332, 0) && !thr_stream_host_wins(&r, 33333334, 0),
	   "a stream's crossover: half the sort's");
	ok(thr_stream_host_wins(&r, 10000000, 0.1) && !thr_stream_host_wins(&r, 10000000, 0.25),
	   "the start hidden by the time the stream has taken: 5 ns x 2n = 0.3 s - t + 0.5 ns x 2n");
	ok(!thr_stream_host_wins(&r, THR_MEASURE_MIN, 1.0),
	   "a start the stream has hidden whole: the device from a sort big enough to time");
	r = rates(0, 0.3, 0.5e-9);
	ok(thr_stream_host_wins(&r, THR_TRY_HOST / 2, 1.0) &&
		   !thr_stream_host_wins(&r, THR_TRY_HOST / 2 + 1, 0),
	   "the host unmeasured: tried on streams up to half THR_TRY_HOST, whatever the time");
	r = rates(5e-9, 0.3, 40e-9);
	ok(thr_stream_host_wins(&r, (uint64_t)1 << 40, 10.0),
	   "a device slower per record: the host, its start hidden or not");
	r = rates(0, 0, 0);
	ok(thr_stream_host_wins(&r, THR_TRY_HOST, 1.0) && !thr_stream_host_wins(&r, THR_TRY_HOST + 1, 0),
	   "nothing measured: a stream judged as the sort of what it has");
	r = rates(5e-9, 0, 0.5e-9);
	ok(thr_stream_host_wins(&r, THR_MEASURE_MIN - 1, 1.0),
	   "the device's start unmeasured: as the sort of what it has");

	rate = 0, at = 0;
	thr_measure(&rate, &at, THR_MEASURE_MIN - 1, 1.0);
	ok(rate == 0, "a sort too small to time is not taken");
	thr_measure(&rate, &at, 1000000, 0.01);
	ok(rate == 1e-8 && at == 1e6, "a first measurement is taken as it is");
	thr_measure(&rate, &at, 20000, 1.0);
	ok(rate == 1e-8, "a much smaller sort does not change it");
	thr_measure(&rate, &at, 1000000, 0.03);
	ok(rate == 2e-8, "a sort of the same size is averaged in");
	thr_measure(&rate, &at, 4000000, 0.02);
	ok(rate == 5e-9 && at == 4e6, "a much larger sort replaces it");

	thr_slot(slot, sizeof slot, CLS_FMT_BIN, false, WORD32);
	ok(!strcmp(slot, "keys32"), "slot of bare u32 keys: %s", slot);
	thr_slot(slot, sizeof slot, CLS_FMT_BIN, true, WORD64);
	ok(!strcmp(slot, "records64"), "slot of records with 32-bit keys: %s", slot);
	thr_slot(slot, sizeof slot, CLS_FMT_KV, true, WORD128);
	ok(!strcmp(slot, "kv128"), "slot of kv lines with 64-bit keys: %s", slot);
	return done_testing();
}
