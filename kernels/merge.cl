/* Rank-merge tile sort: the other local kernel of the design.  After the
 * register sort, sorted runs of width w are merged pairwise: a word's place
 * in the merged run is its index in its own run plus its rank in the
 * sibling run, found by binary search.  Words of the left run count the
 * sibling's words strictly less, those of the right run the words less or
 * equal, so equal words keep their order and no two land on one place. */

/* Number of words in sib[0..w) before x: strictly less when strict, else
 * less or equal. */
inline uint rank_in(__local const word_t *sib, uint w, word_t x, bool strict)
{
	uint lo = 0, hi = w;
	while (lo < hi) {
		const uint mid = (lo + hi) / 2;
		const bool before = strict ? WLESS(sib[mid], x) : !WLESS(x, sib[mid]);
		if (before)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

__kernel __attribute__((reqd_work_group_size(WG, 1, 1)))
void tile_sort_merge(__global word_t *buf, const ulong n)
{
	__local word_t tile[TILE];
	const ulong base = (ulong)get_group_id(0) * TILE;
	const uint first = get_local_id(0) * EPT;
	word_t r[EPT];
	uint dest[EPT];

	if (base >= n)
		return;
	tile_load(buf, n, base, tile);
	regs_from_tile(r, tile);
	reg_sort(r);
	for (uint w = EPT; w < TILE; w <<= 1) {
		/* This work-item's words lie in one run of width w. */
		const uint run = first & ~(w - 1), pair = first & ~(2 * w - 1);
		const bool left = run == pair;
		const uint sib = left ? pair + w : pair;

		regs_to_tile(r, tile);
		barrier(CLK_LOCAL_MEM_FENCE);
#pragma unroll
		for (uint e = 0; e < EPT; e++)
			dest[e] = pair + (first + e - run) + rank_in(tile + sib, w, r[e], left);
		barrier(CLK_LOCAL_MEM_FENCE);
#pragma unroll
		for (uint e = 0; e < EPT; e++)
			tile[dest[e]] = r[e];
		barrier(CLK_LOCAL_MEM_FENCE);
		regs_from_tile(r, tile);
	}
	regs_to_tile(r, tile);
	barrier(CLK_LOCAL_MEM_FENCE);
	tile_store(buf, n, base, tile);
}
