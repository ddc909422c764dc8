/* Sort words and the compare-exchange every network is built from.
 *
 * The host compiles this program once per word width, with
 *   WORD_BITS  32, 64 or 128 (a 128-bit word is (index, key) as ulong2,
 *              compared by key in .y, then index in .x),
 *   WG         work-group size of the local kernels,
 *   EPT        words each work-item keeps in registers (a power of two),
 *   LOG_WG, LOG_EPT  their base-2 logarithms,
 * and a tile of TILE = WG * EPT words is what one work-group sorts.
 * A program holds only the kernels its sorts run, so that a build compiles
 * no more than it must (the kernels' code is most of a build's time):
 *   TILE_BITONIC or TILE_MERGE    the tile sort,
 *   GLOBAL_BITONIC (with FUSE, the most substages a pass fuses) or
 *   GLOBAL_MERGE                  the passes that join tiles,
 *   PIECES                        the merge of sorted pieces (a program of
 *                                 its own, built when runs are merged),
 *   GATHER                        records put in word order (gather.cl; a
 *                                 program of its own, built when a sort of
 *                                 records first gathers them).
 *
 * Every network here sorts ascending.  A block of size B is merged by the
 * "flip" step (i against B-1-i) followed by half-cleaners (i against i+d),
 * so every comparator puts the smaller word at the lower index.  Words past
 * n behave as +infinity that never moves: a comparator whose upper index is
 * past n is a no-op, so nothing is padded in memory and work-items whose
 * words all lie past n return at once. */

#define TILE (WG * EPT)

/* Local memory index of tile word i: one spare word every 128 bytes, so
 * that work-items reading EPT consecutive words hit different banks. */
#if WORD_BITS == 32
#define PAD_SHIFT 5
#elif WORD_BITS == 64
#define PAD_SHIFT 4
#else
#define PAD_SHIFT 3
#endif
#define TI(i) ((i) + ((i) >> PAD_SHIFT))
#define TILE_ALLOC (TILE + (TILE >> PAD_SHIFT))

/* CMPSWAP(a, b) puts the smaller word in a. */
#if WORD_BITS == 32
typedef uint word_t;
#define WORD_MAX ((uint)0xffffffffu)
#define WLESS(a, b) ((a) < (b))
#define CMPSWAP(a, b) do { word_t lo_ = min(a, b); (b) = max(a, b); (a) = lo_; } while (0)
#elif WORD_BITS == 64
typedef ulong word_t;
#define WORD_MAX ((ulong)0xfffffffffffffffful)
#define WLESS(a, b) ((a) < (b))
#define CMPSWAP(a, b) do { word_t lo_ = min(a, b); (b) = max(a, b); (a) = lo_; } while (0)
#elif WORD_BITS == 128
typedef ulong2 word_t;
#define WORD_MAX ((ulong2)(0xfffffffffffffffful, 0xfffffffffffffffful))
#define WLESS(a, b) ((a).y < (b).y || ((a).y == (b).y && (a).x < (b).x))
#define CMPSWAP(a, b) do { if (WLESS(b, a)) { word_t t_ = (a); (a) = (b); (b) = t_; } } while (0)
#else
#error "WORD_BITS must be 32, 64 or 128"
#endif
/* Sort r[0..EPT) in registers: the whole flip/half-cleaner network. */
inline void reg_sort(word_t *r)
{
#pragma unroll
	for (uint b = 2; b <= EPT; b <<= 1) {
#pragma unroll
		for (uint i = 0; i < EPT / 2; i++) {
			const uint lo = (i / (b / 2)) * b + i % (b / 2);
			const uint hi = (i / (b / 2)) * b + b - 1 - i % (b / 2);
			CMPSWAP(r[lo], r[hi]);
		}
#pragma unroll
		for (uint d = b / 4; d > 0; d >>= 1) {
#pragma unroll
			for (uint i = 0; i < EPT; i++)
				if (!(i & d))
					CMPSWAP(r[i], r[i + d]);
		}
	}
}

/* Tile of the work-group into local memory, coalesced; words past n read
 * as +infinity.  Whole tiles, nearly all of them, skip the bounds checks. */
inline void tile_load(__global const word_t *buf, ulong n, ulong base, __local word_t *tile)
{
	const uint lid = get_local_id(0);
	__global const word_t *p = buf + base;

	if (base + TILE <= n) {
#pragma unroll
		for (uint e = 0; e < EPT; e++)
			tile[TI(e * WG + lid)] = p[e * WG + lid];
	} else {
#pragma unroll
		for (uint e = 0; e < EPT; e++) {
			const uint i = e * WG + lid;
			tile[TI(i)] = base + i < n ? p[i] : WORD_MAX;
		}
	}
	barrier(CLK_LOCAL_MEM_FENCE);
}

inline void tile_store(__global word_t *buf, ulong n, ulong base, __local const word_t *tile)
{
	const uint lid = get_local_id(0);
	__global word_t *p = buf + base;

	if (base + TILE <= n) {
#pragma unroll
		for (uint e = 0; e < EPT; e++)
			p[e * WG + lid] = tile[TI(e * WG + lid)];
	} else {
#pragma unroll
		for (uint e = 0; e < EPT; e++) {
			const uint i = e * WG + lid;
			if (base + i < n)
				p[i] = tile[TI(i)];
		}
	}
}

/* Registers <-> this work-item's EPT consecutive words of the tile. */
inline void regs_from_tile(word_t *r, __local const word_t *tile)
{
	const uint first = get_local_id(0) * EPT;
#pragma unroll
	for (uint e = 0; e < EPT; e++)
		r[e] = tile[TI(first + e)];
}

inline void regs_to_tile(const word_t *r, __local word_t *tile)
{
	const uint first = get_local_id(0) * EPT;
#pragma unroll
	for (uint e = 0; e < EPT; e++)
		tile[TI(first + e)] = r[e];
}
