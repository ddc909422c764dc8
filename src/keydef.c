#include "config.h"
#include "keydef.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "keys.h"

static int fail(char *err, size_t errlen, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int fail(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
	return -1;
}

static int append(struct kd_list *l, const struct cls_key *k, bool inherit, char *err,
		  size_t errlen)
{
	if (l->n == l->cap) {
		const size_t cap = l->cap ? 2 * l->cap : 4;
		struct cls_key *keys = realloc(l->keys, cap * sizeof *keys);
		bool *inh;
		if (keys)
			l->keys = keys;
		inh = keys ? realloc(l->inherit, cap * sizeof *inh) : NULL;
		if (!inh)
			return fail(err, errlen, "%s", strerror(ENOMEM));
		l->inherit = inh;
		l->cap = cap;
	}
	l->keys[l->n] = *k;
	l->inherit[l->n] = inherit;
	l->n++;
	return 0;
}

/* A field number at *p, up to 65535; *p moved past it. */
static bool field_number(const char **p, unsigned *field)
{
	char *end;
	unsigned long n;
	if (**p < '0' || **p > '9')
		return false;
	errno = 0;
	n = strtoul(*p, &end, 10);
	if (errno || n > 65535)
		return false;
	*p = end;
	*field = (unsigned)n;
	return true;
}

int kd_add_key(struct kd_list *l, const char *arg, char *err, size_t errlen)
{
	struct cls_key k = { .field = 0 };
	const char *p = arg;
	bool typed = false;

	if (!field_number(&p, &k.field) || (*p && *p != ','))
		return fail(err, errlen, "-K %s: the key is FIELD[,TYPE][,r], FIELD a number from 0 "
			    "(the whole line) to 65535", arg);
	while (*p == ',') {
		const char *word = ++p;
		size_t len = strcspn(word, ",");
		char name[16];
		p = word + len;
		if (len == 1 && *word == 'r' && !k.reverse) {
			k.reverse = true;
			continue;
		}
		if (typed || k.reverse || len == 0 || len >= sizeof name)
			return fail(err, errlen, "-K %s: the key is FIELD[,TYPE][,r]", arg);
		memcpy(name, word, len);
		name[len] = '\0';
		typed = true;
		if (!strcmp(name, "str"))
			continue;
		k.type = key_type_find(name);
		if (!k.type || k.type->size)
			return fail(err, errlen, "-K %s: invalid key type '%s': use u32, i32, f32, u64, "
				    "i64, f64 or str", arg, name);
	}
	l->own_syntax = true;
	return append(l, &k, true, err, errlen);
}

int kd_add_number(struct kd_list *l, const char *field, char *err, size_t errlen)
{
	struct cls_key k = { .field = 0 };
	const char *p = field;

	if (!field_number(&p, &k.field) || *p)
		return fail(err, errlen, "invalid field '%s'", field);
	k.type = key_type_find("f64");
	k.exact = true;
	return append(l, &k, true, err, errlen);
}

int kd_add_sort_key(struct kd_list *l, const char *def, char *err, size_t errlen)
{
	struct cls_key k = { .field = 0 };
	const char *p = def;
	unsigned end;
	bool numeric = false, general = false, decimal = false, human = false, version = false;
	bool blanks = false, fold = false, month = false;
	bool options = false, ended = false;

	if (!field_number(&p, &k.field) || k.field == 0)
		return fail(err, errlen, "-k %s: the key's field is a number from 1 to 65535", def);
	for (;; p++) {
		if (*p == '.')
			return fail(err, errlen, "-k %s: character positions in a field are not taken: "
				    "-F N sorts by the whole field", def);
		if (*p == ',' && p[1] >= '0' && p[1] <= '9') {
			p++;
			if (!field_number(&p, &end) || end < k.field)
				return fail(err, errlen, "-k %s: the key's end is a field from its "
					    "start's to 65535", def);
			k.span = end - k.field;
			ended = true;
			p--;
			continue;
		}
		if (*p == 'n' || *p == 'g' || *p == 'h') {
			numeric = true;
			general = general || *p == 'g';
			decimal = decimal || *p == 'n';
			human = human || *p == 'h';
		}
		else if (*p == 'V')
			version = true;
		else if (*p == 'M')
			month = true;
		else if (*p == 'r')
			k.reverse = true;
		else if (*p == 'b')
			/* The start's; the end's would move a character
			 * position, which clsort does not take. */
			blanks = blanks || !ended;
		else if (*p == 'f')
			fold = true;
		else if (*p)
			return fail(err, errlen, *p == ',' ? "-k %s: the key's end is not a field number" :
				    "-k %s: this sort(1) key option is not taken (b, f, g, h, M, n, r, "
				    "V)",
				    def);
		else
			break;
		options = true;
	}
	if (general && (human || decimal))
		return fail(err, errlen, "-k %s: g reads numbers as floats, n and h as sort -n: one "
			    "of them", def);
	if (version && numeric)
		return fail(err, errlen, "-k %s: V and a number's option (n, g, h) each say how "
			    "the key is compared: one of them", def);
	if (version && fold)
		return fail(err, errlen, "-k %s: f is not taken beside V", def);
	if (month && (numeric || version))
		return fail(err, errlen, "-k %s: M and n, g, h or V each say how the key is "
			    "compared: one of them", def);
	/* From the first field to the end: the whole line. */
	if (!strchr(def, ',') && k.field == 1 && !numeric && !blanks)
		k.field = 0;
	else if (!strchr(def, ','))
		k.span = CLS_SPAN_END;
	/* A number's and a month's leading blanks are skipped anyway, and
	 * their case does not count, but for -h's unit: sort folds the key
	 * before it reads it, and a unit folded (z, e, p...) counts. */
	k.blanks = blanks && !numeric && !month;
	k.fold = fold && (human || !numeric) && !month;
	k.month = month;
	if (numeric) {
		k.type = key_type_find("f64");
		k.lead = general;
		k.exact = !general;
		k.human = human;
	}
	k.version = version;
	l->sort_syntax = true;
	return append(l, &k, !options, err, errlen);
}

int kd_check_ends(struct kd_list *l, bool one_number, bool blank, char sep, char *err,
		  size_t errlen)
{
	size_t i;

	for (i = 0; i < l->n; i++) {
		struct cls_key *const k = &l->keys[i];
		if (!k->span || !(l->n == 1 ? one_number : k->type != NULL))
			continue;
		/* A number that sort -n or -g reads may go on past it. */
		if (!blank && key_float_byte((unsigned char)sep))
			return fail(err, errlen, "-k %u: a number that sort reads from field %u on "
				    "may go on past the separator '%c': -k %u,%u reads the field alone",
				    k->field, k->field, sep, k->field, k->field);
		/* A number of sort -n, -h or -g whose fields -t splits at a
		 * blank may begin past an empty field: sort skips blanks, the
		 * separator among them, before it reads one. */
		if (!blank && (k->exact || k->lead) && (sep == ' ' || sep == '\t'))
			continue;
		k->span = 0;
	}
	return 0;
}

void kd_finish(struct kd_list *l, const struct kd_options *o)
{
	size_t i;
	for (i = 0; i < l->n; i++)
		if (l->inherit[i]) {
			if (o->descending)
				l->keys[i].reverse = true;
			if (o->numeric && !l->keys[i].type) {
				l->keys[i].type = key_type_find("f64");
				l->keys[i].lead = o->general;
				l->keys[i].exact = !o->general;
				l->keys[i].human = o->human;
				/* sort's -k 1 is the whole line; a number, that
				 * at its start. */
				if (l->keys[i].field == 0) {
					l->keys[i].field = 1;
					l->keys[i].span = CLS_SPAN_END;
				}
			}
			if (o->month && !l->keys[i].type)
				l->keys[i].month = true;
			if (o->version && !l->keys[i].type)
				l->keys[i].version = true;
			if (o->fold && (!l->keys[i].type || l->keys[i].human) && !o->month)
				l->keys[i].fold = true;
			if (o->blanks && !l->keys[i].type && !o->month)
				l->keys[i].blanks = true;
		}
}

bool kd_composed(const struct kd_list *l)
{
	size_t i;

	for (i = 0; i < l->n; i++)
		if (l->keys[i].exact || l->keys[i].version || l->keys[i].fold ||
		    l->keys[i].blanks || l->keys[i].month)
			return true;
	return false;
}

void kd_free(struct kd_list *l)
{
	free(l->keys);
	free(l->inherit);
	memset(l, 0, sizeof *l);
}
