/* genkv: write N random "KEY:VALUE" lines, u32 decimal keys and 20-byte
 * alphanumeric values, for the clsort benchmarks.
 *
 *   cc -O2 -o genkv genkv.c && ./genkv 10000000 [SEED] > lines.kv
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint64_t state = 0x9e3779b97f4a7c15ull;

static uint64_t next(void)
{
	/* xorshift64* */
	state ^= state >> 12;
	state ^= state << 25;
	state ^= state >> 27;
	return state * 0x2545f4914f6cdd1dull;
}

int main(int argc, char **argv)
{
	static const char alnum[] = "abcdefghijklmnopqrstuvwxyz0123456789";
	static char buf[1 << 20];
	unsigned long long n, i;
	size_t len = 0;

	if (argc < 2 || argc > 3) {
		fprintf(stderr, "usage: genkv LINES [SEED]\n");
		return 2;
	}
	n = strtoull(argv[1], NULL, 10);
	if (argc == 3)
		state ^= strtoull(argv[2], NULL, 10) * 0xbf58476d1ce4e5b9ull;
	if (!state)
		state = 1;
	for (i = 0; i < n; i++) {
		char digits[16];
		uint64_t r = next();
		uint32_t key = (uint32_t)(r >> 32);
		int d = 0, k;

		if (len > sizeof buf - 64) {
			if (fwrite(buf, 1, len, stdout) != len)
				return 1;
			len = 0;
		}
		do {
			digits[d++] = (char)('0' + key % 10);
			key /= 10;
		} while (key);
		while (d)
			buf[len++] = digits[--d];
		buf[len++] = ':';
		r = next();
		for (k = 0; k < 20; k++) {
			if (k == 10)
				r = next();
			buf[len++] = alnum[r % 36];
			r /= 36;
		}
		buf[len++] = '\n';
	}
	if (fwrite(buf, 1, len, stdout) != len || fflush(stdout))
		return 1;
	return 0;
}
