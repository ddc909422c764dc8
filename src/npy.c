#include "config.h"
#include "npy.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bytekey.h"
#include "clsort.h"
#include "util.h"

#define MAGIC "\x93NUMPY"
/* Nesting of the header's literal that is believed. */
#define MAX_DEPTH 16

/* --- the header: a Python literal ---------------------------------------- */

enum lit_kind { L_STR, L_INT, L_BOOL, L_NONE, L_SEQ, L_DICT };

struct lit {
	enum lit_kind kind;
	const char *text;	/* the value as written */
	size_t text_len;
	char *str;		/* L_STR: decoded */
	long long num;		/* L_INT, L_BOOL */
	struct lit *items;	/* L_SEQ: the items; L_DICT: key, value, key, value... */
	size_t n;
};

struct parser {
	const char *p, *end;
};

static void lit_free(struct lit *l)
{
	size_t i;
	for (i = 0; i < l->n; i++)
		lit_free(&l->items[i]);
	free(l->items);
	free(l->str);
}

static void skip_space(struct parser *ps)
{
	while (ps->p < ps->end && (*ps->p == ' ' || *ps->p == '\t' || *ps->p == '\n'))
		ps->p++;
}

static bool take(struct parser *ps, char c)
{
	skip_space(ps);
	if (ps->p < ps->end && *ps->p == c) {
		ps->p++;
		return true;
	}
	return false;
}

static bool word(struct parser *ps, const char *w)
{
	const size_t n = strlen(w);
	if ((size_t)(ps->end - ps->p) >= n && !memcmp(ps->p, w, n)) {
		ps->p += n;
		return true;
	}
	return false;
}

static bool parse_value(struct parser *ps, struct lit *l, int depth);

/* Items up to the closing bracket close, commas between (and after). */
static bool parse_items(struct parser *ps, struct lit *l, char close, int depth)
{
	size_t cap = 0;
	for (;;) {
		if (take(ps, close))
			return true;
		if (l->n == cap) {
			struct lit *g;
			cap = cap ? cap * 2 : 8;
			g = realloc(l->items, cap * sizeof *g);
			if (!g)
				return false;
			l->items = g;
		}
		memset(&l->items[l->n], 0, sizeof l->items[l->n]);
		if (!parse_value(ps, &l->items[l->n++], depth + 1))
			return false;
		if (l->kind == L_DICT && l->n % 2) {
			if (!take(ps, ':'))
				return false;
			continue;
		}
		if (!take(ps, ',')) {
			if (!take(ps, close))
				return false;
			return l->kind != L_DICT || l->n % 2 == 0;
		}
	}
}

static bool parse_value(struct parser *ps, struct lit *l, int depth)
{
	const char *start;
	skip_space(ps);
	start = ps->p;
	if (depth > MAX_DEPTH || ps->p >= ps->end)
		return false;
	if (*ps->p == '\'' || *ps->p == '"') {
		const char q = *ps->p++;
		size_t n = 0;
		l->kind = L_STR;
		l->str = malloc((size_t)(ps->end - ps->p) + 1);
		if (!l->str)
			return false;
		while (ps->p < ps->end && *ps->p != q) {
			if (*ps->p == '\\' && ps->p + 1 < ps->end)
				ps->p++;
			l->str[n++] = *ps->p++;
		}
		l->str[n] = '\0';
		if (ps->p++ >= ps->end)
			return false;
	} else if (*ps->p == '(' || *ps->p == '[' || *ps->p == '{') {
		const char open = *ps->p++;
		l->kind = open == '{' ? L_DICT : L_SEQ;
		if (!parse_items(ps, l, open == '(' ? ')' : open == '[' ? ']' : '}', depth))
			return false;
	} else if (word(ps, "True") || word(ps, "False")) {
		l->kind = L_BOOL;
		l->num = start[0] == 'T';
	} else if (word(ps, "None")) {
		l->kind = L_NONE;
	} else {
		/* strtoll would read on past the header, which nothing ends:
		 * the number is copied out first. */
		char num[24], *e;
		size_t k = 0;
		while (ps->p + k < ps->end && k < sizeof num - 1 &&
		       ((ps->p[k] >= '0' && ps->p[k] <= '9') || (k == 0 && (ps->p[k] == '-' || ps->p[k] == '+')))) {
			num[k] = ps->p[k];
			k++;
		}
		num[k] = '\0';
		errno = 0;
		l->kind = L_INT;
		l->num = strtoll(num, &e, 10);
		if (e == num || errno || *e)
			return false;
		ps->p += k;
	}
	l->text = start;
	l->text_len = (size_t)(ps->p - start);
	return true;
}

static const struct lit *dict_get(const struct lit *d, const char *key)
{
	size_t i;
	for (i = 0; d->kind == L_DICT && i + 1 < d->n; i += 2)
		if (d->items[i].kind == L_STR && !strcmp(d->items[i].str, key))
			return &d->items[i + 1];
	return NULL;
}

/* --- dtypes ----------------------------------------------------------------- */

/* A dtype string such as '<u4', '|S10', '<M8[ns]': its byte order, kind
 * and size in bytes; false when it is not one. */
static bool dtype_parse(const char *s, char *order, char *kind, size_t *size)
{
	char *e;
	unsigned long n;
	if (!strchr("<>|=", s[0]) || !s[0] || !s[1])
		return false;
	*order = s[0] == '=' ? '<' : s[0];
	*kind = s[1];
	n = strtoul(s + 2, &e, 10);
	if (e == s + 2 || (*e && *e != '['))
		return false;
	*size = *kind == 'U' ? n * 4 : n;
	return true;
}

/* Bytes of a field's dtype: a string, a nested list of fields, or either
 * with a subarray shape; 0 when not understood. */
static size_t fields_size(const struct lit *descr);

static size_t field_size(const struct lit *field)
{
	size_t size, i;
	char order, kind;

	if (field->kind != L_SEQ || field->n < 2 || field->n > 3)
		return 0;
	if (field->items[1].kind == L_STR)
		size = dtype_parse(field->items[1].str, &order, &kind, &size) ? size : 0;
	else
		size = fields_size(&field->items[1]);
	if (field->n == 3) {
		const struct lit *shape = &field->items[2];
		if (shape->kind == L_INT) {
			size *= (size_t)shape->num;
		} else if (shape->kind == L_SEQ) {
			for (i = 0; i < shape->n; i++)
				size *= shape->items[i].kind == L_INT && shape->items[i].num >= 0 ?
					(size_t)shape->items[i].num : 0;
		} else {
			return 0;
		}
	}
	return size;
}

static size_t fields_size(const struct lit *descr)
{
	size_t total = 0, i, s;
	if (descr->kind != L_SEQ)
		return 0;
	for (i = 0; i < descr->n; i++) {
		if (!(s = field_size(&descr->items[i])))
			return 0;
		total += s;
	}
	return total;
}

/* A field's name: a string, or (title, name). */
static const char *field_name(const struct lit *name)
{
	if (name->kind == L_STR)
		return name->str;
	if (name->kind == L_SEQ && name->n == 2 && name->items[1].kind == L_STR)
		return name->items[1].str;
	return NULL;
}

/* The key type of a dtype string; NULL (with *why) when it has none. */
static const struct key_type *key_of_dtype(const char *dtype, const char **why)
{
	static const struct {
		char kind;
		size_t size;
		const char *type;
	} types[] = {
		{ 'u', 4, "u32" }, { 'i', 4, "i32" }, { 'f', 4, "f32" },
		{ 'u', 8, "u64" }, { 'i', 8, "i64" }, { 'f', 8, "f64" },
	};
	char order, kind, name[16];
	size_t size, i;

	*why = "cannot sort by it (keys: u4, i4, f4, u8, i8, f8, u1, b1, or S or V of up to 64 bytes)";
	if (!dtype_parse(dtype, &order, &kind, &size))
		return NULL;
	if (order == '>' && size > 1 && strchr("uifcMm", kind)) {
		*why = "big-endian: make it little-endian first (arr.astype(arr.dtype.newbyteorder('<')))";
		return NULL;
	}
	for (i = 0; i < sizeof types / sizeof types[0]; i++)
		if (types[i].kind == kind && types[i].size == size)
			return key_type_find(types[i].type);
	/* Unsigned bytes: memcmp order is their order. */
	if ((kind == 'S' || kind == 'V' || ((kind == 'u' || kind == 'b') && size == 1)) &&
	    size >= 1 && size <= BYTES_MAX) {
		snprintf(name, sizeof name, "%zu", size);
		return bytes_key_type(name);
	}
	return NULL;
}

/* --- files -------------------------------------------------------------------- */

/* The descr of f's header, checked, with the key it gives.  0 or
 * CLS_E_FAIL after a message. */
static int read_header(struct in_file *f, const char *field, struct npy_info *h, struct lit *root,
		       size_t *hlen, unsigned *major)
{
	const unsigned char *d = f->data;
	const struct lit *descr, *fortran, *shape;
	struct parser ps;
	const char *why;
	size_t len, pre;

	memset(root, 0, sizeof *root);
	if (f->size < 10 || memcmp(d, MAGIC, 6)) {
		msg_err("%s: not a .npy file (no \\x93NUMPY at its start)", f->name);
		return CLS_E_FAIL;
	}
	*major = d[6];
	if (*major < 1 || *major > 3) {
		msg_err("%s: .npy format version %u.%u is not known (1, 2 and 3 are)", f->name, d[6],
			d[7]);
		return CLS_E_FAIL;
	}
	pre = *major == 1 ? 10 : 12;
	len = *major == 1 ? (size_t)d[8] | (size_t)d[9] << 8 :
	      f->size < 12 ? 0 : (size_t)d[8] | (size_t)d[9] << 8 | (size_t)d[10] << 16 |
			      (size_t)d[11] << 24;
	if (f->size < pre || len > f->size - pre || len == 0) {
		msg_err("%s: the .npy header is cut short", f->name);
		return CLS_E_FAIL;
	}
	*hlen = pre + len;
	ps.p = (const char *)d + pre;
	ps.end = ps.p + len;
	if (!parse_value(&ps, root, 0) || root->kind != L_DICT || !(descr = dict_get(root, "descr")) ||
	    !(fortran = dict_get(root, "fortran_order")) || !(shape = dict_get(root, "shape")) ||
	    fortran->kind != L_BOOL || shape->kind != L_SEQ) {
		msg_err("%s: the .npy header is not a dictionary of descr, fortran_order and shape",
			f->name);
		return CLS_E_FAIL;
	}
	if (fortran->num) {
		msg_err("%s: a Fortran-order array: save it in C order (np.ascontiguousarray)", f->name);
		return CLS_E_FAIL;
	}
	if (shape->n != 1 || shape->items[0].kind != L_INT || shape->items[0].num < 0) {
		msg_err("%s: an array of shape %.*s: only one-dimensional arrays are sorted", f->name,
			(int)shape->text_len, shape->text);
		return CLS_E_FAIL;
	}
	h->records = (uint64_t)shape->items[0].num;
	if (descr->kind == L_STR) {
		char order, kind;
		if (field) {
			msg_err("%s: --field %s: the array has no fields (dtype '%s')", f->name, field,
				descr->str);
			return CLS_E_FAIL;
		}
		if (!dtype_parse(descr->str, &order, &kind, &h->itemsize) || h->itemsize == 0) {
			msg_err("%s: dtype '%s' is not understood", f->name, descr->str);
			return CLS_E_FAIL;
		}
		if (!(h->kt = key_of_dtype(descr->str, &why))) {
			msg_err("%s: dtype '%s': %s", f->name, descr->str, why);
			return CLS_E_FAIL;
		}
		h->key_off = 0;
	} else {
		size_t i, off = 0;
		const struct lit *key = NULL;
		h->itemsize = fields_size(descr);
		if (descr->kind != L_SEQ || !h->itemsize) {
			msg_err("%s: dtype %.*s is not understood", f->name, (int)descr->text_len,
				descr->text);
			return CLS_E_FAIL;
		}
		if (!field) {
			msg_err("%s: records of a structured dtype: name the key field with --field",
				f->name);
			return CLS_E_FAIL;
		}
		for (i = 0; i < descr->n && !key; i++) {
			const char *name = field_name(&descr->items[i].items[0]);
			if (name && !strcmp(name, field))
				key = &descr->items[i];
			else
				off += field_size(&descr->items[i]);
		}
		if (!key) {
			msg_err("%s: no field '%s' in dtype %.*s", f->name, field, (int)descr->text_len,
				descr->text);
			return CLS_E_FAIL;
		}
		why = "not a plain number or byte string";
		if (key->n != 2 || key->items[1].kind != L_STR ||
		    !(h->kt = key_of_dtype(key->items[1].str, &why))) {
			msg_err("%s: field '%s' (%.*s): %s", f->name, field, (int)key->text_len, key->text,
				why);
			return CLS_E_FAIL;
		}
		h->key_off = off;
	}
	if ((f->size - *hlen) / h->itemsize != h->records || (f->size - *hlen) % h->itemsize) {
		msg_err("%s: the header says %llu records of %zu bytes, the file holds %zu bytes of data",
			f->name, (unsigned long long)h->records, h->itemsize, f->size - *hlen);
		return CLS_E_FAIL;
	}
	return 0;
}

int npy_open(struct in_set *in, const char *field, struct npy_info *info)
{
	size_t i;

	memset(info, 0, sizeof *info);
	in->bytes = 0;
	for (i = 0; i < in->count; i++) {
		struct in_file *f = &in->files[i];
		struct npy_info h;
		struct lit root;
		size_t hlen;
		unsigned major;
		int rc;

		memset(&h, 0, sizeof h);
		rc = read_header(f, field, &h, &root, &hlen, &major);
		if (rc == 0 && i == 0) {
			const struct lit *descr = dict_get(&root, "descr");
			*info = h;
			info->header_records = h.records;
			info->major = major;
			info->header_len = hlen;
			info->header = malloc(hlen);
			info->descr = malloc(descr->text_len + 1);
			if (!info->header || !info->descr) {
				msg_errno(ENOMEM, "%s", f->name);
				rc = CLS_E_FAIL;
			} else {
				memcpy(info->header, f->data, hlen);
				memcpy(info->descr, descr->text, descr->text_len);
				info->descr[descr->text_len] = '\0';
			}
		} else if (rc == 0) {
			const struct lit *descr = dict_get(&root, "descr");
			if (strlen(info->descr) != descr->text_len ||
			    memcmp(info->descr, descr->text, descr->text_len)) {
				msg_err("%s: dtype %.*s differs from %s's %s", f->name,
					(int)descr->text_len, descr->text, in->files[0].name, info->descr);
				rc = CLS_E_FAIL;
			}
			info->records += h.records;
		}
		lit_free(&root);
		if (rc)
			return CLS_E_FAIL;
		f->data += hlen;
		f->size -= hlen;
		in->bytes += f->size;
	}
	return 0;
}

int npy_write_header(struct out_writer *w, const struct npy_info *info, uint64_t records)
{
	char dict[4096];
	unsigned char head[12];
	size_t len, pre, padded;
	unsigned major = info->major;
	int n;

	if (records == info->header_records)
		return out_write(w, info->header, info->header_len);
	n = snprintf(dict, sizeof dict, "{'descr': %s, 'fortran_order': False, 'shape': (%llu,), }",
		     info->descr, (unsigned long long)records);
	if (n < 0 || (size_t)n >= sizeof dict - 64) {
		msg_err("the dtype of the inputs is too long to write again: %.40s...", info->descr);
		return CLS_E_FAIL;
	}
	len = (size_t)n;
	if (major == 1 && len + 1 + 10 + 63 > 65535)
		major = 2;
	pre = major == 1 ? 10 : 12;
	/* Spaces, then a newline, up to a multiple of 64 bytes in all. */
	padded = (pre + len + 1 + 63) / 64 * 64 - pre;
	memset(dict + len, ' ', padded - len - 1);
	dict[padded - 1] = '\n';
	memcpy(head, MAGIC, 6);
	head[6] = (unsigned char)major;
	head[7] = 0;
	head[8] = (unsigned char)padded;
	head[9] = (unsigned char)(padded >> 8);
	head[10] = (unsigned char)(padded >> 16);
	head[11] = (unsigned char)(padded >> 24);
	n = out_write(w, head, pre);
	return n ? n : out_write(w, dict, padded);
}

void npy_free(struct npy_info *info)
{
	free(info->header);
	free(info->descr);
	memset(info, 0, sizeof *info);
}
