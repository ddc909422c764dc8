/* Unit tests of the -o writer through a shared mapping: copies of any
 * length, split between any number of threads, land whole and in place. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../src/output.h"
#include "tap.h"

/* Write len bytes of a pattern to a new file through a mapping copied on
 * threads threads; true when the file holds exactly them. */
static int mapped_write(const char *path, size_t len, unsigned threads)
{
	unsigned char *src = malloc(len), *back = malloc(len);
	struct out_writer w;
	FILE *f;
	size_t i, got = 0;
	int good = 0;

	if (!src || !back)
		goto out;
	for (i = 0; i < len; i++)
		src[i] = (unsigned char)(i * 131 + i / 4096);
	if (out_open_final(&w, path, true))
		goto out;
	if (!out_map(&w, len, threads) || out_write(&w, src, len) || out_finish(&w)) {
		out_abort(&w);
		goto out;
	}
	f = fopen(path, "rb");
	if (f) {
		got = fread(back, 1, len, f);
		good = got == len && fgetc(f) == EOF && memcmp(src, back, len) == 0;
		fclose(f);
	}
out:
	free(src);
	free(back);
	return good;
}

/* A memory writer into lent room: what fits stays there; what does not
 * moves to memory of its own, with every byte, and the room is left be. */
static bool lent_write(size_t room, size_t first, size_t second)
{
	unsigned char *lent = malloc(room + 1), *src = malloc(first + second);
	struct out_writer w;
	bool good;
	size_t i;

	for (i = 0; i < first + second; i++)
		src[i] = (unsigned char)(i * 7 + 1);
	lent[room] = 0xa5;
	out_open_mem_in(&w, lent, room, 2);
	good = out_write(&w, src, first) == 0 && w.buf == lent && w.lent;
	good = good && out_write(&w, src + first, second) == 0;
	good = good && w.len == first + second && memcmp(w.buf, src, first + second) == 0;
	good = good && (first + second <= room ? w.buf == lent && w.lent : w.buf != lent && !w.lent);
	good = good && lent[room] == 0xa5;
	out_abort(&w);		/* frees what is its own, never the lent room */
	free(lent);
	free(src);
	return good;
}

int main(void)
{
	static const unsigned threads[] = { 2, 3, 5, 8, 16 };
	char path[] = "/tmp/unit_output.XXXXXX";
	int fd = mkstemp(path);
	size_t t;

	if (fd < 0) {
		perror("mkstemp");
		return 1;
	}
	close(fd);
	for (t = 0; t < sizeof threads / sizeof threads[0]; t++) {
		const unsigned n = threads[t];
		/* Shares are whole 4 KiB pages: lengths whose share per thread
		 * is a whole number of pages, with a remainder smaller than
		 * the thread count, once left a piece for a thread too many. */
		const size_t base = (size_t)n << 20;
		ok(mapped_write(path, base, n), "%u threads, %zu bytes", n, base);
		ok(mapped_write(path, base + 1, n), "%u threads, %zu bytes", n, base + 1);
		ok(mapped_write(path, base + n - 1, n), "%u threads, %zu bytes", n, base + n - 1);
		ok(mapped_write(path, base + 4096 * n + 4, n), "%u threads, %zu bytes", n,
		   base + 4096 * n + 4);
		ok(mapped_write(path, base - 3, n), "%u threads, %zu bytes", n, base - 3);
	}
	unlink(path);
	ok(lent_write(64, 10, 54), "a memory writer fills its lent room exactly");
	ok(lent_write(64, 10, 55), "a memory writer leaves its lent room one byte past it");
	ok(lent_write((size_t)8 << 20, (size_t)5 << 20, (size_t)6 << 20),
	   "a memory writer leaves its lent room, copies in parallel");
	return done_testing();
}
