/* Records put in the order of their sorted words, on the device (built
 * with -DGATHER), where records are as wide as a word (16-byte records
 * beside 128-bit words, 8-byte ones beside 64-bit words): record i of out
 * is the one of recs whose index word i carries, so that the host writes
 * the output in order instead of reading every record from wherever it
 * lies in the input. */

#ifdef GATHER
#if WORD_BITS == 128
#define WORD_INDEX(w) ((uint)(w).x)
#elif WORD_BITS == 64
#define WORD_INDEX(w) ((uint)(w))
#else
#error "records are gathered by 64- or 128-bit words only"
#endif

__kernel void gather_records(__global const word_t *words, __global const word_t *recs,
			     __global word_t *out, const ulong n)
{
	const ulong i = get_global_id(0);

	if (i < n)
		out[i] = recs[WORD_INDEX(words[i])];
}
#endif
