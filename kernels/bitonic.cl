/* Bitonic networks: a tile sort in local memory and the global merge
 * passes that join sorted tiles into one sorted array.  See common.cl for
 * the word type and the padding rule. */

/* Inside a tile every word exists (words past n are loaded as +infinity).
 * The tile kernels use the same network as the global passes: a merge
 * stage of block size 2^(T+1) starts with the flip step (i against its
 * mirror image in the block) and goes on with half-cleaners of distance
 * 2^(T-1) .. 1, and every comparator puts the smaller word at the lower
 * index, so no comparator needs a direction computed at run time.
 *
 * A work-item keeps EPT words in registers.  In layout lo they are the
 * words whose index has the work-item's bits everywhere except in the
 * LOG_EPT bits from bit lo, so the steps of distance 2^lo .. 2^(lo+LOG_EPT-1)
 * run in registers.  The "flip" layout lo is the same for the lower half of
 * the registers and holds the mirror images of those words, in ascending
 * order, in the upper half: the flip step of the stage with
 * T = lo + LOG_EPT - 1 and its first half-cleaners then run in registers
 * too.  Local memory only serves to
 * change layout; with the padding (common.cl) every layout is read and
 * written without bank conflicts.  Tiles go to global memory through local
 * memory as well, each work-item storing the words it loaded: measured on
 * a GPU, stores straight from a layout whose work-items own a few
 * consecutive words each took 2.5 times as long. */

inline uint lay_index(uint lo, uint j)
{
	const uint t = get_local_id(0);
	return ((t >> lo) << (lo + LOG_EPT)) | (t & ((1u << lo) - 1)) | (j << lo);
}

/* Tile index of register j in layout lo, flipped or not.  In the upper
 * half of a flip layout a work-item holds the mirror images of the words
 * of its mirror work-item (the one whose bits below lo are complemented),
 * so that both halves ascend with j. */
inline uint word_index(bool flip, uint lo, uint j)
{
	const uint i = lay_index(lo, j);
	return flip && (j & (EPT / 2)) ? i ^ ((1u << lo) - 1) : i;
}

/* Move the registers from layout (*flip, *lo) to (flip, lo), through the
 * tile.  No barrier is needed after the reads: a work-item writes next in
 * the layout it has just read, so only to words it read itself. */
inline void relayout(word_t *r, __local word_t *tile, bool *cur_flip, uint *cur_lo, bool flip,
		     uint lo)
{
#pragma unroll
	for (uint j = 0; j < EPT; j++)
		tile[TI(word_index(*cur_flip, *cur_lo, j))] = r[j];
	barrier(CLK_LOCAL_MEM_FENCE);
#pragma unroll
	for (uint j = 0; j < EPT; j++)
		r[j] = tile[TI(word_index(flip, lo, j))];
	*cur_flip = flip;
	*cur_lo = lo;
}

/* Half-cleaners on register distances 2^(bits-1) .. 1. */
inline void reg_half(word_t *r, uint bits)
{
#pragma unroll
	for (uint d = EPT / 2; d > 0; d >>= 1) {
		if (d >= (1u << bits))
			continue;
#pragma unroll
		for (uint j = 0; j < EPT; j++)
			if (!(j & d))
				CMPSWAP(r[j], r[j + d]);
	}
}

/* The flip step and the half-cleaners after it on words a[0..h) of a
 * block's lower half and c[0..h) of its upper half, both in ascending order
 * of index, c[h-1-j] being the mirror image of a[j]: what a flip layout
 * runs in registers, and a flip pass on the words it owns. */
inline void flip_net(word_t *a, word_t *c, const uint h)
{
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
}

/* The half-cleaners of distance 2^top .. 1, LOG_EPT bits at a time, the
 * last ones in layout 0. */
inline void half_steps(word_t *r, __local word_t *tile, bool *flip, uint *lo, int top)
{
#pragma unroll
	for (; top >= LOG_EPT; top -= LOG_EPT) {
		relayout(r, tile, flip, lo, false, top - (LOG_EPT - 1));
		reg_half(r, LOG_EPT);
	}
	if (top >= 0) {
		relayout(r, tile, flip, lo, false, 0);
		reg_half(r, top + 1);
	}
}

#ifdef TILE_BITONIC
/* Sort each tile of TILE words, from tile number first_tile on: the first
 * LOG_EPT stages in registers, the others through layouts. */
__kernel __attribute__((reqd_work_group_size(WG, 1, 1)))
void tile_sort_bitonic(__global word_t *buf, const ulong n, const ulong first_tile)
{
	__local word_t tile[TILE_ALLOC];
	const ulong base = (first_tile + get_group_id(0)) * TILE;
	bool flip = false;
	uint lo = 0;
	word_t r[EPT];

	if (base >= n)
		return;
	tile_load(buf, n, base, tile);
	regs_from_tile(r, tile);
	reg_sort(r);
	/* Unrolled, so that every layout is known to the compiler (and a CPU
	 * compiler keeps the barriers straight). */
#pragma unroll
	for (uint top = LOG_EPT; top < LOG_EPT + LOG_WG; top++) {
		relayout(r, tile, &flip, &lo, true, top - (LOG_EPT - 1));
		flip_net(r, r + EPT / 2, EPT / 2);
		half_steps(r, tile, &flip, &lo, (int)top - LOG_EPT);
	}
	regs_to_tile(r, tile);
	barrier(CLK_LOCAL_MEM_FENCE);
	tile_store(buf, n, base, tile);
}
#endif

#ifdef GLOBAL_BITONIC
/* A tile into registers in layout LOG_WG, straight from global memory
 * (coalesced: the work-items' own bits are the low ones); with rev, the
 * tile's words in reverse order (each work-item gets the mirror images of
 * the words it would get). */
inline void load_tail(word_t *r, __global const word_t *buf, ulong n, ulong base, bool rev)
{
	if (base + TILE <= n) {
#pragma unroll
		for (uint j = 0; j < EPT; j++)
			r[j] = buf[base + (rev ? TILE - 1 - lay_index(LOG_WG, j) : lay_index(LOG_WG, j))];
	} else {
#pragma unroll
		for (uint j = 0; j < EPT; j++) {
			const ulong i = base + (rev ? TILE - 1 - lay_index(LOG_WG, j) : lay_index(LOG_WG, j));
			r[j] = i < n ? buf[i] : WORD_MAX;
		}
	}
}

/* The half-cleaners of distance TILE/2 .. 1 on a tile held in layout
 * LOG_WG, and the tile back to global memory. */
inline void tail_steps(word_t *r, __local word_t *tile, __global word_t *buf, ulong n, ulong base)
{
	bool flip = false;
	uint lo = LOG_WG;

	reg_half(r, LOG_EPT);
	half_steps(r, tile, &flip, &lo, LOG_WG - 1);
	regs_to_tile(r, tile);
	barrier(CLK_LOCAL_MEM_FENCE);
	tile_store(buf, n, base, tile);
}

/* Last substages of a merge stage of block size > TILE: half-cleaners of
 * distance TILE/2 .. 1, each tile on its own, from tile first_tile on. */
__kernel __attribute__((reqd_work_group_size(WG, 1, 1)))
void tile_merge_tail(__global word_t *buf, const ulong n, const ulong first_tile)
{
	__local word_t tile[TILE_ALLOC];
	const ulong base = (first_tile + get_group_id(0)) * TILE;
	word_t r[EPT];

	if (base >= n)
		return;
	load_tail(r, buf, n, base, false);
	tail_steps(r, tile, buf, n, base);
}

/* The same for the two tiles of a block of 2 TILE words, from pair
 * first_pair on, after the substage of distance TILE that joins them: the
 * half-cleaner (pair_tail), or the flip step of a stage of block size
 * 2 TILE (pair_flip_tail).  This saves the global pass that substage would
 * take.  A work-item holds both tiles' words; for the flip it reads the
 * second tile's in reverse, and keeps them so: the second tile is then
 * bitonic, and so is its reversal, which the half-cleaners sort all the
 * same. */
inline void pair_tail(__global word_t *buf, const ulong n, const ulong first_pair, const bool flip,
		      __local word_t *tile)
{
	const ulong a = (first_pair + get_group_id(0)) * 2 * TILE, b = a + TILE;
	word_t r[EPT], c[EPT];

	if (a >= n)
		return;
	load_tail(r, buf, n, a, false);
	load_tail(c, buf, n, b, flip);
	/* Reversed, the words go back where other work-items read. */
	if (flip)
		barrier(CLK_GLOBAL_MEM_FENCE);
#pragma unroll
	for (uint j = 0; j < EPT; j++)
		CMPSWAP(r[j], c[j]);
	tail_steps(r, tile, buf, n, a);
	/* The first tile's words leave the tile before the second's come. */
	barrier(CLK_LOCAL_MEM_FENCE);
	tail_steps(c, tile, buf, n, b);
}

__kernel __attribute__((reqd_work_group_size(WG, 1, 1)))
void tile_pair_tail(__global word_t *buf, const ulong n, const ulong first_pair)
{
	__local word_t tile[TILE_ALLOC];
	pair_tail(buf, n, first_pair, false, tile);
}

__kernel __attribute__((reqd_work_group_size(WG, 1, 1)))
void tile_pair_flip_tail(__global word_t *buf, const ulong n, const ulong first_pair)
{
	__local word_t tile[TILE_ALLOC];
	pair_tail(buf, n, first_pair, true, tile);
}

/* Global passes, K substages fused in registers (K = 1..FUSE_MAX: 6 for
 * 32-bit words, 5 for 64-bit ones, 4 for 128-bit ones, so that the words
 * fit in registers).
 *
 * half_K: half-cleaners of distances s*2^(K-1) .. s (s = 1 << log_s).  A
 * work-item owns the 2^K words b + j*s, a set closed under those
 * substages.
 *
 * flip_K: the flip step of block size 2^log_b and the K-1 half-cleaners
 * after it.  A work-item owns h = 2^(K-1) words b + j*s of a block's lower
 * half (s = B >> K) and their mirror images in the upper half.  When every
 * mirror lies past n the flip changes nothing and the lower half, sorted by
 * the previous stage, is left in order too, so the work-item returns.
 *
 * Work-items whose words all lie below n, nearly all of them, take a path
 * without bounds checks. */
#if WORD_BITS == 32
#define FUSE_MAX 6
#elif WORD_BITS == 64
#define FUSE_MAX 5
#else
#define FUSE_MAX 4
#endif

inline void half_net(word_t *r, const uint k)
{
#pragma unroll
	for (uint d = (1u << k) / 2; d > 0; d >>= 1) {
#pragma unroll
		for (uint j = 0; j < (1u << k); j++)
			if (!(j & d))
				CMPSWAP(r[j], r[j + d]);
	}
}

inline void half_pass(__global word_t *buf, const ulong n, const uint log_s, const uint k)
{
	const ulong gid = get_global_id(0), s = 1ul << log_s;
	const ulong b = ((gid >> log_s) << (log_s + k)) | (gid & (s - 1));
	__global word_t *p = buf + b;
	word_t r[1 << FUSE_MAX];

	if (b >= n)
		return;
	if (b + ((1ul << k) - 1) * s < n) {
#pragma unroll
		for (uint j = 0; j < (1u << k); j++)
			r[j] = p[j * s];
		half_net(r, k);
#pragma unroll
		for (uint j = 0; j < (1u << k); j++)
			p[j * s] = r[j];
		return;
	}
#pragma unroll
	for (uint j = 0; j < (1u << k); j++)
		r[j] = b + j * s < n ? p[j * s] : WORD_MAX;
	half_net(r, k);
#pragma unroll
	for (uint j = 0; j < (1u << k); j++)
		if (b + j * s < n)
			p[j * s] = r[j];
}

inline void flip_pass(__global word_t *buf, const ulong n, const uint log_b, const uint k)
{
	const uint h = 1u << (k - 1), log_s = log_b - k;
	const ulong gid = get_global_id(0), s = 1ul << log_s;
	const ulong base = (gid >> log_s) << log_b;
	const ulong lo = base + (gid & (s - 1));
	const ulong hi = base + (1ul << log_b) - 1 - (gid & (s - 1)) - (h - 1) * s;
	__global word_t *pa = buf + lo, *pc = buf + hi;
	word_t a[1 << (FUSE_MAX - 1)], c[1 << (FUSE_MAX - 1)];

	if (hi >= n)
		return;
	if (hi + (h - 1) * s < n) {
#pragma unroll
		for (uint j = 0; j < h; j++) {
			a[j] = pa[j * s];
			c[j] = pc[j * s];
		}
		flip_net(a, c, h);
#pragma unroll
		for (uint j = 0; j < h; j++) {
			pa[j * s] = a[j];
			pc[j * s] = c[j];
		}
		return;
	}
#pragma unroll
	for (uint j = 0; j < h; j++) {
		a[j] = pa[j * s];
		c[j] = hi + j * s < n ? pc[j * s] : WORD_MAX;
	}
	flip_net(a, c, h);
#pragma unroll
	for (uint j = 0; j < h; j++) {
		pa[j * s] = a[j];
		if (hi + j * s < n)
			pc[j * s] = c[j];
	}
}

/* The passes of up to FUSE substages the host runs (-DFUSE). */
__kernel void half_1(__global word_t *buf, const ulong n, const uint log_s) { half_pass(buf, n, log_s, 1); }
__kernel void flip_1(__global word_t *buf, const ulong n, const uint log_b) { flip_pass(buf, n, log_b, 1); }
#if FUSE >= 2
__kernel void half_2(__global word_t *buf, const ulong n, const uint log_s) { half_pass(buf, n, log_s, 2); }
__kernel void flip_2(__global word_t *buf, const ulong n, const uint log_b) { flip_pass(buf, n, log_b, 2); }
#endif
#if FUSE >= 3
__kernel void half_3(__global word_t *buf, const ulong n, const uint log_s) { half_pass(buf, n, log_s, 3); }
__kernel void flip_3(__global word_t *buf, const ulong n, const uint log_b) { flip_pass(buf, n, log_b, 3); }
#endif
#if FUSE >= 4
__kernel void half_4(__global word_t *buf, const ulong n, const uint log_s) { half_pass(buf, n, log_s, 4); }
__kernel void flip_4(__global word_t *buf, const ulong n, const uint log_b) { flip_pass(buf, n, log_b, 4); }
#endif
#if FUSE >= 5 && FUSE_MAX >= 5
__kernel void half_5(__global word_t *buf, const ulong n, const uint log_s) { half_pass(buf, n, log_s, 5); }
__kernel void flip_5(__global word_t *buf, const ulong n, const uint log_b) { flip_pass(buf, n, log_b, 5); }
#endif
#if FUSE >= 6 && FUSE_MAX >= 6
__kernel void half_6(__global word_t *buf, const ulong n, const uint log_s) { half_pass(buf, n, log_s, 6); }
__kernel void flip_6(__global word_t *buf, const ulong n, const uint log_b) { flip_pass(buf, n, log_b, 6); }
#endif
#endif
