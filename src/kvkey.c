#include "config.h"
#include "kvkey.h"

#include <stdio.h>
#include <string.h>

#include "deckey.h"
#include "keysink.h"
#include "strkey.h"
#include "util.h"
#include "verkey.h"

/* A blank, as sort(1) has them in the C locale: with -z a newline too. */
static inline bool is_blank(const struct enc_format *f, unsigned char c)
{
	return c == ' ' || c == '\t' || (c == '\n' && f->eol == '\0');
}

/* Field number field of a line, as sort(1) takes -k N,N: between the
 * separators N-1 and N, or with -t blank from the end of field N-1 (its
 * leading blanks included) to the end of the next run of non-blanks;
 * with span more fields, as sort takes -k N,N+span, the line's end where
 * it has fewer (CLS_SPAN_END: to the line's end, sort's -k N).  Field 0
 * is the whole line.  False when the line has fewer fields than field. */
static bool kv_field(const struct enc_format *f, unsigned field, unsigned span, const char *line,
		     size_t len, const char **key, size_t *klen)
{
	const char *p = line, *const end = line + len, *q;
	unsigned n;

	if (field == 0) {
		*key = line;
		*klen = len;
		return true;
	}
	if (!f->blank) {
		for (n = 1; n < field; n++) {
			q = memchr(p, f->sep, (size_t)(end - p));
			if (!q)
				return false;
			p = q + 1;
		}
		/* The separator after the key's last field. */
		q = span == CLS_SPAN_END ? NULL : memchr(p, f->sep, (size_t)(end - p));
		for (n = 0; q && n < span; n++)
			q = memchr(q + 1, f->sep, (size_t)(end - q - 1));
		*key = p;
		*klen = (size_t)((q ? q : end) - p);
		return true;
	}
	/* A field ends where a blank follows a non-blank. */
	for (n = 1; n < field; n++) {
		while (p < end && is_blank(f, (unsigned char)*p))
			p++;
		while (p < end && !is_blank(f, (unsigned char)*p))
			p++;
		if (p == end)
			return false;
	}
	q = p;
	for (n = 0; q < end && n <= span; n++) {
		while (q < end && is_blank(f, (unsigned char)*q))
			q++;
		while (q < end && !is_blank(f, (unsigned char)*q))
			q++;
	}
	*key = p;
	*klen = (size_t)(q - p);
	return true;
}

/* A string key's field: a missing one is an empty key, as sort has it. */
static void str_field(const struct enc_format *f, unsigned field, unsigned span, const char *line,
		      size_t len, const char **key, size_t *klen)
{
	if (!kv_field(f, field, span, line, len, key, klen)) {
		*key = line + len;
		*klen = 0;
	}
}

/* A string key's text: its field, past its leading blanks where the key
 * says so (sort's b). */
static void key_text(const struct enc_format *f, const struct cls_key *k, const char *line,
		     size_t len, const char **key, size_t *klen)
{
	str_field(f, k->field, k->span, line, len, key, klen);
	if (k->blanks)
		while (*klen && is_blank(f, (unsigned char)**key)) {
			++*key;
			--*klen;
		}
}

/* A byte of a key that sort -f reads: a to z as A to Z. */
static inline unsigned char fold_byte(unsigned char c, bool fold)
{
	return fold && (unsigned)(c - 'a') < 26 ? (unsigned char)(c - 'a' + 'A') : c;
}

/* Where sort -g puts a key that is not a number (a missing field's
 * too), and a NaN: first, then NaNs, then the numbers from -inf; the
 * sortable forms of floats below -inf are NaNs, which it takes. */
#define GENERAL_NOT_NUMBER 0
#define GENERAL_NAN 1

/* Whether raw, of the float type kt, is a NaN. */
static bool float_nan(const struct key_type *kt, uint64_t raw)
{
	return kt->width == 4 ? (raw & 0x7fffffffu) > 0x7f800000u :
				(raw & ~(1ull << 63)) > 0x7ff0000000000000ull;
}

/* The number in a field (with span more fields: kv_field) as a sortable
 * key of type kt (no mask), or with lead the number at the field's start
 * (key_type's parse_lead) as sort -g reads and orders it (a key that is
 * not one, and a NaN, first): KEY_OK, KEY_BAD, KEY_RANGE or KV_NOFIELD;
 * the field in *kp, *kplen. */
static int num_key(const struct enc_format *f, unsigned field, unsigned span,
		   const struct key_type *kt, bool lead, const char *line, size_t len, uint64_t *key,
		   const char **kp, size_t *kplen)
{
	const bool general = lead && kt->parse_lead;
	const char *k;
	size_t klen;
	uint64_t raw;
	int rc;

	/* A number a missing field cannot be. */
	if (!kv_field(f, field, span, line, len, &k, &klen)) {
		if (!general)
			return KV_NOFIELD;
		*kp = line + len;
		*kplen = 0;
		*key = GENERAL_NOT_NUMBER;
		return KEY_OK;
	}
	*kp = k;
	*kplen = klen;
	/* As sort -g reads numbers: leading blanks (part of a field split at
	 * blanks) and the carriage return of a CRLF line are not the key's. */
	if (f->blank)
		while (klen && is_blank(f, (unsigned char)*k))
			k++, klen--;
	if (klen && k[klen - 1] == '\r' && k + klen == line + len)
		klen--;
	rc = general ? kt->parse_lead(k, klen, &raw) : kt->parse(k, klen, &raw);
	if (!general) {
		if (rc == KEY_OK)
			*key = kt->sortable(raw);
		return rc;
	}
	/* A number past the type's range is its infinity. */
	*key = rc == KEY_BAD ? GENERAL_NOT_NUMBER : float_nan(kt, raw) ? GENERAL_NAN :
								      kt->sortable(raw);
	return KEY_OK;
}

/* sort -h's order of the unit c after a number: K (or k), M, G, T, P, E,
 * Z, Y, R, Q from 1; 0 for anything else. */
static int unit_order(unsigned char c)
{
	static const char units[] = "KMGTPEZYRQ";
	const char *u = c ? strchr(units, c == 'k' ? 'K' : c) : NULL;

	return u ? (int)(u - units) + 1 : 0;
}

/* A number of sort -n (or -h) in a field: the number at its start, read
 * exactly (deckey.h), 0 where the field has none or the line not the
 * field, as sort has it; with -h (k->human), the order of the unit right
 * after it (folded with k->fold, as sort folds the key before it reads
 * it), negative for a negative number, 0 for none or a zero: the order
 * sorts first, the number second. */
static void exact_key(const struct enc_format *f, const struct cls_key *k, const char *line,
		      size_t len, struct dec *d, int *order)
{
	const char *p;
	size_t plen;

	str_field(f, k->field, k->span, line, len, &p, &plen);
	dec_read(p, plen, d);
	*order = 0;
	if (k->human && d->sign && d->end < plen)
		*order = d->sign * unit_order(fold_byte((unsigned char)p[d->end], k->fold));
}

/* sort -M's month of a key's text: JAN to DEC, in any case, after its
 * blanks, as 1 to 12; 0 for anything else. */
static unsigned char month_of(const struct enc_format *f, const char *p, size_t n)
{
	static const char months[] = "JANFEBMARAPRMAYJUNJULAUGSEPOCTNOVDEC";
	char name[3];
	size_t i = 0, m;

	while (i < n && is_blank(f, (unsigned char)p[i]))
		i++;
	if (n - i < 3)
		return 0;
	for (m = 0; m < 3; m++)
		name[m] = (char)fold_byte((unsigned char)p[i + m], true);
	for (m = 0; m < 12; m++)
		if (!memcmp(name, months + 3 * m, 3))
			return (unsigned char)(m + 1);
	return 0;
}

/* Compose the keys of a line (kvkey.h has the layout).  KEY_OK, or why a
 * key does not parse, *bad its index. */
static int compose(const struct enc_format *f, const char *line, size_t len, struct key_sink *s,
		   size_t *bad)
{
	size_t i, j;

	for (i = 0; i < f->nkeys; i++) {
		const struct cls_key *k = &f->keys[i];
		const unsigned char inv = k->reverse ? 0xff : 0;
		const char *p;
		size_t plen;

		/* A string that others follow, or inverted, is escaped and
		 * ended (sink_put_esc); the last, ascending, orders itself. */
		const bool escape = i + 1 < f->nkeys || inv;

		if (!k->type) {
			key_text(f, k, line, len, &p, &plen);
			if (k->month) {
				/* One byte: nothing to end. */
				sink_put(s, month_of(f, p, plen) ^ inv);
				continue;
			}
			if (k->version) {
				ver_key((const unsigned char *)p, plen, s, inv, escape);
			} else if (!escape && !k->fold) {
				if (s->n < s->cap)
					memcpy(s->p + s->n, p,
					       plen < s->cap - s->n ? plen : s->cap - s->n);
				s->n += plen;
			} else {
				for (j = 0; j < plen; j++)
					sink_put_esc(s, fold_byte((unsigned char)p[j], k->fold), inv,
						     escape);
			}
			if (escape) {
				sink_put(s, inv);
				sink_put(s, inv);
			}
		} else {
			uint64_t v;
			unsigned b;
			int order = 0;
			struct dec d;
			int rel = 0;
			if (k->exact) {
				double dv;
				exact_key(f, k, line, len, &d, &order);
				dv = dec_double(&d, &rel);
				memcpy(&v, &dv, sizeof v);
				v = k->type->sortable(v);
			} else {
				const int rc = num_key(f, k->field, k->span, k->type, k->lead, line, len, &v,
						       &p, &plen);
				if (rc != KEY_OK) {
					*bad = i;
					return rc;
				}
			}
			/* The unit's order first, offset to a byte. */
			if (k->human)
				sink_put(s, (unsigned char)(order + 128) ^ inv);
			if (inv)
				v = ~v & key_mask(k->type);
			for (b = k->type->width; b-- > 0;)
				sink_put(s, (unsigned char)(v >> 8 * b));
			/* Numbers its double cannot tell apart, told apart. */
			if (k->exact)
				dec_put(s, &d, rel, inv);
		}
	}
	return KEY_OK;
}

bool kvk_fits_word(const struct enc_format *f)
{
	size_t i, bytes = 0;

	for (i = 0; i < f->nkeys; i++) {
		const struct cls_key *k = &f->keys[i];
		if (k->month)
			bytes += 1;
		else if (k->type)
			bytes += k->type->width + k->human + k->exact;
		else
			return false;
	}
	return f->nkeys && bytes <= STR_PREFIX;
}

bool kvk_digits_ok(const struct enc_format *f)
{
	return f->fmt == CLS_FMT_KV && !f->nkeys && !f->str && !f->blank && f->field == 1 && f->kt &&
	       f->kt->dec_max && f->sep != f->eol &&
	       (unsigned)((unsigned char)f->sep - '0') > 9;
}

int kvk_key(const struct enc_format *f, const char *line, size_t len, uint64_t *key,
	    const char **kp, size_t *kplen, unsigned char *buf, size_t cap)
{
	int rc;

	if (f->nkeys) {
		struct key_sink s = { buf, cap, 0 };
		size_t bad;
		rc = compose(f, line, len, &s, &bad);
		if (rc != KEY_OK)
			return rc;
		*kp = (const char *)buf;
		*kplen = s.n;
		if (key)
			*key = str_prefix(buf, s.n < cap ? s.n : cap) ^ f->mask;
		return KEY_OK;
	}
	if (f->str) {
		str_field(f, f->field, f->field_span, line, len, kp, kplen);
		if (key)
			*key = str_prefix((const unsigned char *)*kp, *kplen) ^ f->mask;
		return KEY_OK;
	}
	rc = num_key(f, f->field, f->field_span, f->kt, f->num_lead, line, len, key, kp, kplen);
	if (rc == KEY_OK)
		*key ^= f->mask;
	return rc;
}

/* sort -f's comparison of two strings: as their bytes, a to z read as A
 * to Z. */
static int fold_cmp(const unsigned char *a, size_t an, const unsigned char *b, size_t bn)
{
	size_t i;

	for (i = 0; i < an && i < bn; i++) {
		const int c = fold_byte(a[i], true) - fold_byte(b[i], true);
		if (c)
			return c;
	}
	return (an > bn) - (an < bn);
}

int kvk_cmp(const struct enc_format *f, const char *a, size_t alen, const char *b, size_t blen)
{
	size_t i;

	for (i = 0; i < f->nkeys; i++) {
		const struct cls_key *k = &f->keys[i];
		const char *x, *y;
		size_t xl, yl;
		int c;

		if (!k->type) {
			const unsigned char *ux, *uy;
			key_text(f, k, a, alen, &x, &xl);
			key_text(f, k, b, blen, &y, &yl);
			ux = (const unsigned char *)x;
			uy = (const unsigned char *)y;
			c = k->month   ? month_of(f, x, xl) - month_of(f, y, yl) :
			    k->version ? ver_cmp(ux, xl, uy, yl) :
			    k->fold    ? fold_cmp(ux, xl, uy, yl) :
					 str_cmp(ux, xl, uy, yl);
		} else if (k->exact) {
			struct dec u, v;
			int ou, ov;
			exact_key(f, k, a, alen, &u, &ou);
			exact_key(f, k, b, blen, &v, &ov);
			c = ou != ov ? (ou > ov) - (ou < ov) : dec_cmp(&u, &v);
		} else {
			uint64_t u = 0, v = 0;
			num_key(f, k->field, k->span, k->type, k->lead, a, alen, &u, &x, &xl);
			num_key(f, k->field, k->span, k->type, k->lead, b, blen, &v, &y, &yl);
			c = (u > v) - (u < v);
		}
		if (c)
			return (k->reverse ? -c : c) * (f->mask ? -1 : 1);
	}
	return 0;
}

void kvk_report(const struct enc_format *f, const char *name, uint64_t line_no, const char *line,
		size_t len, int why, bool skipped)
{
	char shown[56], what[160];
	const char *k = line;
	size_t klen = 0, i, n = 0;
	unsigned field = f->field;
	const struct key_type *kt = f->kt;

	if (f->nkeys) {
		/* The key that fails. */
		unsigned char scratch[8];
		struct key_sink s = { scratch, sizeof scratch, 0 };
		size_t bad = 0;
		const int rc = compose(f, line, len, &s, &bad);
		if (rc != KEY_OK) {
			why = rc;
			field = f->keys[bad].field;
			kt = f->keys[bad].type;
		}
	}
	kv_field(f, field, 0, line, len, &k, &klen);
	/* Bytes a terminal would not show as they are, escaped as C writes
	 * them: a CRLF line's key reads '10\r'. */
	for (i = 0; i < klen && n < 40; i++) {
		const unsigned char c = (unsigned char)k[i];
		if (c >= 0x20 && c < 0x7f && c != '\\')
			shown[n++] = (char)c;
		else if (c == '\r' || c == '\t' || c == '\n' || c == '\\')
			n += (size_t)sprintf(shown + n, "\\%c",
					     c == '\r' ? 'r' : c == '\t' ? 't' : c == '\n' ? 'n' : '\\');
		else
			n += (size_t)sprintf(shown + n, "\\x%02x", c);
	}
	if (i < klen) {
		memcpy(shown + n, "...", 3);
		n += 3;
	}
	shown[n] = '\0';
	if (why == KV_NOFIELD)
		snprintf(what, sizeof what, "fewer than %u fields", field);
	else if (why == KEY_RANGE)
		snprintf(what, sizeof what, "key '%s' out of range for %s", shown, kt->name);
	else if (klen == 0)
		snprintf(what, sizeof what, "empty key");
	else
		snprintf(what, sizeof what, "invalid %s key '%s'", kt->name, shown);
	if (skipped)
		msg_info(1, "%s:%llu: skipped: %s", name, (unsigned long long)line_no, what);
	else
		msg_err("%s:%llu: %s", name, (unsigned long long)line_no, what);
}
