/* genlog: write N CSV lines shaped like a web log, for the text-long case
 * of the clsort benchmarks: an ISO timestamp, a URL that shares its first
 * 25+ bytes with every other, a status and a byte count.  Mode "path"
 * writes file paths instead (whole-line keys), mode "same" one line N
 * times.  For the sort-options case: mode "du" writes sizes with units and
 * paths as du -h prints them, mode "grep" the numbered lines of grep -n,
 * mode "tags" version strings (release tags and tarball names).
 *
 *   cc -O2 -o genlog genlog.c && ./genlog 10000000 [log|path|same|du|grep|tags] [SEED] > out
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

	static const char *const modes[] = { "log", "path", "same", "du", "grep", "tags" };
	size_t m;

	for (m = 0; m < sizeof modes / sizeof modes[0] && strcmp(mode, modes[m]); m++)
		;
	if (argc < 2 || argc > 4 || m == sizeof modes / sizeof modes[0]) {
		fprintf(stderr, "usage: genlog LINES [log|path|same|du|grep|tags] [SEED]\n");
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
		} else if (!strcmp(mode, "du")) {
			/* du -h: under 10 one decimal, then whole numbers to 1023,
			 * a unit but for bytes; 4.0K the commonest size. */
			static const char units[] = "KMGT";
			const uint64_t t = next();
			const unsigned v = (unsigned)(t % 1024), u = (unsigned)(t >> 10) % 5;
			if (t >> 20 & 3)
				printf("%.1f%c\t%s%s/%s\n", (double)(t >> 24 & 99) / 10 + 0.1,
				       units[u % 4], dir[r >> 8 & 3], section[r >> 10 & 7], id);
			else if (u == 4)
				printf("%u\t%s%s/%s\n", v, dir[r >> 8 & 3], section[r >> 10 & 7], id);
			else
				printf("%u%c\t%s%s/%s\n", v, units[u], dir[r >> 8 & 3],
				       section[r >> 10 & 7], id);
		} else if (!strcmp(mode, "grep")) {
			/* grep -n: the line's number, a colon, the matched text. */
			printf("%u:    if (%s == NULL) /* %s */\n", (unsigned)(next() % 2000000) + 1, id,
			       section[r >> 8 & 7]);
		} else if (!strcmp(mode, "tags")) {
			/* Release tags and tarball names: numbers past 9, release
			 * candidates, leading zeros. */
			const uint64_t t = next();
			const unsigned a = (unsigned)(t % 7), b = (unsigned)(t >> 8) % 30,
				       c = (unsigned)(t >> 16) % 200, rc = (unsigned)(t >> 24) % 12;
			if (t >> 32 & 1)
				printf("v%u.%u.%u%s\n", a, b, c, rc < 3 ? (rc ? "-rc1" : "-rc2") : "");
			else
				printf("%s-%u.%02u.%u.tar.%s\n", section[r >> 8 & 7], a, b, c,
				       t >> 33 & 1 ? "gz" : "xz");
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
