/* sort -V's order of strings (GNU coreutils 9.1's filevercmp): a key's
 * bytes made to compare as it does, and the comparison itself. */
#include "config.h"
#include "verkey.h"

static inline bool ascii_digit(unsigned char c)
{
	return (unsigned)(c - '0') <= 9;
}

static inline bool ascii_letter(unsigned char c)
{
	return (unsigned)((c | 0x20) - 'a') < 26;
}

/* A byte's place in sort -V's order of the text between numbers, from 0,
 * two bytes wide: '~' before the text's end (VER_END), the end before
 * letters, letters before any other byte. */
#define VER_END 1u
static inline unsigned ver_order(unsigned char c)
{
	return c == '~' ? 0 : ascii_letter(c) ? c + 1u : c + 257u;
}

/* s[0..n) as bytes that compare as sort -V compares such strings, where
 * no file suffix decides (gnulib's verrevcmp): each run of bytes other
 * than digits as their orders, then the end's; each run of digits as the
 * count of its digits past leading zeros, in four bytes, then those
 * digits; the end's order once more at the string's end. */
static void ver_run(const unsigned char *s, size_t n, struct key_sink *o, unsigned char inv,
		    bool escape)
{
	size_t i = 0, z, d;
	unsigned b;

	do {
		for (; i < n && !ascii_digit(s[i]); i++) {
			sink_put_esc(o, (unsigned char)(ver_order(s[i]) >> 8), inv, escape);
			sink_put_esc(o, (unsigned char)ver_order(s[i]), inv, escape);
		}
		sink_put_esc(o, 0, inv, escape);
		sink_put_esc(o, VER_END, inv, escape);
		for (z = i; z < n && s[z] == '0'; z++)
			;
		for (d = z; d < n && ascii_digit(s[d]); d++)
			;
		for (b = 4; b-- > 0;)
			sink_put_esc(o, (unsigned char)((d - z) >> 8 * b), inv, escape);
		for (; z < d; z++)
			sink_put_esc(o, s[z], inv, escape);
		i = d;
	} while (i < n);
	sink_put_esc(o, 0, inv, escape);
	sink_put_esc(o, VER_END, inv, escape);
}

/* The length of s[0..n) without its file suffixes, as sort -V cuts them
 * (GNU coreutils 9.1): each a '.', a letter or '~', then letters, digits
 * and '~'s, at the end, the first at any place, the string's first byte
 * too (".tar.gz" is all suffix). */
static size_t ver_prefix(const unsigned char *s, size_t n)
{
	size_t i = 0, prefix;

	for (;;) {
		prefix = i;
		while (i + 1 < n && s[i] == '.' && (ascii_letter(s[i + 1]) || s[i + 1] == '~'))
			for (i += 2; i < n && (ascii_letter(s[i]) || ascii_digit(s[i]) || s[i] == '~');
			     i++)
				;
		if (i >= n)
			return prefix;
		i++;
	}
}

/* Where s[0..n) goes before all else: the empty string first, then ".",
 * "..", other strings that start with '.', the rest. */
static int ver_rank(const unsigned char *s, size_t n)
{
	return n == 0 ? 0 : s[0] != '.' ? 4 : n == 1 ? 1 : n == 2 && s[1] == '.' ? 2 : 3;
}

/* The rank first; among strings of the last two, the string without its
 * file suffixes, then whole (ver_run). */
void ver_key(const unsigned char *s, size_t n, struct key_sink *o, unsigned char inv, bool escape)
{
	const int rank = ver_rank(s, n);

	sink_put_esc(o, (unsigned char)rank, inv, escape);
	if (rank < 3)
		return;
	ver_run(s, ver_prefix(s, n), o, inv, escape);
	ver_run(s, n, o, inv, escape);
}

/* gnulib's verrevcmp: sort -V's comparison where no file suffix decides,
 * as ver_run's bytes compare. */
static int ver_revcmp(const unsigned char *a, size_t an, const unsigned char *b, size_t bn)
{
	size_t i = 0, j = 0;

	while (i < an || j < bn) {
		int first = 0;
		while ((i < an && !ascii_digit(a[i])) || (j < bn && !ascii_digit(b[j]))) {
			const int x = i < an && !ascii_digit(a[i]) ? (int)ver_order(a[i]) : (int)VER_END;
			const int y = j < bn && !ascii_digit(b[j]) ? (int)ver_order(b[j]) : (int)VER_END;
			if (x != y)
				return x - y;
			i++;
			j++;
		}
		while (i < an && a[i] == '0')
			i++;
		while (j < bn && b[j] == '0')
			j++;
		for (; i < an && j < bn && ascii_digit(a[i]) && ascii_digit(b[j]); i++, j++)
			if (!first)
				first = a[i] - b[j];
		if (i < an && ascii_digit(a[i]))
			return 1;
		if (j < bn && ascii_digit(b[j]))
			return -1;
		if (first)
			return first;
	}
	return 0;
}

/* The ranks, then the strings without their suffixes, then whole. */
int ver_cmp(const unsigned char *a, size_t an, const unsigned char *b, size_t bn)
{
	const int ra = ver_rank(a, an), rb = ver_rank(b, bn);
	const size_t pa = ver_prefix(a, an), pb = ver_prefix(b, bn);
	int c;

	if (ra != rb || ra < 3)
		return ra - rb;
	c = ver_revcmp(a, pa, b, pb);
	return c || (pa == an && pb == bn) ? c : ver_revcmp(a, an, b, bn);
}
