/* Unit tests of the runs kept in memory: keeping a run takes its buffer
 * from the writer and leaves the writer holding nothing, so that many runs
 * cost their bytes and no more. */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "../src/spill.h"
#include "../src/tie.h"
#include "tap.h"

static size_t no_key(const void *ctx, size_t idx, const unsigned char **p)
{
	(void)ctx;
	(void)idx;
	*p = (const unsigned char *)"";
	return 0;
}

static int no_emit(void *ctx, const struct word128 *words, size_t n)
{
	(void)ctx;
	(void)words;
	(void)n;
	return 0;
}

int main(void)
{
	struct enc_format f;
	struct spl_set s;
	struct out_writer w;
	struct mrg_run r;
	struct word128 tied[3];
	const struct tie_key k = { no_key, NULL, false };
	int i;

	memset(&f, 0, sizeof f);
	f.threads = 1;
	ok(spl_init(&s, &f, "/tmp", 1 << 20, false, 4) == 0, "runs kept in memory");
	for (i = 0; i < 3; i++) {
		ok(spl_writer(&s, &w, &r, 64) == 0, "run %d: a writer", i);
		ok(out_write(&w, "0123456789", 10) == 0, "run %d: written", i);
		/* Words that tie at the end of what was emitted are held back
		 * in the writer until its run ends. */
		memset(tied, 0, sizeof tied);
		ok(tie_push(&w.ties, &k, tied, 3, no_emit, NULL) == 0 && w.ties.held,
		   "run %d: tied words held", i);
		ok(spl_keep(&s, &w, &r) == 0, "run %d: kept", i);
		ok(!w.buf && !w.emit_state && !w.ties.held && w.ties.cap == 0,
		   "run %d: the writer holds nothing once its run is kept", i);
		ok(s.n == (size_t)i + 1 && s.runs[i].len == 10 &&
			   memcmp(s.runs[i].data, "0123456789", 10) == 0,
		   "run %d: its bytes are kept", i);
	}
	spl_free(&s);
	return done_testing();
}
