/* qsort_ref: the C library reference for the clsort benchmarks.  Reads a
 * file of little-endian u32 keys, sorts it with qsort() and a comparator,
 * writes the result.
 *
 *   cc -O2 -o qsort_ref qsort_ref.c && ./qsort_ref IN OUT
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
	FILE *in, *out;
	uint32_t *keys;
	long size;
	size_t n;

	if (argc != 3) {
		fprintf(stderr, "usage: qsort_ref IN OUT\n");
		return 2;
	}
	in = fopen(argv[1], "rb");
	if (!in || fseek(in, 0, SEEK_END) || (size = ftell(in)) < 0 || fseek(in, 0, SEEK_SET)) {
		perror(argv[1]);
		return 2;
	}
	n = (size_t)size / 4;
	keys = malloc(n ? n * 4 : 1);
	if (!keys || fread(keys, 4, n, in) != n) {
		perror(argv[1]);
		return 2;
	}
	fclose(in);
	qsort(keys, n, 4, cmp_u32);
	out = fopen(argv[2], "wb");
	if (!out || fwrite(keys, 4, n, out) != n || fclose(out)) {
		perror(argv[2]);
		return 2;
	}
	free(keys);
	return 0;
}
