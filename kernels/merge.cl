/* Rank-merge tile sort: the other local kernel of the design.  After the
 * register sort, sorted runs of width w are merged pairwise: a word's place
 * in the merged run is its index in its own run plus its rank in the
 * sibling run, found by binary search.  Words of the left run count the
 * sibling's words strictly less, those of the right run the words less or
 * equal, so equal words keep their order and no two land on one place. */

/* Number of words in tile[sib..sib+w) before x: strictly less when
 * strict, else less or equal. */
inline uint rank_in(__local const word_t *tile, uint sib, uint w, word_t x, bool strict)
{
	uint lo = 0, hi = w;
	while (lo < hi) {
		const uint mid = (lo + hi) / 2;
		const word_t y = tile[TI(sib + mid)];
		const bool before = strict ? WLESS(y, x) : !WLESS(x, y);
		if (before)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

#ifdef TILE_MERGE
__kernel __attribute__((reqd_work_group_size(WG, 1, 1)))
void tile_sort_merge(__global word_t *buf, const ulong n, const ulong first_tile)
{
	__local word_t tile[TILE_ALLOC];
	const ulong base = (first_tile + get_group_id(0)) * TILE;
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
			dest[e] = pair + (first + e - run) + rank_in(tile, sib, w, r[e], left);
		barrier(CLK_LOCAL_MEM_FENCE);
#pragma unroll
		for (uint e = 0; e < EPT; e++)
			tile[TI(dest[e])] = r[e];
		barrier(CLK_LOCAL_MEM_FENCE);
		regs_from_tile(r, tile);
	}
	regs_to_tile(r, tile);
	barrier(CLK_LOCAL_MEM_FENCE);
	tile_store(buf, n, base, tile);
}
#endif

/* Outputs [o, oend) of the merge of the sorted runs src[bs..b0) and
 * src[b0..b1) into dst, at the same places: by binary search, how many of
 * the left run's words come before o (the co-rank), then a sequential
 * merge.  On equal words the left run goes first. */
inline void merge_span(__global const word_t *src, __global word_t *dst, const ulong bs,
		       const ulong b0, const ulong b1, ulong o, const ulong oend)
{
	const ulong la = b0 - bs, lb = b1 - b0, diag = o - bs;
	ulong lo = diag > lb ? diag - lb : 0, hi = min(diag, la), i, j;
	word_t a = WORD_MAX, b = WORD_MAX;

	while (lo < hi) {
		const ulong mid = (lo + hi) / 2;
		if (!WLESS(src[b0 + diag - mid - 1], src[bs + mid]))
			lo = mid + 1;
		else
			hi = mid;
	}
	i = lo;
	j = diag - lo;
	/* The next word of each run stays in a register: one load per
	 * output, and none past a run's end. */
	if (i < la)
		a = src[bs + i];
	if (j < lb)
		b = src[b0 + j];
	for (; o < oend; o++) {
		if (j >= lb || (i < la && !WLESS(b, a))) {
			dst[o] = a;
			i++;
			if (i < la)
				a = src[bs + i];
		} else {
			dst[o] = b;
			j++;
			if (j < lb)
				b = src[b0 + j];
		}
	}
}

/* Global merge pass, out of place: pairs of sorted runs of width w in src
 * become sorted runs of 2w in dst.  Each work-item writes MERGE_ITEMS
 * consecutive outputs (of one pair or of several).  This is the
 * O(n log n) finish for devices where the bitonic passes' extra log n
 * factor costs more than their regular access saves (CPUs). */
#ifdef GLOBAL_MERGE
__kernel void merge_pass(__global const word_t *src, __global word_t *dst, const ulong n,
			 const ulong w)
{
	const ulong first = get_global_id(0) * MERGE_ITEMS;
	const ulong last = min(first + MERGE_ITEMS, n);
	ulong o = first;

	while (o < last) {
		const ulong bs = o / (2 * w) * (2 * w);
		const ulong b1 = min(bs + 2 * w, n), oend = min(last, b1);
		merge_span(src, dst, bs, min(bs + w, n), b1, o, oend);
		o = oend;
	}
}
#endif

#ifdef PIECES
/* Merge pass over sorted pieces of any lengths, out of place within buf:
 * the k pieces lie at buf[from + bounds[i] .. from + bounds[i+1]), and
 * pass step (1, 2, 4, ...) merges the pieces made by the pass before it
 * in pairs, those starting at bounds[2 step j] and bounds[2 step j +
 * step], into buf[to + ...] at the same places.  After the passes up to
 * step >= k the k pieces are one sorted run.  For runs that were sorted
 * apart and are put together again: the device merges them in log2 k
 * passes instead of sorting them afresh.  Each work-item writes
 * MERGE_ITEMS consecutive outputs, as merge_pass does; on equal words the
 * earlier piece goes first. */
inline ulong piece_bound(__global const ulong *bounds, const ulong k, const ulong i)
{
	return bounds[min(i, k)];
}

__kernel void merge_pieces(__global word_t *buf, const ulong from, const ulong to,
			   __global const ulong *bounds, const ulong k, const ulong step,
			   const ulong n)
{
	const ulong first = get_global_id(0) * MERGE_ITEMS;
	const ulong last = min(first + MERGE_ITEMS, n);
	const ulong pairs = (k + 2 * step - 1) / (2 * step);
	ulong o = first;

	while (o < last) {
		/* The pair o falls in: the first whose end is past o. */
		ulong p = 0, q = pairs - 1;
		while (p < q) {
			const ulong mid = (p + q) / 2;
			if (piece_bound(bounds, k, (mid + 1) * 2 * step) > o)
				q = mid;
			else
				p = mid + 1;
		}
		const ulong b1 = piece_bound(bounds, k, (p + 1) * 2 * step), oend = min(last, b1);
		merge_span(buf + from, buf + to, piece_bound(bounds, k, p * 2 * step),
			   piece_bound(bounds, k, p * 2 * step + step), b1, o, oend);
		o = oend;
	}
}
#endif
