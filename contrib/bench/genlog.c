/* genlog: write N CSV lines shaped like a web log, for the text-long case
 * of the clsort benchmarks: an ISO timestamp, a URL that shares its first
 * 25+ bytes with every other, a status and a byte count.  Mode "path"
 * writes file paths instead (whole-line keys), mode "same" one line N
 * times.
 *
 *   cc -O2 -o genlog genlog.c && ./genlog 10000000 [log|path|same] [SEED] > log.csv
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
	static const char *const section[] = { "products", "search", "account", "cart", "static/img",
					       "api/v2/items", "blog/2024", "help" };
	static const char *const dir[] = { "/usr/share/doc/", "/usr/lib/x86_64-linux-gnu/",
					   "/home/user/projects/", "/var/lib/dpkg/info/" };
	static const char word[] = "abcdefghijklmnopqrstuvwxyz0123456789";
	const char *mode = argc > 2 ? argv[2] : "log";
	unsigned long long n, i;

	if (argc < 2 || argc > 4 || (strcmp(mode, "log") && strcmp(mode, "path") && strcmp(mode, "same"))) {
		fprintf(stderr, "usage: genlog LINES [log|path|same] [SEED]\n");
		return 2;
	}
	n = strtoull(argv[1], NULL, 10);
	if (argc == 4)
		state ^= strtoull(argv[3], NULL, 10) * 0xbf58476d1ce4e5b9ull;
	if (!state)
		state = 1;
	for (i = 0; i < n; i++) {
		char id[17];
		const uint64_t r = next();
		const unsigned len = 4 + (unsigned)(r % 12);
		unsigned k;

		for (k = 0; k < len; k++)
			id[k] = word[next() % (sizeof word - 1)];
		id[len] = '\0';
		if (!strcmp(mode, "same")) {
			puts("2024-05-17T12:00:00Z,https://www.example.com/products/item,200,512");
		} else if (!strcmp(mode, "path")) {
			printf("%s%s/%s/%s.txt\n", dir[r >> 8 & 3], section[r >> 10 & 7], id + len / 2,
			       id);
		} else {
			const uint64_t t = next();
			printf("2024-%02u-%02uT%02u:%02u:%02uZ,https://www.example.com/%s/%s?id=%u,%u,%u\n",
			       (unsigned)(t % 12) + 1, (unsigned)(t >> 8 & 15) + 1,
			       (unsigned)(t >> 16) % 24, (unsigned)(t >> 24) % 60,
			       (unsigned)(t >> 32) % 60, section[r >> 8 & 7], id,
			       (unsigned)(t >> 40 & 1023), r >> 20 & 1 ? 200 : 404,
			       (unsigned)(t >> 50));
		}
	}
	return 0;
}
