/* The kv/CSV line parser: field split and key parse (enc_key) of one line.
 * The first byte picks the key type (or string keys), the separator mode
 * and the field; the rest is the line, whose last byte, odd, takes a string
 * key of several fields.  Where a line's key may be read as
 * plain digits (kvkey.h), that read must give what enc_key gives, or
 * decline: the target aborts otherwise.  The line's keys composed as
 * sort's -V, -h, f and b make them (kvk_key, from byte 0's bits), and
 * the line compared with itself (kvk_cmp), must be equal. */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "../../src/encode.h"
#include "../../src/keys.h"
#include "../../src/kvkey.h"
#include "fuzz.h"

const unsigned long fuzz_iterations = 300000;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char seps[] = ",\t; |";
	struct enc_format f;
	unsigned ntypes = 0, pick;
	uint64_t key, digits_key;
	const char *line = (const char *)data + 1, *sep;
	int rc;

	if (!size)
		return 0;
	while (key_types[ntypes].name)
		ntypes++;
	memset(&f, 0, sizeof f);
	f.fmt = CLS_FMT_KV;
	pick = data[0] % (ntypes + 1);
	f.str = pick == ntypes;
	f.kt = f.str ? NULL : &key_types[pick];
	f.mask = data[0] & 0x80 ? ~(uint64_t)0 : 0;
	f.blank = (data[0] >> 3) % 6 == 5;
	f.sep = seps[(data[0] >> 3) % 6 % 5];
	f.eol = '\n';
	/* The first field, of which the digits' read is, the more often. */
	f.field = (data[0] >> 5) % 4 == 3 ? 1 : 1 + (data[0] >> 5) % 4;
	/* A string key of several fields where the line's last byte is odd:
	 * to the line's end (sort's -k N) or one or two more (-k N,M). */
	if (f.str && size > 1 && data[size - 1] & 1)
		f.field_span = (data[size - 1] >> 1) % 3 ? (data[size - 1] >> 1) % 3 : CLS_SPAN_END;
	f.indexed = true;
	f.kind = f.str ? WORD128 : key_word_kind(f.kt, true);
	rc = enc_key(&f, data + 1, size - 1, &key);
	if (kvk_digits_ok(&f) &&
	    kvk_digits_key(&f, line, line + size - 1, &digits_key, &sep) &&
	    (rc != KEY_OK || digits_key != key || *sep != f.sep))
		abort();
	{
		struct cls_key keys[2] = {
			{ .field = f.field, .version = !(data[0] & 1), .reverse = data[0] & 2,
			  .fold = data[0] & 1, .blanks = data[0] & 4, .span = f.field_span,
			  .month = (data[0] & 5) == 5 },
			{ .field = 1 + (data[0] >> 6), .type = key_type_find("f64"),
			  .lead = data[0] & 32, .exact = !(data[0] & 32),
			  .human = !(data[0] & 32) && data[0] & 8 },
		};
		unsigned char buf[64];
		const char *k;
		size_t klen;

		f.keys = keys;
		f.nkeys = 1 + (data[0] >> 4 & 1);
		f.str = true;
		f.mask = 0;
		if (kvk_key(&f, line, size - 1, &key, &k, &klen, buf, sizeof buf) == KEY_OK &&
		    kvk_cmp(&f, line, size - 1, line, size - 1) != 0)
			abort();
	}
	return 0;
}
