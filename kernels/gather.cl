/* Records put in the order of their sorted words, on the device (built
 * with -DGATHER): record i of out is the one of recs whose index word i
 * carries, rec_size bytes each, side by side, so that the host writes the
 * output in order instead of reading every record from wherever it lies in
 * the input.  Records of a multiple of 4 bytes are copied 4 bytes at a
 * time (both buffers start aligned, so every record does). */

#ifdef GATHER
#if WORD_BITS == 128
#define WORD_INDEX(w) ((ulong)(uint)(w).x)
#elif WORD_BITS == 64
#define WORD_INDEX(w) ((ulong)(uint)(w))
#else
#error "records are gathered by 64- or 128-bit words only"
#endif

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
