/* Bitonic networks: a tile sort in local memory and the global merge
 * passes that join sorted tiles into one sorted array.  See common.cl for
 * the word type and the padding rule. */

/* Inside a tile every word exists (words past n are loaded as +infinity),
 * so the tile kernels use the classic network: in stage b, the pair i,
 * i^d is put in ascending order when bit b of i is clear and in descending
 * order otherwise, which leaves every block of size b sorted in alternating
 * directions and the whole tile ascending after the last stage.
 *
 * A work-item's EPT words in registers are those whose index has the
 * work-item's bits everywhere except in a group of LOG_EPT bits starting at
 * bit lo ("layout lo"); all the steps of distance 2^lo .. 2^(lo+LOG_EPT-1)
 * then run in registers, and local memory only serves to change layout.
 * Work-items that read one layout from local memory hit distinct banks:
 * their own bits are the low ones, or the padding spreads them. */

inline uint lay_index(uint lo, uint j)
{
	const uint t = get_local_id(0);
	return ((t >> lo) << (lo + LOG_EPT)) | (t & ((1u << lo) - 1)) | (j << lo);
}

/* Move the registers from layout from to layout to, through the tile. */
inline void relayout(word_t *r, __local word_t *tile, uint from, uint to)
{
#pragma unroll
	for (uint j = 0; j < EPT; j++)
		tile[TI(lay_index(from, j))] = r[j];
	barrier(CLK_LOCAL_MEM_FENCE);
#pragma unroll
	for (uint j = 0; j < EPT; j++)
		r[j] = tile[TI(lay_index(to, j))];
	barrier(CLK_LOCAL_MEM_FENCE);
}

/* In layout lo: the steps of distance 2^top .. 2^lo of stage b (b = 0:
 * everything ascending, as in the merge tail). */
inline void reg_steps(word_t *r, uint lo, uint top, uint b)
{
#pragma unroll
	for (uint d = EPT / 2; d > 0; d >>= 1) {
		if (d > (1u << (top - lo)))
			continue;
#pragma unroll
		for (uint j = 0; j < EPT; j++) {
			if (j & d)
				continue;
			CMPSWAP_DIR(r[j], r[j + d], (lay_index(lo, j) & b) != 0);
		}
	}
}

/* The steps of distance 2^top .. 1 of stage b, LOG_EPT bits at a time,
 * from layout *lo (updated; it ends at 0). */
inline void stage_steps(word_t *r, __local word_t *tile, uint *lo, int top, uint b)
{
	while (top >= 0) {
		const uint want = top >= LOG_EPT - 1 ? top - (LOG_EPT - 1) : 0;
		if (want != *lo) {
			relayout(r, tile, *lo, want);
			*lo = want;
		}
		reg_steps(r, want, top, b);
		top = (int)want - 1;
	}
}

/* Sort each tile of TILE words, from tile number first_tile on. */
__kernel __attribute__((reqd_work_group_size(WG, 1, 1)))
void tile_sort_bitonic(__global word_t *buf, const ulong n, const ulong first_tile)
{
	__local word_t tile[TILE_ALLOC];
	const ulong base = (first_tile + get_group_id(0)) * TILE;
	word_t r[EPT];
	uint lo = 0;

	if (base >= n)
		return;
	tile_load(buf, n, base, tile);
	regs_from_tile(r, tile);
	barrier(CLK_LOCAL_MEM_FENCE);
	for (uint k = 1; k <= LOG_EPT + LOG_WG; k++)
		stage_steps(r, tile, &lo, (int)k - 1, k < LOG_EPT + LOG_WG ? 1u << k : 0);
	regs_to_tile(r, tile);
	barrier(CLK_LOCAL_MEM_FENCE);
	tile_store(buf, n, base, tile);
}

/* Last substages of a merge stage of block size > TILE: half-cleaners of
 * distance TILE/2 .. 1, each tile on its own, from tile first_tile on.  The
 * first layout is read straight from global memory (coalesced: the
 * work-items' own bits are the low ones). */
__kernel __attribute__((reqd_work_group_size(WG, 1, 1)))
void tile_merge_tail(__global word_t *buf, const ulong n, const ulong first_tile)
{
	__local word_t tile[TILE_ALLOC];
	const ulong base = (first_tile + get_group_id(0)) * TILE;
	uint lo = LOG_WG;
	word_t r[EPT];

	if (base >= n)
		return;
#pragma unroll
	for (uint j = 0; j < EPT; j++) {
		const ulong i = base + lay_index(LOG_WG, j);
		r[j] = i < n ? buf[i] : WORD_MAX;
	}
	stage_steps(r, tile, &lo, LOG_EPT + LOG_WG - 1, 0);
	regs_to_tile(r, tile);
	barrier(CLK_LOCAL_MEM_FENCE);
	tile_store(buf, n, base, tile);
}

/* Global passes, K substages fused in registers (K = 1..5, 1..4 for
 * 128-bit words).
 *
 * half_K: half-cleaners of distances s*2^(K-1) .. s (s = 1 << log_s).  A
 * work-item owns the 2^K words b + j*s, a set closed under those
 * substages.
 *
 * flip_K: the flip step of block size 2^log_b and the K-1 half-cleaners
 * after it.  A work-item owns h = 2^(K-1) words b + j*s of a block's lower
 * half (s = B >> K) and their mirror images in the upper half.  When every
 * mirror lies past n the flip changes nothing and the lower half, sorted by
 * the previous stage, is left in order too, so the work-item returns. */
inline void half_pass(__global word_t *buf, const ulong n, const uint log_s, const uint k)
{
	const ulong gid = get_global_id(0), s = 1ul << log_s;
	const ulong b = ((gid >> log_s) << (log_s + k)) | (gid & (s - 1));
	word_t r[32];

	if (b >= n)
		return;
#pragma unroll
	for (uint j = 0; j < (1u << k); j++)
		r[j] = b + j * s < n ? buf[b + j * s] : WORD_MAX;
#pragma unroll
	for (uint d = (1u << k) / 2; d > 0; d >>= 1) {
#pragma unroll
		for (uint j = 0; j < (1u << k); j++)
			if (!(j & d))
				CMPSWAP(r[j], r[j + d]);
	}
#pragma unroll
	for (uint j = 0; j < (1u << k); j++)
		if (b + j * s < n)
			buf[b + j * s] = r[j];
}

inline void flip_pass(__global word_t *buf, const ulong n, const uint log_b, const uint k)
{
	const uint h = 1u << (k - 1), log_s = log_b - k;
	const ulong gid = get_global_id(0), s = 1ul << log_s;
	const ulong base = (gid >> log_s) << log_b;
	const ulong lo = base + (gid & (s - 1));
	const ulong hi = base + (1ul << log_b) - 1 - (gid & (s - 1)) - (h - 1) * s;
	word_t a[16], c[16];

	if (hi >= n)
		return;
#pragma unroll
	for (uint j = 0; j < h; j++) {
		a[j] = buf[lo + j * s];
		c[j] = hi + j * s < n ? buf[hi + j * s] : WORD_MAX;
	}
#pragma unroll
	for (uint j = 0; j < h; j++)
		CMPSWAP(a[j], c[h - 1 - j]);
#pragma unroll
	for (uint d = h / 2; d > 0; d >>= 1) {
#pragma unroll
		for (uint j = 0; j < h; j++)
			if (!(j & d)) {
				CMPSWAP(a[j], a[j + d]);
				CMPSWAP(c[j], c[j + d]);
			}
	}
#pragma unroll
	for (uint j = 0; j < h; j++) {
		buf[lo + j * s] = a[j];
		if (hi + j * s < n)
			buf[hi + j * s] = c[j];
	}
}

__kernel void half_1(__global word_t *buf, const ulong n, const uint log_s) { half_pass(buf, n, log_s, 1); }
__kernel void half_2(__global word_t *buf, const ulong n, const uint log_s) { half_pass(buf, n, log_s, 2); }
__kernel void half_3(__global word_t *buf, const ulong n, const uint log_s) { half_pass(buf, n, log_s, 3); }
__kernel void half_4(__global word_t *buf, const ulong n, const uint log_s) { half_pass(buf, n, log_s, 4); }
__kernel void flip_1(__global word_t *buf, const ulong n, const uint log_b) { flip_pass(buf, n, log_b, 1); }
__kernel void flip_2(__global word_t *buf, const ulong n, const uint log_b) { flip_pass(buf, n, log_b, 2); }
__kernel void flip_3(__global word_t *buf, const ulong n, const uint log_b) { flip_pass(buf, n, log_b, 3); }
__kernel void flip_4(__global word_t *buf, const ulong n, const uint log_b) { flip_pass(buf, n, log_b, 4); }
/* 32 128-bit words do not fit in registers: no 5-substage passes for them. */
#if WORD_BITS < 128
__kernel void half_5(__global word_t *buf, const ulong n, const uint log_s) { half_pass(buf, n, log_s, 5); }
__kernel void flip_5(__global word_t *buf, const ulong n, const uint log_b) { flip_pass(buf, n, log_b, 5); }
#endif
