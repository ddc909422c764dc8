/* Unit tests of the .npy header reader on hostile headers: every header
 * is laid at the end of a page followed by an inaccessible one, so that a
 * read past its end faults instead of going unnoticed. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "../src/clsort.h"
#include "../src/npy.h"
#include "tap.h"

static unsigned char *pages;
static size_t page;

/* npy_open of a version 1.0 file made of the header text (its length
 * field saying len bytes, which may be fewer than the text has), then
 * data, ending where the readable page ends. */
static int open_guarded(const char *text, size_t len, const void *data, size_t dlen)
{
	const size_t total = 10 + len + dlen;
	unsigned char *f = pages + page - total;
	struct in_file file;
	struct in_set set;
	struct npy_info info;
	int rc;

	memcpy(f, "\x93NUMPY\x01\x00", 8);
	f[8] = (unsigned char)len;
	f[9] = (unsigned char)(len >> 8);
	memcpy(f + 10, text, len);
	if (dlen)	/* data may be NULL, which memcpy may not take even for 0 bytes */
		memcpy(f + 10 + len, data, dlen);
	memset(&file, 0, sizeof file);
	file.name = "guarded.npy";
	file.data = f;
	file.size = total;
	set.files = &file;
	set.count = 1;
	set.bytes = total;
	rc = npy_open(&set, NULL, &info);
	npy_free(&info);
	return rc;
}

int main(void)
{
	static const char good[] = "{'descr': '<u4', 'fortran_order': False, 'shape': (2,), }\n";
	static const char *const hostile[] = {
		"{'descr': '<u4', 'fortran_order': False, 'shape': (12345678901234567",
		"{'descr': '<u4', 'fortran_order': False, 'shape': (-",
		"{'descr': '<u4', 'fortran_order': False, 'shape': (2,), 'x': '\\",
		"{'descr': '<u4', 'fortran_order': False, 'shape': ((((((((((((((((((((",
		"{'descr': [('a', '<u4'), ('b', '<u4', (3",
		"{'descr': '<u4', 'fortran_order': Tru",
		"777777777777777777777777777777777777777777777777777777777777777777777",
	};
	const unsigned keys[2] = { 2, 1 };
	size_t i, k;
	int cut_ok = 1;

	page = (size_t)sysconf(_SC_PAGESIZE);
	pages = mmap(NULL, 2 * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (pages == MAP_FAILED || mprotect(pages + page, page, PROT_NONE)) {
		printf("Bail out! cannot map a guarded page\n");
		return 1;
	}
	ok(open_guarded(good, strlen(good), keys, sizeof keys) == 0,
	   "a whole header with its records ending at the page's end is read");
	for (i = 0; i < sizeof hostile / sizeof *hostile; i++)
		ok(open_guarded(hostile[i], strlen(hostile[i]), NULL, 0) == CLS_E_FAIL,
		   "a header ending in the middle of a value is refused: %.40s...", hostile[i]);
	/* Every cut of a good header, the file ending with it. */
	for (k = 1; k < strlen(good); k++)
		if (open_guarded(good, k, NULL, 0) != CLS_E_FAIL)
			cut_ok = 0;
	ok(cut_ok, "every header cut short at the end of the file is refused");
	return done_testing();
}
