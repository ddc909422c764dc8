#include "config.h"
#include "partition.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "sieve.h"
#include "util.h"

/* Ranges aim at this share of a run, so that the sample's error rarely
 * makes one larger than a run (which is still sorted right: in two runs,
 * merged). */
#define FILL 0.85
/* Records sampled per range: the range sizes then vary by about
 * 1/sqrt(SAMPLES) of a range. */
#define SAMPLES 1024

static int spl_cmp(const void *a, const void *b)
{
	const struct part_key *x = a, *y = b;
	if (x->key != y->key)
		return x->key < y->key ? -1 : 1;
	return (x->pos > y->pos) - (x->pos < y->pos);
}

size_t part_count(uint64_t records, size_t cap)
{
	const double per = (double)cap * FILL;
	const uint64_t n = (uint64_t)((double)records / (per < 1 ? 1 : per)) + 1;
	return n < 2 ? 2 : (size_t)n;
}

static uint64_t mix(uint64_t x)
{
	x ^= x >> 30;
	x *= 0xbf58476d1ce4e5b9ull;
	x ^= x >> 27;
	x *= 0x94d049bb133111ebull;
	return x ^ (x >> 31);
}


static int smp_cmp(const void *a, const void *b)
{
	return spl_cmp(&((const struct part_sample *)a)->at, &((const struct part_sample *)b)->at);
}

/* Sample up to want records of the inputs, at pseudo-random places.  A kv
 * line is found through a random byte, so long lines are found more often:
 * each counts for the inverse of its length.  Lines without a key are left
 * out. */
size_t part_sample(const struct enc_format *f, const struct in_set *in, uint64_t base,
		   size_t want, struct part_sample *out)
{
	size_t n = 0, i;

	for (i = 0; in->bytes && i < want; i++) {
		uint64_t at = mix(base + i + 1) % in->bytes, off = base;
		const struct in_file *file = in->files;
		const unsigned char *p, *next;
		size_t len;
		while (at >= file->size) {
			at -= file->size;
			off += file->size;
			file++;
		}
		if (f->fmt == CLS_FMT_BIN) {
			at -= at % f->rec_size;
		} else {
			while (at > 0 && file->data[at - 1] != (unsigned char)f->eol)
				at--;
		}
		p = file->data + at;
		len = part_record_len(f, p, file->data + file->size, &next);
		if (enc_key(f, p, len, &out[n].at.key) == KEY_OK) {
			out[n].at.pos = off + at;
			out[n++].weight = f->fmt == CLS_FMT_BIN ? 1.0 : 1.0 / (double)(len + 1);
		}
	}
	return n;
}

size_t part_splitters(struct part_sample *smp, size_t got, size_t nranges, bool whole_keys,
		      struct part_key *sp)
{
	double weight = 0, acc = 0;
	size_t nsp = 0, i, r;

	qsort(smp, got, sizeof *smp, smp_cmp);
	/* Splitter r closes range r - 1: where the samples' running weight
	 * passes r / nranges of their whole weight. */
	for (i = 0; i < got; i++)
		weight += smp[i].weight;
	for (i = 0, r = 1; i < got && r < nranges; i++) {
		acc += smp[i].weight;
		while (r < nranges && acc >= weight * (double)r / (double)nranges) {
			sp[nsp] = smp[i].at;
			/* A splitter past every position closes its range after
			 * the last record of its key. */
			if (whole_keys)
				sp[nsp].pos = UINT64_MAX;
			if (!whole_keys || nsp == 0 || sp[nsp - 1].key != sp[nsp].key)
				nsp++;
			r++;
		}
	}
	return nsp;
}


int part_scatter(const struct enc_format *f, const struct in_set *in, uint64_t base,
		 const struct part_key *sp, size_t nsp, unsigned char *dst, struct part_set *p)
{
	struct part_sieve s;
	double t0 = now_sec();
	int rc = part_sieve_init(&s, f, in, base, sp, nsp, false);

	memset(p, 0, sizeof *p);
	if (rc)
		return rc;
	msg_info(2, "key ranges: %zu splitters, counted in %.3f s", nsp, now_sec() - t0);
	rc = part_sieve_copy(&s, SIZE_MAX, dst, p);
	part_sieve_free(&s);
	return rc;
}

size_t part_pick(const struct enc_format *f, const struct in_set *in, uint64_t records,
		 size_t nranges, size_t per, bool whole_keys, struct part_key *sp)
{
	const size_t want = nranges * per < records ? nranges * per : (size_t)records;
	struct part_sample *smp = calloc(want ? want : 1, sizeof *smp);
	size_t got, nsp;
	double t0 = now_sec();

	if (!smp) {
		msg_errno(ENOMEM, "cannot cut the input into key ranges");
		return SIZE_MAX;
	}
	got = part_sample(f, in, 0, want, smp);
	nsp = part_splitters(smp, got, nranges, whole_keys, sp);
	msg_info(2, "key ranges: %zu splitters from %zu samples in %.3f s", nsp, got,
		 now_sec() - t0);
	free(smp);
	return nsp;
}

int part_split_n(const struct enc_format *f, const struct in_set *in, uint64_t records,
		 size_t nranges, size_t per, bool whole_keys, unsigned char *dst, struct part_set *p)
{
	struct part_key *sp = calloc(nranges, sizeof *sp);
	const size_t nsp = sp ? part_pick(f, in, records, nranges, per, whole_keys, sp) : SIZE_MAX;
	int rc = CLS_E_FAIL;

	memset(p, 0, sizeof *p);
	if (!sp)
		msg_errno(ENOMEM, "cannot cut the input into key ranges");
	else if (nsp != SIZE_MAX)
		rc = part_scatter(f, in, 0, sp, nsp, dst, p);
	free(sp);
	return rc;
}

int part_split(const struct enc_format *f, const struct in_set *in, uint64_t records, size_t cap,
	       unsigned char *dst, struct part_set *p)
{
	return part_split_n(f, in, records, part_count(records, cap), SAMPLES, false, dst, p);
}
