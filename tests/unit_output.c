/* Unit tests of the -o writer through a shared mapping: copies of any
 * length, split between any number of threads, land whole and in place,
 * and so do the short copies of lines;
 * and of the removal of a guarded -o temporary file by a process about to
 * be ended (MPI_Abort) as by a signal. */
#include "config.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../src/output.h"
#include "../src/tmpfile.h"
#include "../src/util.h"
#include "tap.h"

/* len bytes of a pattern (seed varies it), or NULL. */
static unsigned char *pattern(size_t len, unsigned seed)
{
	unsigned char *p = malloc(len);
	size_t i;

	for (i = 0; p && i < len; i++)
		p[i] = (unsigned char)(i * seed + i / 4096);
	return p;
}

/* Whether the file at path holds exactly src[0..len). */
static int file_holds(const char *path, const unsigned char *src, size_t len)
{
	unsigned char *back = malloc(len);
	FILE *f = fopen(path, "rb");
	int good = 0;

	if (back && f)
		good = fread(back, 1, len, f) == len && fgetc(f) == EOF && memcmp(src, back, len) == 0;
	if (f)
		fclose(f);
	free(back);
	return good;
}

/* Write len bytes of a pattern to a new file through a mapping copied on
 * threads threads; true when the file holds exactly them. */
static int mapped_write(const char *path, size_t len, unsigned threads)
{
	unsigned char *src = pattern(len, 131);
	struct out_writer w;
	int good = 0;

	if (!src || out_open_final(&w, path, true))
		goto out;
	if (!out_map(&w, len, threads, true) || out_write(&w, src, len) || out_finish(&w)) {
		out_abort(&w);
		goto out;
	}
	good = file_holds(path, src, len);
out:
	free(src);
	return good;
}

/* As mapped_write, the mapping's pages not faulted in when it is made:
 * ahead of the writes, a third of it (what out_fault_ahead says it
 * faulted in, checked), then the first sixth written, then the rest
 * asked for and more. */
static int ahead_write(const char *path, size_t len, unsigned threads)
{
	unsigned char *src = pattern(len, 7);
	struct out_writer w;
	int good = 0;

	if (!src || out_open_final(&w, path, true))
		goto out;
	if (!out_map(&w, len, threads, false) || out_fault_ahead(&w, len / 3) != len / 3 ||
	    out_fault_ahead(&w, len / 3) != 0 || out_write(&w, src, len / 6) ||
	    out_fault_ahead(&w, 2 * len) != len - len / 3 || out_fault_ahead(&w, 1) != 0 ||
	    out_write(&w, src + len / 6, len - len / 6) || out_fault_ahead(&w, 1) != 0 ||
	    out_finish(&w)) {
		out_abort(&w);
		goto out;
	}
	good = file_holds(path, src, len);
out:
	free(src);
	return good;
}

/* copy_short, which the deal of kv lines copies each line with: every
 * length to 70 (each of its ways, and memcpy's past them), from and to
 * every alignment to 15, lands whole, no byte around it touched. */
static bool short_copies(void)
{
	unsigned char src[96], dst[128];
	size_t n, a, b, i;

	for (i = 0; i < sizeof src; i++)
		src[i] = (unsigned char)(i * 7 + 1);
	for (n = 0; n <= 70; n++)
		for (a = 0; a < 16; a++)
			for (b = 0; b < 16; b++) {
				memset(dst, 0xee, sizeof dst);
				copy_short(dst + 16 + b, src + a, n);
				for (i = 0; i < sizeof dst; i++) {
					const bool in = i >= 16 + b && i < 16 + b + n;
					if (dst[i] != (in ? src[a + i - 16 - b] : 0xee))
						return false;
				}
			}
	return true;
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
	ok(short_copies(), "short copies of 0 to 70 bytes land whole and touch nothing else");
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
	ok(ahead_write(path, (size_t)6 << 20, 4), "6 MiB faulted in ahead of the writes, in parts");
	ok(ahead_write(path, ((size_t)3 << 20) + 5, 3), "3 MiB + 5 faulted in ahead of the writes");
	/* A guarded file goes; once unguarded, it stays. */
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	if (fd >= 0)
		close(fd);
	tmp_guard_output(path);
	tmp_remove_guarded();
	ok(access(path, F_OK) != 0, "the guarded -o temporary file removed");
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	if (fd >= 0)
		close(fd);
	tmp_guard_output(NULL);
	tmp_remove_guarded();
	ok(access(path, F_OK) == 0, "an unguarded file left");
	unlink(path);
	return done_testing();
}
