#include "config.h"
#include "check.h"

#include <stdio.h>

#include "util.h"

int check_sorted(const struct enc_format *f, const struct in_set *in, bool quiet)
{
	struct enc_cursor prev;
	bool have_prev = false;
	size_t i;

	for (i = 0; i < in->count; i++) {
		const struct in_file *file = &in->files[i];
		struct enc_cursor c;
		int rc;

		enc_cursor_init(&c, f, file->data, file->size, file->name);
		c.no = file->first_line;
		while ((rc = enc_cursor_next(&c)) == 1) {
			/* -u: equal keys are out of order too, as sort -c -u has it. */
			const int order = have_prev ? enc_cursor_cmp(&prev, &c) : -1;
			if (order > 0 || (order == 0 && f->unique)) {
				if (quiet)
					return CLS_E_DISORDER;
				if (f->fmt == CLS_FMT_KV)
					msg_err("%s:%llu: disorder: %.*s", file->name,
						(unsigned long long)c.no, (int)(c.len > 200 ? 200 : c.len),
						(const char *)c.rec);
				else
					msg_err("%s: record %llu: disorder", file->name,
						(unsigned long long)c.no);
				return CLS_E_DISORDER;
			}
			prev = c;
			have_prev = true;
		}
		if (rc < 0)
			return CLS_E_FAIL;
	}
	return 0;
}
