#include "config.h"
#include "deckey.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static inline bool dec_digit(char c)
{
	return c >= '0' && c <= '9';
}

void dec_read(const char *s, size_t n, struct dec *d)
{
	size_t i = 0, lead;
	bool neg = false, any;

	memset(d, 0, sizeof *d);
	while (i < n && (s[i] == ' ' || s[i] == '\t' || s[i] == '\n'))
		i++;
	if (i < n && s[i] == '-') {
		neg = true;
		i++;
	}
	lead = i;
	while (i < n && s[i] == '0')
		i++;
	any = i > lead;
	d->ip = s + i;
	while (i < n && dec_digit(s[i]))
		i++;
	d->il = (size_t)(s + i - d->ip);
	any = any || d->il;
	if (i < n && s[i] == '.') {
		size_t last;
		d->fp = s + ++i;
		while (i < n && dec_digit(s[i]))
			i++;
		d->fl = (size_t)(s + i - d->fp);
		any = any || d->fl;
		/* Trailing zeros: 1.50 is 1.5. */
		for (last = d->fl; last && d->fp[last - 1] == '0'; last--)
			;
		d->fl = last;
	}
	if (!any)
		return;
	d->end = i;
	if (d->il || d->fl)
		d->sign = neg ? -1 : 1;
}

/* 10^k for k <= 22: exact in a double. */
static const double pow10_exact[23] = {
	1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,  1e8,  1e9,  1e10, 1e11,
	1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22,
};

/* Digit i of d, integer then fraction, as 0 to 9. */
static inline unsigned digit_at(const struct dec *d, size_t i)
{
	return (unsigned)((i < d->il ? d->ip[i] : d->fp[i - d->il]) - '0');
}

/* The zeros d's digits start with: its fraction's first, where its
 * integer part is 0. */
static size_t lead_zeros(const struct dec *d)
{
	size_t zeros = 0;

	if (!d->il)
		while (zeros < d->fl && d->fp[zeros] == '0')
			zeros++;
	return zeros;
}

/* Significant digits handed to strtod, at the most.  The double of a
 * number cut there is never more than that of a greater number (the cut
 * number is at least any number of 40 digits below the whole one), so
 * the doubles of all numbers still ascend with them. */
#define DOUBLE_DIGITS 40

/* The double of a nonzero number of many digits, through strtod. */
static double dec_strtod(const struct dec *d)
{
	char buf[DOUBLE_DIGITS + 32], *p = buf;
	const size_t skip = lead_zeros(d), n = d->il + d->fl;
	size_t i;

	/* 0.DIGITS e EXP: the integer digits, then the fraction's; past a
	 * zero integer part, the fraction's leading zeros go to EXP. */
	if (d->sign < 0)
		*p++ = '-';
	*p++ = '0';
	*p++ = '.';
	for (i = skip; i < n && i < skip + DOUBLE_DIGITS; i++)
		*p++ = (char)('0' + digit_at(d, i));
	snprintf(p, sizeof buf - (size_t)(p - buf), "e%lld",
		 d->il ? (long long)d->il : -(long long)skip);
	return strtod(buf, NULL);
}

/* Where a number lies against a double v: v written out in full (a
 * double's decimal expansion ends within 1074 places), read back and
 * compared. */
static int dec_against(const struct dec *d, double v)
{
	char buf[1500];
	struct dec e;

	if (isinf(v))
		return v > 0 ? -1 : 1;
	snprintf(buf, sizeof buf, "%.1080f", v);
	dec_read(buf, strlen(buf), &e);
	return dec_cmp(d, &e);
}

/* Where a number lies against the shortest of v's 15, 16 and 17 digits
 * that reads back as v (0 < |v| < 2^53), written out without exponent. */
static int dec_against_short(const struct dec *d, double v)
{
	char e[40], buf[400], *p = buf;
	const char *q;
	int digits, exp, i, n = 0;
	struct dec c;

	for (digits = 15;; digits++) {
		snprintf(e, sizeof e, "%.*e", digits - 1, v);
		if (digits == 17 || strtod(e, NULL) == v)
			break;
	}
	/* [-]D.DDDDe[+-]XX: the digits, then where the point goes. */
	q = e;
	if (*q == '-')
		*p++ = *q++;
	exp = atoi(strchr(q, 'e') + 1);
	if (exp < 0) {
		*p++ = '0';
		*p++ = '.';
		for (i = 1; i < -exp; i++)
			*p++ = '0';
	}
	for (; *q != 'e'; q++) {
		if (*q == '.')
			continue;
		*p++ = *q;
		if (exp >= 0 && n++ == exp)
			*p++ = '.';
	}
	for (; exp >= 0 && n <= exp; n++)
		*p++ = '0';
	dec_read(buf, (size_t)(p - buf), &c);
	return dec_cmp(d, &c);
}

/* Significant digits a double tells apart: two numbers of 15 digits at
 * the most never have the same nearest double (DBL_DIG). */
#define SHORT_DIGITS 15

/* d's significant digits (an integer's trailing zeros counted). */
static size_t dec_significant(const struct dec *d)
{
	return d->il + d->fl - lead_zeros(d);
}

/* 2^53: integers up to it are doubles; at and above it, every double is
 * an integer. */
#define EXACT_INTS 9007199254740992.0

double dec_double(const struct dec *d, int *rel)
{
	const bool few = d->il + d->fl <= 19;
	uint64_t m = 0;
	double v;
	size_t i;

	*rel = 0;
	if (!d->sign)
		return 0;
	for (i = 0; few && i < d->il + d->fl; i++)
		m = m * 10 + digit_at(d, i);
	if (few && d->fl == 0) {
		/* An integer of 64 bits, converted, rounded once: below 2^53
		 * its double; above, compared with the integer it holds. */
		v = (double)m;
		if (v >= 18446744073709551616.0)
			*rel = -1;
		else if (v >= EXACT_INTS)
			*rel = (m > (uint64_t)v) - (m < (uint64_t)v);
		if (d->sign < 0) {
			v = -v;
			*rel = -*rel;
		}
		return v;
	}
	if (few && m < (uint64_t)EXACT_INTS && d->fl < 23) {
		/* M / 10^FL, both exact, rounded once. */
		v = (double)m / pow10_exact[d->fl] * d->sign;
		if (dec_significant(d) > SHORT_DIGITS)
			*rel = dec_against_short(d, v);
		return v;
	}
	v = dec_strtod(d);
	*rel = fabs(v) < EXACT_INTS ? dec_against_short(d, v) : dec_against(d, v);
	return v;
}

/* Digits two to a byte, each as 1 to 10, the second 0 after the last
 * digit, and a 0 byte after an even count: in the same order as the
 * digits, the shorter of two that agree first. */
static void put_digits(struct key_sink *s, const struct dec *d, unsigned char inv)
{
	const size_t n = d->il + d->fl;
	size_t i;

	for (i = 0;; i += 2) {
		const unsigned a = i < n ? digit_at(d, i) + 1 : 0;
		const unsigned b = i + 1 < n ? digit_at(d, i + 1) + 1 : 0;
		sink_put(s, (unsigned char)(a * 11 + b) ^ inv);
		if (i + 1 >= n)
			break;
	}
}

/* The layout: where the number lies against the one number its double
 * stands for (dec_double's rel: 1 below, 2 the same, 3 above); below or
 * above, the integer digits' count (a byte where below 255, else 255 and
 * 8 bytes, big-endian) and the digits (put_digits), these inverted for a
 * negative number, whose greater magnitude orders first (the numbers of
 * one double share their sign).  Numbers of up to 15 digits, and integers
 * below 2^53, are the numbers their doubles stand for: one byte. */
void dec_put(struct key_sink *s, const struct dec *d, int rel, unsigned char inv)
{
	const unsigned char neg = d->sign < 0 ? 0xff : 0;
	int b;

	sink_put(s, (unsigned char)(rel + 2) ^ inv);
	if (!rel)
		return;
	if (d->il < 255) {
		sink_put(s, (unsigned char)d->il ^ neg ^ inv);
	} else {
		sink_put(s, 255 ^ neg ^ inv);
		for (b = 7; b >= 0; b--)
			sink_put(s, (unsigned char)((uint64_t)d->il >> 8 * b) ^ neg ^ inv);
	}
	put_digits(s, d, neg ^ inv);
}

/* The magnitudes of a and b, both nonzero. */
static int mag_cmp(const struct dec *a, const struct dec *b)
{
	const size_t an = a->il + a->fl, bn = b->il + b->fl;
	size_t i;

	if (a->il != b->il)
		return a->il < b->il ? -1 : 1;
	for (i = 0; i < an && i < bn; i++) {
		const unsigned x = digit_at(a, i), y = digit_at(b, i);
		if (x != y)
			return x < y ? -1 : 1;
	}
	return (an > bn) - (an < bn);
}

int dec_cmp(const struct dec *a, const struct dec *b)
{
	if (a->sign != b->sign)
		return a->sign < b->sign ? -1 : 1;
	if (!a->sign)
		return 0;
	return a->sign * mag_cmp(a, b);
}
