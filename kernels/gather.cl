/* Records put in the order of their sorted words, on the device (built
 * with -DGATHER): record i of out is the one of recs whose index word i
 * carries, rec_size bytes each, side by side, so that the host writes the
 * output in order instead of reading every record from wherever it lies in
 * the input.  Records of a multiple of 4 bytes are copied 4 bytes at a
 * time (both buffers start aligned, so every record does).
 *
 * Lines (-DGATHER_LINES, -DLINES_WG the work-group size): their text goes
 * up beside the line table, whose entry of a line is where it lies (a
 * host address, less base) and its length without the line end; the
 * output is the lines in the words' order, each with its line end.  Each
 * work-item takes LINES_PER_ITEM lines in a row: line_sums adds up the
 * bytes of each work-group's lines, line_scan turns those sums into where
 * each group's bytes start, and line_copy places its items' lines within
 * its group's by a scan in local memory, then copies each line with a
 * team of work-items (its launches each take the groups from group0 on). */

#if defined(GATHER) || defined(GATHER_LINES)
#if WORD_BITS == 128
#define WORD_INDEX(w) ((ulong)(uint)(w).x)
#elif WORD_BITS == 64
#define WORD_INDEX(w) ((ulong)(uint)(w))
#else
#error "records are gathered by 64- or 128-bit words only"
#endif
#endif

#ifdef GATHER

__kernel void gather_records(__global const word_t *words, __global const uchar *recs,
			     __global uchar *out, const ulong rec_size, const ulong n)
{
	const ulong i = get_global_id(0);
	ulong j;

	if (i >= n)
		return;
	if ((rec_size & 3) == 0) {
		__global const uint *s = (__global const uint *)(recs + WORD_INDEX(words[i]) * rec_size);
		__global uint *d = (__global uint *)(out + i * rec_size);
		for (j = 0; j < rec_size / 4; j++)
			d[j] = s[j];
	} else {
		__global const uchar *s = recs + WORD_INDEX(words[i]) * rec_size;
		__global uchar *d = out + i * rec_size;
		for (j = 0; j < rec_size; j++)
			d[j] = s[j];
	}
}
#endif

#ifdef GATHER_LINES
#define LINES_PER_ITEM 4
#define LINES_PER_GROUP (LINES_WG * LINES_PER_ITEM)
/* Bytes of text each work-item of line_count and line_starts looks at. */
#define TEXT_PER_ITEM 256
/* Work-items that copy one line together (a warp on NVIDIA's GPUs): their
 * reads and writes of it fall side by side. */
#define TEAM (LINES_WG < 32 ? LINES_WG : 32)

/* part[lid] becomes the sum of part[0..lid] (Hillis and Steele); every
 * work-item of the group calls it. */
static void scan_local(__local ulong *part, size_t lid)
{
	uint off;

	for (off = 1; off < LINES_WG; off <<= 1) {
		const ulong t = lid >= off ? part[lid - off] : 0;
		barrier(CLK_LOCAL_MEM_FENCE);
		part[lid] += t;
		barrier(CLK_LOCAL_MEM_FENCE);
	}
}

/* part[0] becomes the sum of part[0..LINES_WG). */
static void reduce_local(__local ulong *part, size_t lid)
{
	uint stride;

	barrier(CLK_LOCAL_MEM_FENCE);
	for (stride = LINES_WG / 2; stride > 0; stride >>= 1) {
		if (lid < stride)
			part[lid] += part[lid + stride];
		barrier(CLK_LOCAL_MEM_FENCE);
	}
}

/* A whole stretch of text is read 16 bytes a load (it starts a multiple
 * of TEXT_PER_ITEM bytes into the buffer, which starts aligned), where
 * the device keeps the bytes of a word little end first, as the host
 * does; the last, and any on other devices, a byte a load.  On an H200, 1
 * GB of text took 5.3 ms to count and 8.7 ms to find where its lines start
 * a byte a load, 1.9 and 2.6 ms sixteen. */
#ifdef __ENDIAN_LITTLE__
#define WIDE 1
#else
#define WIDE 0
#endif

/* The top bit of each byte of w that is eol, the others 0 (no carry
 * between bytes: each byte's low 7 bits are added alone). */
static uint ends_of(uint w, uchar eol)
{
	const uint x = w ^ ((uint)eol * 0x01010101u);
	return ~(((x & 0x7f7f7f7fu) + 0x7f7f7f7fu) | x | 0x7f7f7f7fu);
}

/* Line ends in this work-item's stretch of the text. */
static ulong item_ends(__global const uchar *text, ulong from, ulong bytes, uchar eol)
{
	const ulong to = from + TEXT_PER_ITEM < bytes ? from + TEXT_PER_ITEM : bytes;
	ulong c = 0, i;

	if (WIDE && to - from == TEXT_PER_ITEM) {
		__global const uint *v = (__global const uint *)(text + from);
		for (i = 0; i < TEXT_PER_ITEM / 4; i += 4) {
			const uint4 w = vload4(0, v + i);
			c += popcount(ends_of(w.x, eol)) + popcount(ends_of(w.y, eol)) +
			     popcount(ends_of(w.z, eol)) + popcount(ends_of(w.w, eol));
		}
		return c;
	}
	for (i = from; i < to; i++)
		c += text[i] == eol;
	return c;
}

/* The line ends in each work-group's stretch of the text. */
__kernel void line_count(__global const uchar *text, const ulong bytes, __global ulong *counts,
			 const uchar eol)
{
	__local ulong part[LINES_WG];
	const size_t lid = get_local_id(0), g = get_group_id(0);

	part[lid] = item_ends(text, ((ulong)g * LINES_WG + lid) * TEXT_PER_ITEM, bytes, eol);
	reduce_local(part, lid);
	if (lid == 0)
		counts[g] = part[0];
}

/* One work-group: sums[g] becomes the sum of sums[0..g). */
__kernel void line_scan(__global ulong *sums, const ulong groups)
{
	__local ulong part[LINES_WG];
	const size_t lid = get_local_id(0);
	ulong carry = 0, at;

	for (at = 0; at < groups; at += LINES_WG) {
		const ulong i = at + lid, v = i < groups ? sums[i] : 0;
		part[lid] = v;
		barrier(CLK_LOCAL_MEM_FENCE);
		scan_local(part, lid);
		if (i < groups)
			sums[i] = carry + part[lid] - v;
		carry += part[LINES_WG - 1];
		barrier(CLK_LOCAL_MEM_FENCE);
	}
}

/* Where each line starts: starts[k + 1] just past the k-th line end of the
 * text (counts: the line ends before each work-group's stretch). */
__kernel void line_starts(__global const uchar *text, const ulong bytes,
			  __global const ulong *counts, __global ulong *starts, const uchar eol)
{
	__local ulong part[LINES_WG];
	const size_t lid = get_local_id(0), g = get_group_id(0);
	const ulong from = ((ulong)g * LINES_WG + lid) * TEXT_PER_ITEM;
	const ulong to = from + TEXT_PER_ITEM < bytes ? from + TEXT_PER_ITEM : bytes;
	const ulong mine = item_ends(text, from, bytes, eol);
	ulong k, i;

	part[lid] = mine;
	barrier(CLK_LOCAL_MEM_FENCE);
	scan_local(part, lid);
	k = counts[g] + part[lid] - mine;
	if (WIDE && to - from == TEXT_PER_ITEM) {
		__global const uint *v = (__global const uint *)(text + from);
		for (i = 0; i < TEXT_PER_ITEM / 4; i += 4) {
			const uint4 w = vload4(0, v + i);
			const uint e[4] = { ends_of(w.x, eol), ends_of(w.y, eol), ends_of(w.z, eol),
					    ends_of(w.w, eol) };
			uint j;
			for (j = 0; j < 4; j++) {
				uint m = e[j];
				/* Each end's byte, lowest first: memory order. */
				while (m) {
					const uint b = (31 - clz(m & (0u - m))) / 8;
					starts[++k] = from + 4 * (i + j) + b + 1;
					m &= m - 1;
				}
			}
		}
		return;
	}
	for (i = from; i < to; i++)
		if (text[i] == eol)
			starts[++k] = i + 1;
}

/* Bytes of this work-item's lines of sorted, each with its line end. */
static ulong item_bytes(__global const word_t *sorted, __global const ulong *starts, ulong first,
			ulong n)
{
	ulong s = 0, k;

	for (k = 0; k < LINES_PER_ITEM && first + k < n; k++) {
		const ulong i = WORD_INDEX(sorted[first + k]);
		s += starts[i + 1] - starts[i];
	}
	return s;
}

__kernel void line_sums(__global const word_t *sorted, __global const ulong *starts,
			__global ulong *sums, const ulong n)
{
	__local ulong part[LINES_WG];
	const size_t lid = get_local_id(0), g = get_group_id(0);
	const ulong first = ((ulong)g * LINES_WG + lid) * LINES_PER_ITEM;

	part[lid] = first < n ? item_bytes(sorted, starts, first, n) : 0;
	reduce_local(part, lid);
	if (lid == 0)
		sums[g] = part[0];
}

/* Where each of the group's lines goes (its work-items' stretches placed
 * by a scan of their sizes), then each line copied by a team of TEAM
 * work-items. */
__kernel void line_copy(__global const word_t *sorted, __global const ulong *starts,
			__global const uchar *text, __global uchar *out, __global const ulong *sums,
			const ulong n, const uchar eol, const ulong group0)
{
	__local ulong part[LINES_WG];
	__local ulong place[LINES_PER_GROUP];
	const size_t lid = get_local_id(0), g = group0 + get_group_id(0);
	const ulong group_first = (ulong)g * LINES_PER_GROUP;
	const ulong first = group_first + (ulong)lid * LINES_PER_ITEM;
	const ulong mine = first < n ? item_bytes(sorted, starts, first, n) : 0;
	const size_t team = lid / TEAM, lane = lid % TEAM;
	ulong at, k, j, l;

	part[lid] = mine;
	barrier(CLK_LOCAL_MEM_FENCE);
	scan_local(part, lid);
	at = sums[g] + part[lid] - mine;
	for (k = 0; k < LINES_PER_ITEM && first + k < n; k++) {
		const ulong i = WORD_INDEX(sorted[first + k]);
		place[lid * LINES_PER_ITEM + k] = at;
		at += starts[i + 1] - starts[i];
	}
	barrier(CLK_LOCAL_MEM_FENCE);
	if (team >= LINES_WG / TEAM)
		return;
	for (l = team; l < LINES_PER_GROUP && group_first + l < n; l += LINES_WG / TEAM) {
		const ulong i = WORD_INDEX(sorted[group_first + l]);
		const ulong start = starts[i], len = starts[i + 1] - start - 1;
		__global const uchar *src = text + start;
		__global uchar *dst = out + place[l];
		for (j = lane; j < len; j += TEAM)
			dst[j] = src[j];
		if (lane == 0)
			dst[len] = eol;
	}
}
#endif
