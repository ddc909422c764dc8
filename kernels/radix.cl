/* LSD radix sort of the words of one buffer, 8-bit digits, by
 * reduce-then-scan: no work-group ever waits for another, so it needs
 * nothing of the device's scheduling (PoCL runs it as any GPU does).
 *
 * Built (with -DRADIX) with the word width and
 *   RADIX_WG     work-group size,
 *   RADIX_ITEMS  words each work-item ranks per tile (a power of two),
 *   LOG_RADIX_ITEMS  its base-2 logarithm,
 * so that a tile of RTILE = RADIX_WG * RADIX_ITEMS words is what a
 * work-group ranks in local memory at once.  The words are cut into
 * nblocks blocks of whole tiles, one work-group each, and a pass on the
 * digit at bit shift runs
 *   radix_count    each block's count of each digit value, into
 *                  hist[digit * nblocks + block] (digit-major: the
 *                  exclusive scan of hist in that order is where each
 *                  block's words of each value start in the output),
 *   radix_scan_up, radix_scan_top  that scan: segments of SCAN_SEG
 *                  entries scanned on their own, then their sums (the
 *                  scatter adds a segment's sum to its entries),
 *   radix_scatter  each block's words, tile by tile, stably sorted by the
 *                  digit in local memory and written where they go.
 * Once before the passes, radix_diff finds the bits where words differ
 * from the first: a digit with none of them has one value in every
 * word, and its pass is skipped (as the host's radix sort does); so are
 * the passes on low bits the words are in order by already. */

#ifdef RADIX

#define RTILE (RADIX_WG * RADIX_ITEMS)
#define RADIX_BINS 256
#define SCAN_ITEMS 8
#define SCAN_SEG (RADIX_WG * SCAN_ITEMS)

/* Digit of w at bit shift (a multiple of 4), width bits. */
#if WORD_BITS == 128
inline uint digit_of(word_t w, uint shift, uint bits)
{
	const ulong part = shift < 64 ? w.x : w.y;
	return (uint)(part >> (shift & 63)) & ((1u << bits) - 1);
}
#else
inline uint digit_of(word_t w, uint shift, uint bits)
{
	return (uint)(w >> shift) & ((1u << bits) - 1);
}
#endif

/* Local index of tile word i: a spare word after every RADIX_ITEMS, so
 * that work-items reading their RADIX_ITEMS consecutive words hit
 * different banks. */
#define RI(i) ((i) + ((i) >> LOG_RADIX_ITEMS))
#define RTILE_ALLOC (RTILE + RTILE / RADIX_ITEMS)
/* Rank counters: one spare every 32, for the scan's reads of 16
 * consecutive counters per work-item. */
#define CI(i) ((i) + ((i) >> 5))
#define CNT_ALLOC (16 * RADIX_WG + 16 * RADIX_WG / 32)

/* Exclusive scan of v over the work-group (all of it calls), through
 * tmp[RADIX_WG]; *total gets the sum of all. */
inline uint wg_scan_uint(uint v, __local uint *tmp, uint *total)
{
	const uint lid = get_local_id(0);
	uint incl;

	tmp[lid] = v;
	barrier(CLK_LOCAL_MEM_FENCE);
	for (uint off = 1; off < RADIX_WG; off <<= 1) {
		const uint t = lid >= off ? tmp[lid - off] : 0;
		barrier(CLK_LOCAL_MEM_FENCE);
		tmp[lid] += t;
		barrier(CLK_LOCAL_MEM_FENCE);
	}
	incl = tmp[lid];
	*total = tmp[RADIX_WG - 1];
	barrier(CLK_LOCAL_MEM_FENCE);
	return incl - v;
}

inline ulong wg_scan_ulong(ulong v, __local ulong *tmp, ulong *total)
{
	const uint lid = get_local_id(0);
	ulong incl;

	tmp[lid] = v;
	barrier(CLK_LOCAL_MEM_FENCE);
	for (uint off = 1; off < RADIX_WG; off <<= 1) {
		const ulong t = lid >= off ? tmp[lid - off] : 0;
		barrier(CLK_LOCAL_MEM_FENCE);
		tmp[lid] += t;
		barrier(CLK_LOCAL_MEM_FENCE);
	}
	incl = tmp[lid];
	*total = tmp[RADIX_WG - 1];
	barrier(CLK_LOCAL_MEM_FENCE);
	return incl - v;
}

/* Low 32 and 64 bits of a word. */
#if WORD_BITS == 128
#define LOW32(w) ((uint)(w).x)
#define LOW64(w) ((w).x)
#else
#define LOW32(w) ((uint)(w))
#define LOW64(w) ((ulong)(w))
#endif

/* What the passes need to know of the words of buf, in one read:
 * diff[0..WORD_BITS/32) |= the bits where some word differs from buf[0],
 * as 32-bit parts, lowest first; and diff[4] |= 1, 2 or 4 where some word
 * is above the next in its low 32 bits, its low 64 bits or all its bits
 * (diff zeroed before).  Words already in order by their low bits need no
 * pass on the digits there (the later passes keep that order among words
 * whose higher digits agree): indexed words that come in index order, or
 * a sorted input.  Any number of work-groups, each taking every so many
 * words. */
__kernel __attribute__((reqd_work_group_size(RADIX_WG, 1, 1)))
void radix_diff(__global const word_t *buf, const ulong n, __global uint *diff)
{
	__local uint acc[5];
	const uint lid = get_local_id(0);
	const word_t first = buf[0];
	word_t d = first ^ first;
	uint down = 0;

	if (lid < 5)
		acc[lid] = 0;
	barrier(CLK_LOCAL_MEM_FENCE);
	for (ulong i = get_global_id(0); i < n; i += get_global_size(0)) {
		const word_t w = buf[i];
		d |= w ^ first;
		if (i + 1 < n) {
			const word_t next = buf[i + 1];
			down |= LOW32(w) > LOW32(next) ? 1 : 0;
			down |= LOW64(w) > LOW64(next) ? 2 : 0;
			down |= WLESS(next, w) ? 4 : 0;
		}
	}
#if WORD_BITS == 32
	if (d)
		atomic_or(&acc[0], d);
#elif WORD_BITS == 64
	if (d) {
		atomic_or(&acc[0], (uint)d);
		atomic_or(&acc[1], (uint)(d >> 32));
	}
#else
	if (d.x | d.y) {
		atomic_or(&acc[0], (uint)d.x);
		atomic_or(&acc[1], (uint)(d.x >> 32));
		atomic_or(&acc[2], (uint)d.y);
		atomic_or(&acc[3], (uint)(d.y >> 32));
	}
#endif
	if (down)
		atomic_or(&acc[4], down);
	barrier(CLK_LOCAL_MEM_FENCE);
	if ((lid < WORD_BITS / 32 || lid == 4) && acc[lid])
		atomic_or(&diff[lid], acc[lid]);
}

/* Copies of the counters radix_count keeps, work-item i counting in copy
 * i % COUNT_COPIES: work-items that count one value at once (runs of a
 * value, few values) wait less on each other's atomics.  A value's copies
 * are neighbours, in different banks. */
#define COUNT_COPIES 8

/* hist[d * nblocks + b] = how many words of block b (words [b * per_block,
 * (b + 1) * per_block) of src, within n) have digit value d at shift. */
__kernel __attribute__((reqd_work_group_size(RADIX_WG, 1, 1)))
void radix_count(__global const word_t *src, const ulong n, const uint shift,
		 const ulong per_block, __global ulong *hist, const uint nblocks)
{
	__local uint h[RADIX_BINS * COUNT_COPIES];
	const uint lid = get_local_id(0);
	const uint copy = lid % COUNT_COPIES;
	const uint b = get_group_id(0);
	const ulong base = b * per_block;
	const ulong end = base + per_block < n ? base + per_block : n;

	for (uint i = lid; i < RADIX_BINS * COUNT_COPIES; i += RADIX_WG)
		h[i] = 0;
	barrier(CLK_LOCAL_MEM_FENCE);
	for (ulong i = base + lid; i < end; i += RADIX_WG)
		atomic_inc(&h[digit_of(src[i], shift, 8) * COUNT_COPIES + copy]);
	barrier(CLK_LOCAL_MEM_FENCE);
	for (uint d = lid; d < RADIX_BINS; d += RADIX_WG) {
		uint sum = 0;
#pragma unroll
		for (uint c = 0; c < COUNT_COPIES; c++)
			sum += h[d * COUNT_COPIES + c];
		hist[(ulong)d * nblocks + b] = sum;
	}
}

/* Each segment of SCAN_SEG entries of a[0..m) scanned (exclusive) in
 * place on its own, one work-group each; sums[g] = segment g's total. */
__kernel __attribute__((reqd_work_group_size(RADIX_WG, 1, 1)))
void radix_scan_up(__global ulong *a, const ulong m, __global ulong *sums)
{
	__local ulong tmp[RADIX_WG];
	const uint lid = get_local_id(0);
	const ulong first = (ulong)get_group_id(0) * SCAN_SEG + (ulong)lid * SCAN_ITEMS;
	ulong v[SCAN_ITEMS], sum = 0, total;

#pragma unroll
	for (uint j = 0; j < SCAN_ITEMS; j++) {
		v[j] = first + j < m ? a[first + j] : 0;
		sum += v[j];
	}
	sum = wg_scan_ulong(sum, tmp, &total);
#pragma unroll
	for (uint j = 0; j < SCAN_ITEMS; j++) {
		if (first + j < m)
			a[first + j] = sum;
		sum += v[j];
	}
	if (lid == 0)
		sums[get_group_id(0)] = total;
}

/* sums[0..ns) scanned (exclusive) in place by one work-group, SCAN_SEG at
 * a time. */
__kernel __attribute__((reqd_work_group_size(RADIX_WG, 1, 1)))
void radix_scan_top(__global ulong *sums, const ulong ns)
{
	__local ulong tmp[RADIX_WG];
	const uint lid = get_local_id(0);
	ulong carry = 0;

	for (ulong seg = 0; seg < ns; seg += SCAN_SEG) {
		const ulong first = seg + (ulong)lid * SCAN_ITEMS;
		ulong v[SCAN_ITEMS], sum = 0, total;
#pragma unroll
		for (uint j = 0; j < SCAN_ITEMS; j++) {
			v[j] = first + j < ns ? sums[first + j] : 0;
			sum += v[j];
		}
		sum = carry + wg_scan_ulong(sum, tmp, &total);
#pragma unroll
		for (uint j = 0; j < SCAN_ITEMS; j++) {
			if (first + j < ns)
				sums[first + j] = sum;
			sum += v[j];
		}
		carry += total;
	}
}

#ifdef RADIX_MATCH
/* NVIDIA devices of compute capability 7.0 and up (the host asks for
 * RADIX_MATCH there only, with RADIX_WG 256): the tile is ranked by the
 * digit in one round, warp by warp, as CUB's onesweep ranks it.  The 32
 * work-items of a warp take their words in turn, the warp's j-th word of
 * each at once; the work-items whose words share the value find each
 * other (match.any), the one with the highest lane adds their number to
 * the warp's count of that value, and each takes the count before the
 * addition plus the number of its peers in lower lanes as its rank
 * among the warp's words of that value.  The warps' counts, scanned
 * value-major, then give every word its place in the tile. */

#define WARP 32
#define NWARPS (RADIX_WG / WARP)
#define NV_ASM __asm__ __volatile__

inline uint nv_match(uint v)
{
	uint m;
	NV_ASM("match.any.sync.b32 %0, %1, 0xffffffff;" : "=r"(m) : "r"(v));
	return m;
}

inline uint nv_shfl(uint v, uint lane)
{
	uint r;
	NV_ASM("shfl.sync.idx.b32 %0, %1, %2, 0x1f, 0xffffffff;" : "=r"(r) : "r"(v), "r"(lane));
	return r;
}

inline uint nv_shfl_up(uint v, uint delta)
{
	uint r;
	NV_ASM("shfl.sync.up.b32 %0, %1, %2, 0x0, 0xffffffff;" : "=r"(r) : "r"(v), "r"(delta));
	return r;
}

inline uint nv_lanemask_lt(void)
{
	uint m;
	NV_ASM("mov.u32 %0, %%lanemask_lt;" : "=r"(m));
	return m;
}

/* The warp's work-items wait for each other, and see each other's
 * writes to local memory. */
inline void nv_warp_sync(void)
{
	NV_ASM("bar.warp.sync 0xffffffff;" ::: "memory");
}

/* Exclusive scan of v over the work-group (all of it calls): in each warp
 * by shuffles, then over the warps' sums (through wsum[NWARPS]). */
inline uint nv_wg_scan(uint v, __local uint *wsum)
{
	const uint lane = get_local_id(0) % WARP, warp = get_local_id(0) / WARP;
	uint x = v, before = 0;

#pragma unroll
	for (uint d = 1; d < WARP; d <<= 1) {
		const uint y = nv_shfl_up(x, d);
		if (lane >= d)
			x += y;
	}
	if (lane == WARP - 1)
		wsum[warp] = x;
	barrier(CLK_LOCAL_MEM_FENCE);
	for (uint k = 0; k < warp; k++)
		before += wsum[k];
	return before + x - v;
}

/* One pass: block b's words of src, RTILE at a time, into dst: each tile
 * ranked as above, its words written to the tile in local memory in that
 * order, then out: a word of value d at place p of the tile goes to where
 * the block's words of value d go next (offs, the scanned hist, plus its
 * segment's sum) plus p less the place of the tile's first word of value
 * d.  Words of one value keep their order in the block. */
__kernel __attribute__((reqd_work_group_size(RADIX_WG, 1, 1)))
void radix_scatter(__global const word_t *src, __global word_t *dst, const ulong n,
		   const uint shift, const ulong per_block, __global const ulong *offs,
		   __global const ulong *sums, const uint nblocks)
{
	__local word_t tile[RTILE];
	__local uint wcount[NWARPS * RADIX_BINS];	/* value-major within a warp's row */
	__local uint wsum[NWARPS];
	__local uint start[RADIX_BINS];		/* the tile's first place of each value */
	__local uint total[RADIX_BINS];		/* the tile's words of each value */
	__local ulong next[RADIX_BINS];		/* where the block's words of each value go next */
	const uint lid = get_local_id(0);
	const uint lane = lid % WARP, warp = lid / WARP;
	const uint lt = nv_lanemask_lt();
	const uint b = get_group_id(0);
	const ulong bbase = b * per_block;
	const ulong bend = bbase + per_block < n ? bbase + per_block : n;
	__local uint *const mine = wcount + warp * RADIX_BINS;

	/* RADIX_WG is RADIX_BINS: work-item lid looks after value lid. */
	next[lid] = offs[(ulong)lid * nblocks + b] + sums[((ulong)lid * nblocks + b) / SCAN_SEG];
	for (ulong base = bbase; base < bend; base += RTILE) {
		const uint valid = bend - base < RTILE ? (uint)(bend - base) : RTILE;
		const uint first = warp * WARP * RADIX_ITEMS + lane;
		word_t w[RADIX_ITEMS];
		uint rank[RADIX_ITEMS];
		uint sum;

#pragma unroll
		for (uint k = 0; k < NWARPS; k++)
			wcount[k * RADIX_BINS + lid] = 0;
#pragma unroll
		for (uint j = 0; j < RADIX_ITEMS; j++)
			if (first + j * WARP < valid)
				w[j] = src[base + first + j * WARP];
		barrier(CLK_LOCAL_MEM_FENCE);
		/* Places past valid hold no word: they count as the last
		 * value, and being last in the tile they stay last. */
#pragma unroll
		for (uint j = 0; j < RADIX_ITEMS; j++) {
			const uint d = first + j * WARP < valid ? digit_of(w[j], shift, 8) : RADIX_BINS - 1;
			const uint peers = nv_match(d);
			const uint top = 31 - clz(peers);
			uint before = 0;
			if (lane == top) {
				before = mine[d];
				mine[d] = before + popcount(peers);
			}
			before = nv_shfl(before, top);
			rank[j] = before + popcount(peers & lt);
			nv_warp_sync();
		}
		barrier(CLK_LOCAL_MEM_FENCE);
		/* Value lid: its count in each warp becomes the count in the
		 * warps before; then the tile's places by value. */
		sum = 0;
#pragma unroll
		for (uint k = 0; k < NWARPS; k++) {
			const uint c = wcount[k * RADIX_BINS + lid];
			wcount[k * RADIX_BINS + lid] = sum;
			sum += c;
		}
		total[lid] = sum;
		start[lid] = nv_wg_scan(sum, wsum);
#pragma unroll
		for (uint k = 0; k < NWARPS; k++)
			wcount[k * RADIX_BINS + lid] += start[lid];
		barrier(CLK_LOCAL_MEM_FENCE);
#pragma unroll
		for (uint j = 0; j < RADIX_ITEMS; j++) {
			const uint d = first + j * WARP < valid ? digit_of(w[j], shift, 8) : RADIX_BINS - 1;
			const uint p = mine[d] + rank[j];
			if (p < valid)
				tile[p] = w[j];
		}
		barrier(CLK_LOCAL_MEM_FENCE);
		for (uint p = lid; p < valid; p += RADIX_WG) {
			const word_t x = tile[p];
			const uint d = digit_of(x, shift, 8);
			dst[next[d] + p - start[d]] = x;
		}
		barrier(CLK_LOCAL_MEM_FENCE);
		/* The places past valid were counted as the last value. */
		next[lid] += total[lid] - (lid == RADIX_BINS - 1 ? RTILE - valid : 0);
		barrier(CLK_LOCAL_MEM_FENCE);
	}
}

#else

/* One pass: block b's words of src, RTILE at a time, into dst.  Each
 * tile is sorted stably by the digit in local memory, by two rounds on
 * its 4-bit halves (each a counting sort: every work-item counts its
 * consecutive words' values in a column of its own, and the scan of the
 * counters in value-major order gives each word its place), then written
 * out in that order: a word of value d at place p of the tile goes to
 * where the block's words of value d go next (offs, the scanned hist,
 * plus its segment's sum) plus p less the place of the tile's first word
 * of value d.  Words of one value thus keep their order in the block,
 * and neighbouring work-items write neighbouring words. */
__kernel __attribute__((reqd_work_group_size(RADIX_WG, 1, 1)))
void radix_scatter(__global const word_t *src, __global word_t *dst, const ulong n,
		   const uint shift, const ulong per_block, __global const ulong *offs,
		   __global const ulong *sums, const uint nblocks)
{
	__local word_t tile[RTILE_ALLOC];
	__local uint cnt[CNT_ALLOC];
	__local uint scan_tmp[RADIX_WG];
	__local uint start[RADIX_BINS + 1];	/* the tile's first place of each value */
	__local ulong next[RADIX_BINS];		/* where the block's words of each value go next */
	const uint lid = get_local_id(0);
	const uint b = get_group_id(0);
	const ulong bbase = b * per_block;
	const ulong bend = bbase + per_block < n ? bbase + per_block : n;

	for (uint d = lid; d < RADIX_BINS; d += RADIX_WG) {
		const ulong i = (ulong)d * nblocks + b;
		next[d] = offs[i] + sums[i / SCAN_SEG];
	}
	for (ulong base = bbase; base < bend; base += RTILE) {
		const uint valid = bend - base < RTILE ? (uint)(bend - base) : RTILE;
		word_t w[RADIX_ITEMS];
		uint pre[RADIX_ITEMS];

#pragma unroll
		for (uint j = 0; j < RADIX_ITEMS; j++) {
			const uint i = j * RADIX_WG + lid;
			if (i < valid)
				tile[RI(i)] = src[base + i];
		}
		barrier(CLK_LOCAL_MEM_FENCE);
#pragma unroll
		for (uint j = 0; j < RADIX_ITEMS; j++)
			if (lid * RADIX_ITEMS + j < valid)
				w[j] = tile[RI(lid * RADIX_ITEMS + j)];
#pragma unroll
		for (uint r = 0; r < 2; r++) {
			uint total, sum = 0, c[16];

#pragma unroll
			for (uint v = 0; v < 16; v++)
				cnt[CI(v * RADIX_WG + lid)] = 0;
			/* Places past valid hold no word: they count as value
			 * 15, and being last in the tile they stay last. */
#pragma unroll
			for (uint j = 0; j < RADIX_ITEMS; j++) {
				const uint v = lid * RADIX_ITEMS + j < valid ?
					       digit_of(w[j], shift + 4 * r, 4) : 15;
				pre[j] = cnt[CI(v * RADIX_WG + lid)]++;
			}
			barrier(CLK_LOCAL_MEM_FENCE);
#pragma unroll
			for (uint k = 0; k < 16; k++) {
				c[k] = cnt[CI(lid * 16 + k)];
				sum += c[k];
			}
			sum = wg_scan_uint(sum, scan_tmp, &total);
#pragma unroll
			for (uint k = 0; k < 16; k++) {
				cnt[CI(lid * 16 + k)] = sum;
				sum += c[k];
			}
			barrier(CLK_LOCAL_MEM_FENCE);
#pragma unroll
			for (uint j = 0; j < RADIX_ITEMS; j++) {
				const uint v = lid * RADIX_ITEMS + j < valid ?
					       digit_of(w[j], shift + 4 * r, 4) : 15;
				const uint p = cnt[CI(v * RADIX_WG + lid)] + pre[j];
				if (p < valid)
					tile[RI(p)] = w[j];
			}
			barrier(CLK_LOCAL_MEM_FENCE);
			if (r == 0) {
#pragma unroll
				for (uint j = 0; j < RADIX_ITEMS; j++)
					if (lid * RADIX_ITEMS + j < valid)
						w[j] = tile[RI(lid * RADIX_ITEMS + j)];
			}
		}
		/* The tile's first place of each value: where the value
		 * changes from one word to the next. */
		for (uint p = lid; p < valid; p += RADIX_WG) {
			const uint d = digit_of(tile[RI(p)], shift, 8);
			const uint lo = p ? digit_of(tile[RI(p - 1)], shift, 8) + 1 : 0;
			for (uint e = lo; e <= d; e++)
				start[e] = p;
			if (p == valid - 1)
				for (uint e = d + 1; e <= RADIX_BINS; e++)
					start[e] = valid;
		}
		barrier(CLK_LOCAL_MEM_FENCE);
		for (uint p = lid; p < valid; p += RADIX_WG) {
			const word_t x = tile[RI(p)];
			const uint d = digit_of(x, shift, 8);
			dst[next[d] + p - start[d]] = x;
		}
		barrier(CLK_LOCAL_MEM_FENCE);
		for (uint d = lid; d < RADIX_BINS; d += RADIX_WG)
			next[d] += start[d + 1] - start[d];
		barrier(CLK_LOCAL_MEM_FENCE);
	}
}

#endif /* RADIX_MATCH */

#endif
