/* gencsv: write N random CSV lines of 5 fields, for the clsort benchmarks:
 * a line number, a name of 8 to 24 random alphanumeric bytes (the string
 * key), a u32 score (the numeric key), a city and an amount.
 *
 *   cc -O2 -o gencsv gencsv.c && ./gencsv 10000000 [SEED] > lines.csv
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

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
	static const char alnum[] =
		"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
	static const char *const city[] = { "Lisbon", "Oslo", "Lima", "Osaka", "Quito",
					    "Perth", "Accra", "Riga" };
	unsigned long long n, i;

	if (argc < 2 || argc > 3) {
		fprintf(stderr, "usage: gencsv LINES [SEED]\n");
		return 2;
	}
	n = strtoull(argv[1], NULL, 10);
	if (argc == 3)
		state ^= strtoull(argv[2], NULL, 10) * 0xbf58476d1ce4e5b9ull;
	if (!state)
		state = 1;
	for (i = 0; i < n; i++) {
		char name[25];
		const uint64_t r = next();
		const int len = 8 + (int)(r % 17);
		int k;

		for (k = 0; k < len; k++)
			name[k] = alnum[next() % 62];
		name[len] = '\0';
		printf("%llu,%s,%u,%s,%u.%02u\n", i + 1, name, (unsigned)(next() >> 32),
		       city[r >> 61], (unsigned)(r >> 40 & 0xfffff), (unsigned)(r >> 8 & 63));
	}
	return fflush(stdout) == 0 ? 0 : 1;
}
