/* Bitonic networks: a tile sort in local memory and the global merge
 * passes that join sorted tiles into one sorted array.  See common.cl for
 * the word type and the padding rule. */

/* Flip step of blocks of size b over the whole tile, in local memory. */
inline void local_flip(__local word_t *tile, uint b)
{
	for (uint c = get_local_id(0); c < TILE / 2; c += WG) {
		const uint blk = (c / (b / 2)) * b, i = c % (b / 2);
		word_t x = tile[TI(blk + i)], y = tile[TI(blk + b - 1 - i)];
		CMPSWAP(x, y);
		tile[TI(blk + i)] = x;
		tile[TI(blk + b - 1 - i)] = y;
	}
	barrier(CLK_LOCAL_MEM_FENCE);
}

/* Half-cleaner of distance d over the whole tile, in local memory. */
inline void local_half(__local word_t *tile, uint d)
{
	for (uint c = get_local_id(0); c < TILE / 2; c += WG) {
		const uint lo = (c / d) * 2 * d + c % d;
		word_t x = tile[TI(lo)], y = tile[TI(lo + d)];
		CMPSWAP(x, y);
		tile[TI(lo)] = x;
		tile[TI(lo + d)] = y;
	}
	barrier(CLK_LOCAL_MEM_FENCE);
}

/* Half-cleaners from distance d down to 1: the large ones in local memory,
 * those under EPT in registers. */
inline void local_half_from(__local word_t *tile, uint d)
{
	word_t r[EPT];

	for (; d >= EPT; d >>= 1)
		local_half(tile, d);
	regs_from_tile(r, tile);
	reg_half(r);
	regs_to_tile(r, tile);
	barrier(CLK_LOCAL_MEM_FENCE);
}

/* Sort each tile of TILE words, from tile number first_tile on. */
__kernel __attribute__((reqd_work_group_size(WG, 1, 1)))
void tile_sort_bitonic(__global word_t *buf, const ulong n, const ulong first_tile)
{
	__local word_t tile[TILE_ALLOC];
	const ulong base = (first_tile + get_group_id(0)) * TILE;
	word_t r[EPT];

	if (base >= n)
		return;
	tile_load(buf, n, base, tile);
	regs_from_tile(r, tile);
	reg_sort(r);
	regs_to_tile(r, tile);
	barrier(CLK_LOCAL_MEM_FENCE);
	for (uint b = 2 * EPT; b <= TILE; b <<= 1) {
		local_flip(tile, b);
		local_half_from(tile, b / 4);
	}
	tile_store(buf, n, base, tile);
}

/* Last substages of a merge stage of block size > TILE: half-cleaners of
 * distance TILE/2 .. 1, each tile on its own, from tile first_tile on. */
__kernel __attribute__((reqd_work_group_size(WG, 1, 1)))
void tile_merge_tail(__global word_t *buf, const ulong n, const ulong first_tile)
{
	__local word_t tile[TILE_ALLOC];
	const ulong base = (first_tile + get_group_id(0)) * TILE;

	if (base >= n)
		return;
	tile_load(buf, n, base, tile);
	local_half_from(tile, TILE / 2);
	tile_store(buf, n, base, tile);
}

/* Global passes, K substages fused in registers (K = 1..5).
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
__kernel void half_5(__global word_t *buf, const ulong n, const uint log_s) { half_pass(buf, n, log_s, 5); }
__kernel void flip_1(__global word_t *buf, const ulong n, const uint log_b) { flip_pass(buf, n, log_b, 1); }
__kernel void flip_2(__global word_t *buf, const ulong n, const uint log_b) { flip_pass(buf, n, log_b, 2); }
__kernel void flip_3(__global word_t *buf, const ulong n, const uint log_b) { flip_pass(buf, n, log_b, 3); }
__kernel void flip_4(__global word_t *buf, const ulong n, const uint log_b) { flip_pass(buf, n, log_b, 4); }
__kernel void flip_5(__global word_t *buf, const ulong n, const uint log_b) { flip_pass(buf, n, log_b, 5); }
